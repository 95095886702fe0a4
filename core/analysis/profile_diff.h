// Function-level differences between two sides of profiles (old and new), each side one run or
// several repeated runs of the same thing. Every number has one stated meaning:
//
//   old, new     the function's self period (sum of its samples' periods) on that side; the mean
//                over runs when a side has several; scaled per run when normalizing (below)
//   delta        new - old
//   delta_pct    100 * delta / old: the change relative to the function's own old value
//                (absent when old is 0: a new function)
//   delta_pt     100 * delta / old total of the event: the change in points of the old total,
//                so the rows' delta_pt add up to the total's change in percent
//   old_share,   100 * value / that side's total: the function's share of its own side
//   new_share
//
// Normalization (applied to each run before anything else):
//   none    raw period sums; a uniform slowdown shows as growth of every function and the total
//   total   each run's values of an event scaled so that its total equals the old side's mean
//           total: shows shifts in the mix and hides a uniform slowdown (every delta is ~0)
//   EVENT   each run's values of every event scaled by (old mean total of EVENT) / (this run's
//           total of EVENT): e.g. cycles per instruction retired when EVENT is instructions
//
// Nothing here reads files or renders: the command builds FunctionTotals from each profile and
// a renderer prints the ProfileDiff.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/call_tree.h"
#include "core/analysis/function_profile.h"
#include "core/analysis/report_table.h"
#include "core/analysis/significance.h"
#include "core/base/error.h"

