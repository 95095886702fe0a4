#include "cmd/cli_support.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "pmu/event_spec.h"

namespace tprof {

int ReportError(const std::string& command, const std::string& message) {
  std::cerr << "tprof " << command << ": " << message << '\n';
  return kExitRuntimeError;
}

namespace {

std::string CommandName(const CLI::App& app) {
  return app.get_parent() ? "tprof " + app.get_name() : app.get_name();
}

// "unknown option '--foo'; did you mean '--for'?"
std::string UnknownOptionMessage(const CLI::App& app, const std::string& word) {
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

// An argument that reads as an option: "-x", "--foo", not "--" (which ends them) or "-".
bool IsOptionWord(const std::string& word) {
  return word.size() > 1 && word[0] == '-' && word != "--";
}

}  // namespace

int ReportUsageError(const CLI::App& app, const CLI::ParseError& error) {
  const std::string name = CommandName(app);
  std::string message = error.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&error)) {
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
