// `tprof diff OLD NEW`: the function diff of two profiles (or two sides of repeated runs), per
// event, with the regression gate's verdict. Loading is views/function_profile_loader, the
// analysis core/analysis/profile_diff and core/analysis/regression_gate, the rendering
// report/diff_report.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/analysis/profile_diff.h"
#include "core/analysis/regression_gate.h"
#include "core/base/error.h"
#include "report/diff_report.h"
#include "views/function_profile_loader.h"
#include "views/view_messages.h"

namespace tprof {

struct FunctionDiffRequest {
  std::vector<std::string> old_files, new_files;  // one profile a side, or its repeated runs
  std::string old_time, new_time;                 // each side's --time range; empty: the whole
  ProfileLoadOptions load;  // credit_kernel_to_user is decided here, from every input
  ProfileDiffOptions diff;
  std::vector<Threshold> thresholds;  // --fail-if, parsed
  bool allow_incomplete = false;      // the gate judges over inputs read in part
  bool ignore_module = false;         // functions paired by name alone
  bool kernel_rows = false;
  bool json = false;
  std::string event;  // show this event alone (the gate judges each threshold's own)
  DiffReportOptions report;
};

// How a diff ended when it did not fail. Unless usage_error is set, the diff was written.
struct FunctionDiffOutcome {
  // The request names what neither side has (a --normalize event, a --fail-if event): the
  // command line must change; nothing was written.
  std::string usage_error;
  // "new profile b.tprof is incomplete (reason) and 1 more": the inputs read only in part.
  std::string incomplete;
  bool gate_withheld = false;            // a gate over incomplete inputs did not judge
  std::vector<std::string> regressions;  // the gate's tripped checks, explained
};

// Opens every input before reading any (kernel work is credited to user functions on both sides
// or on neither), reads them side by side, and writes the diff (text or JSON) on `out`.
Result<FunctionDiffOutcome> WriteFunctionDiff(const FunctionDiffRequest& request, std::ostream& out,
                                              const ViewMessages& messages);

}  // namespace tprof
