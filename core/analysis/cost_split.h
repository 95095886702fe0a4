// Whether a function got slower because it does more work or because it does its work worse:
// its change of cost (cycles, by default) split exactly into two parts, against a work event
// (instructions, by default). With C the cost and W the work, per-run means, 0 the old side and
// 1 the new one:
//   work       = (W1 - W0) * C0 / W0   the new amount of work at the old cost per unit
//   efficiency = C1 - W1 * C0 / W0     the new work's cost beyond the old cost per unit
//   work + efficiency = C1 - C0, exactly.
// With repeated runs on both sides each part has a 95 % interval (the delta method over the
// runs' spread, Student's t).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/analysis/profile_diff.h"

namespace tprof {

// The split of every function that did work on the old side. `cost_event`/`work_event` empty:
// cycles and instructions. Absent when a side lacks either event or has none of its samples
// (e.g. instructions only read in the cycles leader's samples).
std::optional<CostSplitDiff> SplitCost(const std::vector<FunctionTotals>& old_side,
                                       const std::vector<FunctionTotals>& new_side,
                                       const std::string& cost_event,
                                       const std::string& work_event);

// "COST/WORK" (diff --split) into its two event names.
Result<std::pair<std::string, std::string>> ParseSplitEvents(const std::string& text);

}  // namespace tprof
