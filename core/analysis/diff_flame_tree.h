// A differential flame graph's model: the merged call tree of two profiles (MergeCallTrees) made
// into one tree of widths plus, per frame, both sides' values and their differences.
//
// Widths come from one side (new by default). A frame the width side lacks (a stack that
// vanished, when widths are new; one that appeared, when widths are old) is not dropped: it keeps
// the other side's width and is marked, and its ancestors are widened by as much so that the
// layout stays nested. Every other frame is exactly as wide as its width-side period.
//
// Per frame, for its total (self and below) and its self period:
//   old, new     the periods; new scaled by `new_scale` (1, or the normalization factor)
//   delta        new - old
//   delta_pct    100 * delta / old: the change relative to the frame itself (none when old is 0)
//   delta_pt     100 * delta / old grand total: points of the old total, the colour's value
// the same meanings as core/analysis/profile_diff.h's function diff.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/analysis/call_tree.h"
#include "core/analysis/profile_diff.h"
#include "core/analysis/significance.h"
#include "core/base/error.h"

namespace tprof {

enum class FlameWidthSide { kOld, kNew };

struct DiffFlameOptions {
  size_t event = 0;  // index into the merged tree's per-event vectors
  FlameWidthSide width = FlameWidthSide::kNew;
  // Multiplies every new value (and new width); 1 without normalization.
  double new_scale = 1.0;
};

struct DiffValue {
  double old_value = 0, new_value = 0;
  double delta = 0;
  std::optional<double> delta_pct;  // of the frame's own old value
  double delta_pt = 0;              // of the old grand total
};

struct DiffFrameValues {
  DiffValue total, self;
  // Absent on the width side, drawn from the other side's width: "gone" when widths are new
  // (old only), "new" when widths are old (new only).
  bool absent_on_width_side = false;
};

struct DiffFlameTree {
  // One event (index 0): total and self are the widths described above. Owns the nodes that
  // `frames` is keyed by (on the heap, so that moving the tree keeps the keys valid).
  std::unique_ptr<CallNode> root;
  std::unordered_map<const CallNode*, DiffFrameValues> frames;
  double old_grand_total = 0, new_grand_total = 0;  // new scaled
  FlameWidthSide width = FlameWidthSide::kNew;
};

// The factor that scales the new side as the function diff's --normalize does for one profile
// per side: none 1; total (old total / new total) of `event`; EVENT the same ratio of
// `normalize_event`. Errors: a zero total to scale by.
Result<double> DiffFlameNewScale(const DiffCallNode& merged, Normalization normalize, size_t event,
                                 size_t normalize_event);

// Errors: the old side has no period of the event (nothing to take points of).
Result<DiffFlameTree> BuildDiffFlameTree(const DiffCallNode& merged,
                                         const DiffFlameOptions& options);

// Repeated runs per side: each run's own tree, and the factor its values are multiplied by (1,
// or its normalization to the old side), so that a frame's change can be tested against the
// runs' spread as the function diff tests a function's.
struct SideRuns {
  std::vector<const CallNode*> roots;
  std::vector<double> factors;  // parallel to roots
};

// A frame's change over repeated runs: its per-run totals and selfs on each side, the two-sided
// Mann-Whitney U test of the totals, and whether the change counts (profile_diff.h's rule: p <
// alpha and |change| >= min_effect_percent of the old mean; a frame absent from every old run
// has an unbounded effect).
struct FrameChange {
  std::vector<double> old_totals, new_totals, old_selfs, new_selfs;
  MannWhitneyResult total_test, self_test;
  bool total_significant = false;
  bool self_significant = false;
};

// Every frame of `tree` (keyed as tree.frames is), its path looked up in each run's tree by name,
// module and kind (absent: 0). `event` indexes the runs' trees' per-event vectors.
std::unordered_map<const CallNode*, FrameChange> AssessFrameChanges(const DiffFlameTree& tree,
                                                                    const SideRuns& old_runs,
                                                                    const SideRuns& new_runs,
                                                                    size_t event, double alpha,
                                                                    double min_effect_percent);

// The mean of a side's runs, node by node (each count rounded to the nearest integer), named and
// kinded as the first run's root.
CallNode MeanCallTree(const std::vector<const CallNode*>& runs);

// A copy of `node`'s tree with only the given events, in that order, so that two profiles whose
// event lists differ can be merged event by event.
CallNode SelectCallTreeEvents(const CallNode& node, const std::vector<size_t>& events);

}  // namespace tprof