namespace tprof {

// A function as the diff identifies it across runs and builds: its name and the base name of
// its module (paths and process ids differ between runs; names do not).
struct FunctionKey {
  std::string module;
  std::string function;
  auto operator<=>(const FunctionKey&) const = default;
};

// IPC and CPI by the window method ([g]) for one function: the windows of a leader-sampled group
// that reads a cycles and an instructions event, credited to the function as `tprof report`
// credits them (WindowAttributor). Sums, so that runs pool: a side's value is the ratio over
// every run's windows, its interval from their spread.
struct WindowRatioSums {
  double instructions = 0, cycles = 0;  // sums of the two members' deltas over the windows
  // Sums over the windows of the deltas' products: instructions^2, instructions * cycles,
  // cycles^2.
  double instructions_squared = 0, cross = 0, cycles_squared = 0;
  uint64_t windows = 0;
  // How far each count may be off for what the call edges hold, too little to flag
  // (GroupCredit::member_bound, as counts): widens the interval.
  double instructions_bound = 0, cycles_bound = 0;
  // Why the value may lie outside its interval (a window bias, or the events sampled on their
  // own disagreeing), as `tprof report` says it; the first run's that says so. Empty: none found.
  std::string bias;
  // The same for the function's IPC from the two events sampled on their own, where they were
  // too ([s]: the report holds it against the windows, `methods disagree`); lost samples aside,
  // which the diff bounds itself (DerivedMetricsDiff::old_lost_reach).
  std::string sampled_bias;
  void Add(const WindowRatioSums& other);
};

// A profile's group windows by function, for IPC[g] and CPI[g] in a diff.
struct WindowRatios {
  std::string cycles_event, instructions_event;  // the group's members
  std::string leader;                            // the group's leader
  std::map<FunctionKey, WindowRatioSums> functions;
  WindowRatioSums total;  // every credited window
};

// One profile reduced to what a diff needs: per event, the self period of each function and the
// total. Functions of every process and thread of the profile are summed. Events a group leader's
// samples read, not sampled on their own, have no self period: they are not among `events`
// but in `read_only_events`, and reach the diff through `window_ratios`.
struct FunctionTotals {
  std::vector<std::string> events;
  std::map<FunctionKey, std::vector<double>> self;  // per event
  // Per event, the samples of each function's self period: where present (the same keys as
  // `self`), IPC and CPI from sampled periods get intervals.
  std::map<FunctionKey, std::vector<double>> self_samples;
  std::vector<double> totals;   // per event
  std::vector<double> samples;  // per event: samples kept
  uint64_t lost = 0;            // samples the kernel lost (a full ring buffer), of any event
  // "instructions (read in the samples of cycles)": events only read, never sampled.
  std::vector<std::string> read_only_events;
  std::optional<WindowRatios> window_ratios;
};

// `match_module` false: functions are matched by name alone (module left empty), for builds
// whose binary was renamed between the two sides.
FunctionTotals SumByFunction(const FunctionProfile& profile, bool match_module = true);

// The windows of a read group with a cycles and an instructions member, by function, from a
// table whose rows are functions (sort dso,sym, as `tprof diff` reads a profile for them), each
// with the reason `tprof report` gives its IPC[g] (DerivedMetrics), if any. Empty when no group
// reads both.
std::optional<WindowRatios> SumWindowRatios(const ReportTable& table, bool match_module = true);

enum class Normalization { kNone, kTotal, kEvent };

struct ProfileDiffOptions {
  Normalization normalize = Normalization::kNone;
  std::string normalize_event;  // for kEvent
  double alpha = 0.05;          // significance level of the Mann-Whitney test
  // Changes smaller than this (|delta_pct|, in percent) are never called significant, however
  // small their p-value: with quiet enough runs any difference is "significant".
  double min_effect_percent = 5.0;
  // The events of the cost split (cost_split.h); empty: cycles and instructions.
  std::string split_cost, split_work;
};

enum class FunctionStatus { kBoth, kGone, kNew };  // gone: old only (new = 0); new: new only
const char* FunctionStatusName(FunctionStatus status);

// Only when both sides have at least two runs is significance assessed.
enum class Significance { kNotAssessed, kSignificant, kNotSignificant };
const char* SignificanceName(Significance significance);

// Repeated-run statistics of one quantity (a function's value or an event's total).
struct RunStatistics {
  std::vector<double> old_runs, new_runs;  // per-run values, normalized
  double old_cv = 0, new_cv = 0;           // coefficient of variation per side (stddev / mean)
  std::optional<MannWhitneyResult> test;   // both sides have two runs or more
  Significance significance = Significance::kNotAssessed;
};

struct FunctionDiff {
  FunctionKey key;
  FunctionStatus status = FunctionStatus::kBoth;
  double old_value = 0, new_value = 0;
  double delta = 0;
  std::optional<double> delta_pct;  // absent when old_value is 0
  double delta_pt = 0;
  double old_share = 0, new_share = 0;
  RunStatistics runs;
};

struct EventDiff {
  std::string name;  // "cycles"; "OLD vs NEW" when two differently named lone events are paired
  double old_total = 0, new_total = 0;
  double delta = 0;
  std::optional<double> delta_pct;  // 100 * delta / old_total
  RunStatistics total_runs;
  std::vector<FunctionDiff> functions;  // by |delta| descending, then by name
};

// A ratio of two events (IPC = instructions / cycles, CPI = cycles / instructions), old and new,
// each side with its 95 % interval and the reason it may lie outside it, if any.
struct RatioPair {
  std::optional<double> old_value, new_value;  // absent when the denominator is 0
  // Sampled periods: absent where a side's sample counts are unknown; group windows: absent
  // below two windows.
  std::optional<double> old_half_width, new_half_width;
  // A value without an interval, or one wider than kMaxConfidentRelativeHalfWidth of it.
  bool old_low_confidence = false, new_low_confidence = false;
  std::string old_bias, new_bias;  // why the side's value may lie outside its interval
};
struct FunctionRatios {
  FunctionKey key;
  RatioPair ipc, cpi;
};
// Present when both sides sampled a cycles event and an instructions event on their own (each
// with its own samples: sampled periods), or else when both read them in a leader-sampled group
// (group deltas: the windows credited to each function, pooled over a side's runs).
struct DerivedMetricsDiff {
  bool from_windows = false;  // group deltas ([g]), else sampled periods ([s])
  std::string cycles_event, instructions_event;
  std::string leader;  // group deltas: the group's leader
  RatioPair total_ipc, total_cpi;
  // Sampled periods: in the order of the cycles event's functions; group deltas: in the order
  // of the first event's, then those only the windows name.
  std::vector<FunctionRatios> functions;
  // Samples the kernel lost on a side may all have been one of the two events': each ratio of
  // that side may then be off by up to this share of it (the largest lost / (kept + lost) of the
  // two events over the side's runs), beyond anything its samples say. 0: nothing lost.
  double old_lost_reach = 0, new_lost_reach = 0;
  std::string lost_reason;  // one line, when either reach is not 0
};

// A function's change of cost split into work and efficiency (core/analysis/cost_split.h says
// how each part is computed).
struct SplitPart {
  double value = 0;
  std::optional<double> percent;     // 100 * value / old cost
  std::optional<double> half_width;  // of value, from repeated runs (two or more per side)
};

struct CostSplit {
  FunctionKey key;  // empty for the total
  double old_cost = 0, new_cost = 0, old_work = 0, new_work = 0;
  SplitPart work, efficiency;
};

struct CostSplitDiff {
  std::string cost_event, work_event;
  CostSplit total;
  std::vector<CostSplit> functions;  // with old work, by |cost change| descending
};

struct ProfileDiff {
  ProfileDiffOptions options;
  size_t old_runs = 0, new_runs = 0;
  std::vector<EventDiff> events;             // events present in every run of both sides
  std::vector<std::string> unpaired_events;  // events some run lacks: not compared
  // Events only read in a group leader's samples (FunctionTotals::read_only_events), each side's.
  std::vector<std::string> read_only_events;
  std::optional<DerivedMetricsDiff> metrics;
  std::optional<CostSplitDiff> split;  // when both sides have the cost and the work event
  std::string note;  // one line the reader should know (e.g. how lone events were paired)
  // Fewest runs per side with which the Mann-Whitney test can reach options.alpha at all.
  size_t runs_needed = 0;
};

// Compares the runs of the old side with those of the new side. Errors: a side without runs, no
// event common to both sides, an unknown normalization event or one with a zero total.
Result<ProfileDiff> DiffProfiles(const std::vector<FunctionTotals>& old_side,
                                 const std::vector<FunctionTotals>& new_side,
                                 const ProfileDiffOptions& options);

// The sign of a program renamed or moved between builds: most of an event's functions are gone
// or new, and gone ones reappear under the same name in another module. Suggests matching by name
// alone (--ignore-module). Absent when the diff does not look so.
struct ModuleRename {
  size_t rows = 0;                     // functions of the event
  size_t gone_or_new = 0;              // of them
  size_t paired = 0;                   // gone functions whose name is also a new function's
  std::string old_module, new_module;  // the pair most of them moved between
};
std::optional<ModuleRename> DetectModuleRename(const EventDiff& event);

// Per call path: the seam for differential flame graphs. The union of two call trees (as
// CallTreeBuilder makes them), each node with both sides' self and total periods per event; a
// path present on one side only has zeros on the other, so vanished stacks stay visible.
struct DiffCallNode {
  std::string name;
  std::string module;
  FrameKind kind = FrameKind::kUser;
  std::vector<uint64_t> old_self, new_self;    // per event
  std::vector<uint64_t> old_total, new_total;  // per event
  std::vector<std::unique_ptr<DiffCallNode>> children;
};
// `events` is the number of events of both trees (already paired by the caller, same order).
DiffCallNode MergeCallTrees(const CallNode& old_root, const CallNode& new_root, size_t events);

}  // namespace tprof
