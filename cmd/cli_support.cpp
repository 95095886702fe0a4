#include "cmd/cli_support.h"

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "pmu/event_spec.h"

namespace tprof {

int ReportError(const std::string& command, const std::string& message) {
  std::cerr << "tprof " << command << ": " << message << '\n';
  return kExitRuntimeError;
}

int ReportUsageError(const CLI::App& app, const CLI::ParseError& error) {
  std::string name = app.get_parent() ? "tprof " + app.get_name() : app.get_name();
  std::string message = error.what();
  if (const auto* extras = dynamic_cast<const CLI::ExtrasError*>(&error)) {
    (void)extras;
    // CLI11 says "The following arguments were not expected: --foo"; name the option and
    // suggest the closest real one.
    std::string unexpected = message.substr(message.find(':') + 1);
    while (!unexpected.empty() && unexpected.front() == ' ') unexpected.erase(0, 1);
    std::string word = unexpected.substr(0, unexpected.find(' '));
    std::vector<std::string> known;
    for (const CLI::Option* option : app.get_options()) {
      for (const std::string& l : option->get_lnames()) known.push_back("--" + l);
      for (const std::string& s : option->get_snames()) known.push_back("-" + s);
    }
    std::string hint = ClosestMatch(word.substr(0, word.find('=')), known);
    message = "unknown option '" + word + "'";
    if (!hint.empty()) message += "; did you mean '" + hint + "'?";
  }
  std::cerr << name << ": " << message << " (see '" << name << " --help')\n";
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
