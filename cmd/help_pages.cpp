#include "cmd/help_pages.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "core/base/version.h"

namespace tprof {
namespace {

// roff: a line starting with '.' or '\'' is a request; backslashes are escapes.
std::string RoffEscape(const std::string& text) {
  std::string out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::string escaped;
    for (char c : line) {
      if (c == '\\')
        escaped += "\\e";
      else if (c == '-')
        escaped += "\\-";
      else
        escaped.push_back(c);
    }
    if (!escaped.empty() && (escaped[0] == '.' || escaped[0] == '\'')) escaped = "\\&" + escaped;
    out += escaped + '\n';
  }
  return out;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string PageName(const CommandHelp& c) { return c.name.empty() ? "tprof" : "tprof-" + c.name; }

// Every spelling of every option of `app` ("-e", "--event"), in definition order.
std::vector<std::string> OptionNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_positional()) continue;
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
  }
  return names;
}

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

std::string ManPage(const CommandHelp& command, const std::vector<CommandHelp>& all) {
  const std::string page = PageName(command);
  std::string out;
  out += ".TH " + Upper(page) + " 1 \"\" \"tprof " + std::string(kVersion) + "\" \"tprof\"\n";
  out += ".SH NAME\n" + RoffEscape(page + " - " + command.summary);
  out += ".SH SYNOPSIS\n.B " + RoffEscape(command.name.empty() ? "tprof" : "tprof " + command.name);
  out += ".SH DESCRIPTION\n.nf\n" +
         RoffEscape(command.text.empty() ? command.app->help() : command.text) + ".fi\n";
  out += ".SH SEE ALSO\n";
  std::string see;
  for (const CommandHelp& other : all)
    if (other.name != command.name)
      see += (see.empty() ? "" : ",\n") + ("\\fB" + PageName(other) + "\\fR(1)");
  out += see + "\n";
  return out;
}

std::string BashCompletion(const std::vector<CommandHelp>& commands,
                           const std::vector<std::string>& events,
                           const std::vector<std::string>& cpus) {
  std::vector<std::string> names;
  for (const CommandHelp& c : commands)
    if (!c.name.empty()) names.push_back(c.name);
  names.push_back("help");
  std::string out =
      "# bash completion for tprof, made by `tprof help --completion bash` from its own options\n"
      "_tprof() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
      "  local cmd=${COMP_WORDS[1]}\n"
      "  local i\n"
      "  # After --, the workload's own command line: files and commands.\n"
      "  for ((i = 2; i < COMP_CWORD; i++)); do\n"
      "    [[ ${COMP_WORDS[i]} == -- ]] && { COMPREPLY=($(compgen -c -f -- \"$cur\")); return; }\n"
      "  done\n"
      "  if ((COMP_CWORD == 1)); then\n"
      "    COMPREPLY=($(compgen -W \"" +
      Join(names) +
      " --help --version\" -- \"$cur\"))\n"
      "    return\n"
      "  fi\n"
      "  case $prev in\n"
      "    -e|--event) COMPREPLY=($(compgen -W \"" +
      Join(events) +
      "\" -- \"$cur\")); return ;;\n"
      "    --cpu) COMPREPLY=($(compgen -W \"" +
      Join(cpus) +
      "\" -- \"$cur\")); return ;;\n"
      "  esac\n"
      "  local opts\n"
      "  case $cmd in\n";
  for (const CommandHelp& c : commands) {
    if (c.name.empty()) continue;
    out += "    " + c.name + ") opts=\"" + Join(OptionNames(*c.app)) + "\" ;;\n";
  }
  out += "    help) opts=\"" + Join(names) + " --man --completion\" ;;\n";
  out +=
      "  esac\n"
      "  if [[ $cur == -* || $cmd == help ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
      "  else\n"
      "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
      "  fi\n"
      "}\n"
      "complete -o filenames -F _tprof tprof\n";
  return out;
}

}  // namespace tprof
