#include "cmd/cli_support.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "pmu/event_spec.h"

namespace tprof {

int UsageError(const std::string& command, const std::string& message) {
  std::cerr << "tprof " << command << ": " << message << " (see 'tprof " << command
            << " --help')\n";
  return kExitUsage;
}

int ExitStatusOf(const SourceSummary& summary) {
  return summary.complete ? kExitOk : kExitIncomplete;
}

void WarnAboutInput(const std::string& command, const std::string& input,
                    const std::string& warning) {
  if (!warning.empty())
    std::cerr << "tprof " << command << ": warning: " << input << ": " << warning << '\n';
}

void Note(const std::string& command, const std::string& note) {
  std::cerr << "tprof " << command << ": note: " << note << '\n';
}

int ReportError(const std::string& command, const std::string& message) {
  std::cerr << "tprof " << command << ": " << message << '\n';
  return kExitRuntimeError;
}

int ReportError(const std::string& command, const Error& error) {
  ReportError(command, error.message());
  return error.kind() == ErrorKind::kBadRequest ? kExitUsage : kExitRuntimeError;
}

void AddSymbolOptions(CLI::App& app, std::string& symfs, std::vector<std::string>& binaries) {
  app.add_option("--symfs", symfs, "Look for recorded binaries under this directory");
  app.add_option("--binary", binaries,
                 "A local copy of a recorded binary (matched by build-id, else by name); "
                 "repeatable")
      ->allow_extra_args(false);
}

void AddProfileInputOptions(CLI::App& app, std::string& input) {
  CLI::Option* named =
      app.add_option("-i,--input", input, "Profile to read (default profile.tprof)");
  app.add_option("input_file", input, "Profile to read (same as -i)")
      ->excludes(named)
      ->check(CLI::Validator(
          [&app](std::string& value) {
            return value.size() > 1 && value[0] == '-' ? UnknownOptionMessage(app, value)
                                                       : std::string();
          },
          "FILE"));
}

void AddTimeRangeOption(CLI::App& app, std::string& time) {
  app.add_option("--time", time,
                 "START,END: only samples from START to END seconds after the profile start "
                 "(+START,+END the same; either may be empty), or A%-B%: from A to B percent "
                 "of the profile's length; a range without a sample exits 2");
}

void AddMachineFormatOptions(CLI::App& app, bool& json, bool* csv, const std::string& what) {
  const std::string written = what.empty() ? " instead of text" : " (" + what + ")";
  auto* json_flag = app.add_flag("--json", json, "Write JSON" + written);
  if (csv) app.add_flag("--csv", *csv, "Write CSV" + written)->excludes(json_flag);
}

int ExitStatusOf(const std::string& command, const Result<ViewOutcome>& outcome) {
  if (!outcome.ok()) return ReportError(command, outcome.error());
  return outcome->complete ? kExitOk : kExitIncomplete;
}

ViewMessages CommandMessages(const std::string& command) {
  ViewMessages messages;
  messages.note = [command](const std::string& note) { Note(command, note); };
  messages.input_warning = [command](const std::string& input, const std::string& warning) {
    WarnAboutInput(command, input, warning);
  };
  messages.wrote = [command](const std::string& what) {
    std::cerr << "tprof " << command << ": " << what << '\n';
  };
  messages.summary = [command](const std::string& what) {
    std::cerr << "[ tprof " << command << ": " << what << " ]\n";
  };
  messages.notice = messages.wrote;
  messages.symbol_note = [](const std::string& note) {
    std::cerr << "tprof: note: " << note << '\n';
  };
  return messages;
}

namespace {

std::string CommandName(const CLI::App& app) {
  return app.get_parent() ? "tprof " + app.get_name() : app.get_name();
}

// perf's options that tprof spells otherwise or has no need of: what to use instead, said where
// a closest-spelling guess ('did you mean -h?') would mislead.
struct PerfHabit {
  const char* command;
  const char* options[2];  // perf's spellings of one option; the second may be null
  const char* instead;
};
constexpr PerfHabit kPerfHabits[] = {
    {"report",
     {"-g"},
     "tprof report shows callers with --children (totals), --callers FUNC and "
     "--callees FUNC; whole call graphs with --flamegraph OUT.html or --folded"},
    {"report",
     {"--call-graph"},
     "tprof report shows callers with --children (totals), --callers "
     "FUNC and --callees FUNC; whole call graphs with --flamegraph"},
    {"report", {"-G"}, "--folded or --flamegraph OUT.html --icicle show callers above callees"},
    {"report", {"--children-only"}, "--children orders the rows by their totals"},
    {"report",
     {"--tui", "--gtk"},
     "tprof report prints text; --flamegraph OUT.html is the interactive view"},
    {"report",
     {"-k", "--vmlinux"},
     "tprof reads the kernel's symbols from the profile or /proc/kallsyms; "
     "--symfs DIR for another machine's files"},
    {"report", {"-S", "--symbols"}, "--symbol REGEX"},
    {"report", {"-d", "--dsos"}, "--dso MODULE"},
    {"report", {"-c", "--comms"}, "--comm NAME"},
    {"report", {"--pids"}, "--pid PID"},
    {"report", {"--tids"}, "--tid TID"},
    {"report",
     {"-F", "--fields"},
     "--sort KEYS chooses the key columns; every event's columns are shown"},
    {"report", {"--header"}, "the header is always printed, as '#' lines"},
    {"report", {"-T"}, "--sort tid"},
    {"report",
     {"--percentage"},
     "shares are always of every sample in the time range (perf's "
     "'absolute'); filters hide rows"},
    {"record", {"-z", "--compression-level"}, "tprof profiles are always zstd-compressed"},
    {"record", {"--switch-output"}, "record for a time with --duration SECONDS"},
    {"record", {"-C"}, "-a records every CPU; tprof has no per-CPU selection"},
    {"record", {"--no-inherit"}, "tprof always follows the command's threads and children"},
    {"record", {"-s"}, "tprof keeps per-thread data in every sample; report --sort tid shows it"},
    {"record", {"--user-regs"}, "--call-graph dwarf records the registers it needs"},
    {"import", {"-f", "--force"}, "tprof imports files of any owner"},
    {"diff",
     {"-c", "--compute"},
     "tprof diff shows old, new and deltas per function; --normalize chooses the "
     "scaling"},
};

}  // namespace

std::string UnknownOptionMessage(const CLI::App& app, const std::string& word) {
  const std::string option = word.substr(0, word.find('='));
  for (const PerfHabit& habit : kPerfHabits)
    for (const char* spelling : habit.options)
      if (spelling && app.get_name() == habit.command && option == spelling)
        return "unknown option '" + word + "' (perf's): " + habit.instead;
  std::vector<std::string> known;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& l : option->get_lnames()) known.push_back("--" + l);
    for (const std::string& s : option->get_snames()) known.push_back("-" + s);
  }
  std::string hint = ClosestMatch(word.substr(0, word.find('=')), known);
  std::string message = "unknown option '" + word + "'";
  if (!hint.empty()) message += "; did you mean '" + hint + "'?";
  return message;
}

