// The outputs of `tprof report` other than the table and the flame graph: folded stacks, pprof
// and speedscope files, and annotated functions, every one built in one pass over the records.
#pragma once

#include <ostream>
#include <string>

#include "core/model/frame_resolver.h"
#include "core/source/profile_source.h"
#include "symbolize/function_listing.h"
#include "views/view_messages.h"

namespace tprof {

struct ReportExportRequest {
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

// Reads `source` (the profile `input` names) once and writes every requested output: folded
// stacks and annotations on `out`, exports to their files. A bad request (an event the profile
// lacks) is an Error of kind kBadRequest. Folded-style combinations are the caller's to check.
Result<ViewOutcome> WriteReportExports(const ReportExportRequest& request, const std::string& input,
                                       ProfileSource& source, FrameResolver& resolver,
                                       const ModuleOpener& open_module, std::ostream& out,
                                       const ViewMessages& messages);

}  // namespace tprof
