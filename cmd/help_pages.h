// Man pages and bash completion, made from the same CLI11 definitions as --help, so that the
// three never disagree: `tprof help --man [CMD]` and `tprof help --completion bash` print them,
// and the build writes them for `cmake --install` (CMakeLists.txt).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace tprof {

struct CommandHelp {
  std::string name;     // "record"; empty for tprof itself
  std::string summary;  // one line
  const CLI::App* app = nullptr;
  std::string text;  // the help as printed, when not the app's own (tprof's: a screen)
};

// A man(7) page: NAME, SYNOPSIS, DESCRIPTION (the --help text, verbatim: `text`, else the app's
// help), SEE ALSO.
std::string ManPage(const CommandHelp& command, const std::vector<CommandHelp>& all);

// A bash completion script: subcommands, each one's options, event names after -e/--event and
// CPU names after --cpu, files elsewhere.
std::string BashCompletion(const std::vector<CommandHelp>& commands,
                           const std::vector<std::string>& events,
                           const std::vector<std::string>& cpus);

}  // namespace tprof