namespace {

// An argument that reads as an option: "-x", "--foo", not "--" (which ends them) or "-".
bool IsOptionWord(const std::string& word) {
  return word.size() > 1 && word[0] == '-' && word != "--";
}

}  // namespace

namespace {
class FixedUsageFormatter : public CLI::Formatter {
 public:
  explicit FixedUsageFormatter(std::string usage) : usage_(std::move(usage)) {}
  std::string make_usage(const CLI::App*, std::string) const override {
    return "Usage: " + usage_ + "\n";
  }

 private:
  std::string usage_;
};
}  // namespace

namespace {
// CLI11 names a subcommand in its usage line by the path it parsed, which `tprof help report`
// never parsed ("Usage: report ..."): the line names the whole command however help was asked.
class WholeCommandFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override {
    if (app->get_parent() && name.rfind("tprof ", 0) != 0) name = "tprof " + app->get_name();
    return CLI::Formatter::make_usage(app, name);
  }
};
}  // namespace

void NameWholeCommandInUsage(CLI::App& app) {
  app.formatter(std::make_shared<WholeCommandFormatter>());
}

void SetUsageLine(CLI::App& app, std::string usage) {
  app.formatter(std::make_shared<FixedUsageFormatter>(std::move(usage)));
}

int ReportUsageError(const CLI::App& app, const CLI::ParseError& error) {
  const std::string name = CommandName(app);
  std::string message = error.what();
  // CLI11 takes an unknown short option ("-g") for a positional file, and then complains about
  // the file: name the option instead.
  std::string option_as_file;
  for (const CLI::Option* option : app.get_options())
    if (option->get_positional())
      for (const std::string& value : option->results())
        if (option_as_file.empty() && IsOptionWord(value)) option_as_file = value;
  // An unknown option with a value ("--vmlinux FILE"): the value went to the file, and the
  // option is among the arguments CLI11 did not know.
  if (option_as_file.empty() && !dynamic_cast<const CLI::ExtrasError*>(&error))
    for (const std::string& word : app.remaining())
      if (option_as_file.empty() && IsOptionWord(word)) option_as_file = word;
  if (!option_as_file.empty()) {
    message = UnknownOptionMessage(app, option_as_file);
  } else if (dynamic_cast<const CLI::ExtrasError*>(&error)) {
    // CLI11 says "The following arguments were not expected: --foo"; name the option and
    // suggest the closest real one.
    std::string unexpected = message.substr(message.find(':') + 1);
    while (!unexpected.empty() && unexpected.front() == ' ') unexpected.erase(0, 1);
    unexpected = unexpected.substr(0, unexpected.find(' '));
    // A subcommand that takes a command: CLI11 blames the program after "--" when a misspelt
    // option of tprof's came first ("--freqq 99 -- true" is not "unknown option 'true'").
    const std::vector<std::string> rest = app.remaining();
    if (app.get_prefix_command() && !rest.empty() && IsOptionWord(rest.front()))
      unexpected = rest.front();
    message = UnknownOptionMessage(app, unexpected);
  }
  std::cerr << name << ": " << message << " (see '" << name << " --help')\n";
  return kExitUsage;
}

