// `tprof diff OLD NEW --flamegraph OUT.html`: the differential flame graph. Loading is
// OpenedProfile and CallTreeBuilder (as report's flame graph), the analysis
// core/analysis/diff_flame_tree, the rendering report/flamegraph_html.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/analysis/diff_flame_tree.h"
#include "core/analysis/profile_diff.h"
#include "views/opened_profile.h"
#include "views/view_messages.h"

namespace tprof {

struct DiffFlameGraphOptions {
  // One profile a side, or repeated runs: then widths are the runs' means and a frame is
  // coloured only where its change is significant (alpha, min_effect_percent: the table's rule).
  std::vector<std::string> old_paths, new_paths;
  // Kernel samples count for the user function that entered the kernel, as in the table, where
  // every input records the user context to credit (kernel work credited on every input or on
  // none: every input is opened before any is read).
  bool credit_kernel_to_user = false;
  std::string out_path;
  double alpha = 0.05;
  double min_effect_percent = 5;
  std::string event;  // empty: the old profile's first event the new one has too
  FlameWidthSide width = FlameWidthSide::kNew;
  Normalization normalize = Normalization::kNone;
  std::string normalize_event;  // for kEvent
  std::string symfs;
  std::vector<std::string> binaries;
  bool icicle = false;
  bool ignore_module = false;  // frames paired by function name alone (--ignore-module)
  // Each side read only within a time range (--old-time, --new-time: --time's forms); empty:
  // the whole profile.
  std::string old_time, new_time;
};

// The colour scale's limits, in points of the old total: the same in every graph.
inline constexpr double kDiffFlameScalePoints = 5.0;

// Opens every input, then reads each and lets it go in turn, so that one profile's symbols are
// in memory at a time, and writes the page; incomplete when an input could be read only in part
// (its warning says what was lost).
Result<ViewOutcome> WriteDiffFlameGraph(const DiffFlameGraphOptions& options,
                                        const ViewMessages& messages);

}  // namespace tprof
