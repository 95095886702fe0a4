#include "cmd/report_export_options.h"

namespace tprof {

void AddReportExportOptions(CLI::App& app, ReportExportRequest& options) {
  app.add_flag("--folded", options.folded,
               "Print folded stacks (FlameGraph's format: root first, ';'-separated, count last; "
               "kernel frames end in _[k], inlined ones in _[i]) instead of the table");
  app.add_option("--event", options.event,
                 "The event --folded counts and --flamegraph sizes frames by (default: the "
                 "first; cycles with --color ipc/cpi/stall)");
  app.add_option("--folded-style", options.folded_style,
                 "tprof (default: full names, _[k]/_[i] marks, periods as counts) or "
                 "stackcollapse (stackcollapse-perf.pl's output, byte for byte: each sample "
                 "of the first event counted by its printed period, else 1)")
      ->check(CLI::IsMember({"tprof", "stackcollapse"}));
  app.add_option("--folded-prefix", options.folded_prefix,
                 "Root each folded stack at its process name, name-PID or name-PID/TID "
                 "(default: none; comm with --folded-style stackcollapse, whose --pid and --tid "
                 "are pid and tid)")
      ->check(CLI::IsMember({"none", "comm", "pid", "tid"}));
  app.add_option("--folded-marks", options.folded_marks,
                 "With --folded-style stackcollapse: its --kernel (_[k]), --jit (_[j]) or --all")
      ->check(CLI::IsMember({"kernel", "jit", "all"}));
  app.add_flag("--folded-addrs", options.folded_addrs,
               "With --folded-style stackcollapse: its --addrs ([module <address>] for unknown "
               "symbols)");
  app.add_flag("--no-marks", options.no_marks, "Folded stacks without the _[k] and _[i] marks");
  app.add_flag("--no-inline", options.no_inline,
               "Inlined calls are not functions of their own: table rows, --children, "
               "--callers/--callees, --annotate and folded stacks count them toward the "
               "out-of-line function they were inlined into");
  app.add_option("--pprof", options.pprof_path,
                 "Write a gzipped pprof profile (profile.proto) to this file");
  app.add_option("--speedscope", options.speedscope_path,
                 "Write a speedscope JSON profile to this file");
  app.add_option("--annotate", options.annotate,
                 "Show this function's instructions with their sample shares and source lines "
                 "(full or unqualified name, without parameters)");
}

std::optional<std::string> FoldedStyleMisuse(const ReportExportRequest& options) {
  if (!options.folded) return std::nullopt;
  const bool stackcollapse_style = options.folded_style == "stackcollapse";
  if (!stackcollapse_style && (!options.folded_marks.empty() || options.folded_addrs))
    return "--folded-marks and --folded-addrs go with --folded-style stackcollapse";
  if (stackcollapse_style && options.folded_prefix == "none")
    return "--folded-style stackcollapse always roots stacks at the process name (--folded-prefix "
           "comm, pid or tid)";
  return std::nullopt;
}

}  // namespace tprof