int CheckArgumentsBeforeCommand(const CLI::App& app, const std::vector<std::string>& command) {
  // CLI11 puts what follows "--" into the command and leaves in remaining() the arguments it
  // did not know: "--" itself, or an unknown option and what followed it. Anything before the
  // "--" there is a misspelt option of tprof's (--bogus, --freqq 99), not part of the program
  // to run; the program's own options after a command given without "--" cannot be told from
  // tprof's, so they are refused too rather than dropped or reordered.
  const std::vector<std::string> rest = app.remaining();
  if (rest.empty() || rest.front() == "--") return kExitOk;
  const bool after_program =
      !command.empty() && std::find(rest.begin(), rest.end(), "--") == rest.end();
  const std::string name = CommandName(app);
  std::cerr << name << ": " << UnknownOptionMessage(app, rest.front())
            << (after_program ? "; a command's own options go after '--'" : "") << " (see '" << name
            << " --help')\n";
  return kExitUsage;
}

Result<std::vector<pid_t>> ParseIdList(const std::string& text, const char* what) {
  std::vector<pid_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v <= 0 || v > 0x7fffffff)
      return Error(std::string("bad ") + what + " '" + item + "'");
    ids.push_back(static_cast<pid_t>(v));
  }
  if (ids.empty()) return Error(std::string("no ") + what + " given");
  return ids;
}

}  // namespace tprof
