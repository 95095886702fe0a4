// The outputs of `tprof report` other than the function table: folded stacks, pprof and
// speedscope files, and annotated functions. Kept apart from report_cmd.cpp so the command stays
// thin; every output here is built in one pass over the records.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "core/model/frame_resolver.h"
#include "core/source/profile_source.h"
#include "symbolize/function_listing.h"

namespace tprof {

struct ReportExportOptions {
  bool folded = false;
  std::string event;  // the event folded; default: the first
  // tprof: tprof's own names (full C++ signatures, "_[k]"/"_[i]" marks, periods as counts);
  // stackcollapse: stackcollapse-perf.pl's names, byte for byte (report/stackcollapse_folded.h).
  std::string folded_style = "tprof";
  std::string folded_prefix;  // none|comm|pid|tid; empty: the style's default (none, comm)
  std::string folded_marks;   // stackcollapse style: kernel|jit|all (its --kernel, --jit, --all)
  bool folded_addrs = false;  // stackcollapse style: its --addrs
  bool no_marks = false;      // no "_[k]" / "_[i]" suffixes
  bool no_inline = false;     // inlined calls are not frames of their own
  std::string pprof_path;
  std::string speedscope_path;
  std::string annotate;  // function to annotate

  bool requested() const {
    return folded || !pprof_path.empty() || !speedscope_path.empty() || !annotate.empty();
  }
};

void AddReportExportOptions(CLI::App& app, ReportExportOptions& options);

// Reads `source`'s records once and writes every requested output: folded stacks and
// annotations on standard output, exports to their files. Returns the exit code.
int RunReportExports(const ReportExportOptions& options, const std::string& input,
                     ProfileSource& source, FrameResolver& resolver,
                     const ModuleOpener& open_module);

}  // namespace tprof
