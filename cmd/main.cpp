// tprof: one binary, one thin file per subcommand in cmd/.
#ifdef TPROF_MIMALLOC
#include <mimalloc.h>
#endif

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

#include "cmd/cli_support.h"
#include "cmd/help_pages.h"
#include "core/base/fatal_exit.h"
#include "core/base/version.h"
#include "core/metrics/metric_table.h"
#include "pmu/event_spec.h"

namespace {

constexpr const char* kExitCodesHelp =
    "Exit status: 0 success; 1 runtime error (bad input, I/O, kernel refused); 2 usage error;\n"
    "3 a `tprof diff` regression gate tripped; 4 an input was incomplete (cut short or\n"
    "damaged): `tprof report`, `stream` or `diff --stream` showed what it could read, a\n"
    "`tprof diff` gate did not judge (--allow-incomplete). `tprof record` exits with the\n"
    "workload's own status when the workload fails and the recording succeeded.";

constexpr const char* kCommonExitStatus =
    "Exit status: 0 success; 1 runtime error (bad input, I/O, kernel refused); 2 usage error";

// The subcommands, in the order help lists them, each with how its help's exit-status line ends
// (the statuses it can end with beyond the common ones, no other command's).
struct CommandEntry {
  std::unique_ptr<tprof::Subcommand> (*make)();
  const char* exit_status_end;
};
constexpr CommandEntry kCommands[] = {
    {tprof::MakeRecordCommand,
     ".\nWhen the recording succeeded but the workload failed, the workload's own status."},
    {tprof::MakeReportCommand,
     ";\n4 the input was incomplete (cut short or damaged): what could be read is shown, and a\n"
     "line says what was lost."},
    {tprof::MakeImportCommand, "."},
    {tprof::MakeDiffCommand,
     ";\n3 a regression gate (--fail-if) tripped; 4 a gate did not judge because an input is\n"
     "incomplete (cut short, .partial, no samples; --allow-incomplete judges it anyway), or\n"
     "--stream compared an input read only in part."},
    {tprof::MakeStreamCommand,
     ";\n4 an input was incomplete (cut short or damaged): what could be read is shown, and a\n"
     "line says what was lost."},
    {tprof::MakeTopdownCommand, "."},
    {tprof::MakeListCommand, "."},
};

// What `tprof`, `tprof --help` and `tprof help` print: a screen (CLI11's own help of the whole
// program lists every command's full description, 176 lines). Each command's options and
// examples are its own help: tprof help CMD, or CMD --help.
std::string ShortHelp(const std::vector<std::pair<CLI::App*, tprof::Subcommand*>>& commands) {
  std::string text =
      "tprof: a hardware-counter-aware CPU profiler\n"
      "\n"
      "Usage: tprof COMMAND [OPTIONS] [ARGS]\n"
      "       tprof help COMMAND   (or tprof COMMAND --help): its options and examples\n"
      "\n"
      "Commands:\n";
  for (const auto& [sub, command] : commands) {
    std::string name = command->name();
    name.resize(std::max<size_t>(name.size(), 9), ' ');
    text += "  " + name + command->summary() + "\n";
  }
  text +=
      "  help     Show help for a command: tprof help CMD (--man: as a man page)\n"
      "\n"
      "Examples:\n"
      "  tprof record -g -o prof.tprof -- ./prog args    sample ./prog and its threads, with "
      "stacks\n"
      "  tprof report -i prof.tprof                      functions by share, metrics with their "
      "intervals\n"
      "  tprof report -i prof.tprof --flamegraph f.html  an interactive flame graph\n"
      "  tprof diff old.tprof new.tprof --fail-if 'func(*) > +5%'   what changed; a gate for CI\n"
      "\n"
      "Options: -h,--help (this), --version\n"
      "\n";
  return text + kExitCodesHelp + "\n";
}

// The exit status once what was written on standard output has all been written: a report cut
// short by a full disk must not end in success.
int EndOfOutput(int status) {
  std::cout.flush();
  if (std::cout) return status;
  std::cerr << "tprof: cannot write standard output: what was written is incomplete\n";
  return status == tprof::kExitOk ? tprof::kExitRuntimeError : status;
}

// The allocator's settings for `command` (mimalloc's, where linked in).
void ConfigureAllocator(std::string_view command) {
#ifdef TPROF_MIMALLOC
  // mimalloc does not call the new handler (it sees none and aborts): it calls its own. It calls
  // it for a C library's malloc that fails too, which would have had NULL and perhaps gone on:
  // with memory that short the command is better ended, in one line.
  mi_register_error(
      [](int error, void*) {
        if (error == ENOMEM) tprof::ExitOutOfMemory();
      },
      nullptr);
  // The analysis commands allocate hundreds of MiB of small objects in a few hundred ms: with
  // 2 MiB pages (transparent huge pages, where the kernel offers them on madvise) they take a
  // fraction of the page faults, which were a tenth of a large report's time. record's
  // footprint sits beside the workload's instead: it hands freed memory back at once, which
  // takes a fifth off the peak of its symbol step.
  if (command == "record")
    mi_option_set(mi_option_decommit_delay, 0);
  else
    mi_option_enable(mi_option_large_os_pages);
#endif
  (void)command;
}

// Whether `word` names a command (or help); if not, says so with the closest one.
bool IsCommand(const std::string& word,
               const std::vector<std::unique_ptr<tprof::Subcommand>>& commands) {
  using namespace tprof;
  std::vector<std::string> names{"help"};
  for (auto& command : commands) names.push_back(command->name());
  if (std::find(names.begin(), names.end(), word) != names.end()) return true;
  std::string hint = ClosestMatch(word, names);
  std::cerr << "tprof: unknown command '" << word << "'"
            << (hint.empty() ? "" : "; did you mean '" + hint + "'?") << " (see 'tprof --help')\n";
  return false;
}

// tprof help [CMD] [--man] [--completion SHELL].
int RunHelp(CLI::App& app, const std::vector<std::pair<CLI::App*, tprof::Subcommand*>>& subcommands,
            const std::string& help_topic, bool man_page, const std::string& completion_shell) {
  using namespace tprof;
  std::vector<CommandHelp> pages{
      {"", "a hardware-counter-aware CPU profiler", &app, ShortHelp(subcommands)}};
  for (auto& [sub, command] : subcommands)
    pages.push_back({command->name(), command->summary(), sub, ""});
  if (!completion_shell.empty()) {
    std::vector<std::string> cpus;
    for (const MetricTable& t : BuiltinMetricTables()) cpus.push_back(t.name);
    std::cout << BashCompletion(pages, KnownEventNames(), cpus);
    return kExitOk;
  }
  if (man_page) {
    for (const CommandHelp& page : pages)
      if (page.name == help_topic) {
        std::cout << ManPage(page, pages);
        return kExitOk;
      }
    return UsageError("help", "unknown command '" + help_topic + "'");
  }
  if (help_topic.empty()) {
    std::cout << ShortHelp(subcommands);
    return kExitOk;
  }
  for (auto& [sub, command] : subcommands)
    if (help_topic == command->name()) {
      std::cout << sub->help();
      return kExitOk;
    }
  return UsageError("help", "unknown command '" + help_topic + "'");
}

int Main(int argc, char** argv) {
  using namespace tprof;
  InstallFatalExits();
  static_assert(kFatalExitStatus == kExitRuntimeError);
  ConfigureAllocator(argc > 1 ? argv[1] : "");
  CLI::App app("tprof: a hardware-counter-aware CPU profiler", "tprof");
  app.set_version_flag("--version", std::string("tprof ") + kVersion);
  app.footer(kExitCodesHelp);
  app.require_subcommand(0, 1);

  std::vector<std::unique_ptr<Subcommand>> commands;
  std::vector<std::pair<CLI::App*, Subcommand*>> subcommands;
  for (const CommandEntry& entry : kCommands) {
    auto& command = commands.emplace_back(entry.make());
    CLI::App* sub = app.add_subcommand(command->name(), command->summary());
    NameWholeCommandInUsage(*sub);  // before Setup, which may set a usage line of its own
    command->Setup(*sub);
    sub->footer(std::string(kCommonExitStatus) + entry.exit_status_end);
    subcommands.push_back({sub, command.get()});
  }
  std::string help_topic, completion_shell;
  bool man_page = false;
  CLI::App* help = app.add_subcommand("help", "Show help for a command: tprof help CMD");
  help->add_option("command", help_topic, "The command to explain");
  help->add_flag("--man", man_page, "The help as a man page (tprof.1, or tprof-CMD.1)");
  help->add_option("--completion", completion_shell, "A completion script for SHELL (bash)")
      ->check(CLI::IsMember({"bash"}));

  // An unknown first word is a misspelt command: say so, with the closest one.
  if (argc > 1 && argv[1][0] != '-' && !IsCommand(argv[1], commands)) return kExitUsage;

  CLI::App* failing = &app;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    if (app.get_subcommands().empty()) {  // tprof --help; a command's --help is its own
      std::cout << ShortHelp(subcommands);
      return kExitOk;
    }
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    for (auto& [sub, command] : subcommands)
      if (sub->parsed()) failing = sub;
    if (dynamic_cast<const CLI::CallForHelp*>(&e)) return failing->exit(e);
    return ReportUsageError(*failing, e);
  }

  if (help->parsed()) return RunHelp(app, subcommands, help_topic, man_page, completion_shell);
  for (auto& [sub, command] : subcommands)
    if (sub->parsed()) return command->Run();
  std::cout << ShortHelp(subcommands);
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) { return EndOfOutput(Main(argc, argv)); }
