// The regression gate of `tprof diff`: thresholds on a ProfileDiff that a CI job fails on.
//
//   THRESHOLD := SUBJECT OP VALUE
//   SUBJECT   := total[.EVENT]          the event's total
//              | func(PATTERN)[.EVENT]  every function whose name matches PATTERN
//              | share(PATTERN)[.EVENT] the same functions' shares of their side's total
//   OP        := >  >=  <  <=
//   VALUE     := [+|-]NUMBER followed by % or pt; a time unit (ns us ms s) for the clocks
//                (cpu-clock, task-clock), which need one; nothing for other events' raw counts
//
// PATTERN is a shell glob (fnmatch: * ? [..]) matched against the function name, with and
// without its parameter list ("work_alpha" matches "work_alpha(unsigned long)"). EVENT defaults
// to the first event of the diff; "ipc" and "cpi" name the derived metrics when the diff has
// them; "wall" is an off-CPU recording's on-CPU clock plus off-CPU time (SumByFunction). What VALUE
// compares with:
//   total      %: 100 * delta / old total           none: delta
//   func       %: 100 * delta / the function's old  pt: 100 * delta / old total  none: delta
//              (a new function counts as +infinity %, a gone one as -100 %)
//   share      pt: new share - old share, in points of each side's own total
//   ipc, cpi   %: 100 * (new - old) / old           none: new - old
//   work,      %: 100 * part / the old cost         none: the part (cost_split.h)
//   efficiency
// A threshold trips when any subject it names satisfies "observed OP VALUE". With several runs
// per side, a subject whose change is not significant (see ProfileDiffOptions) never trips.
// Stream thresholds (stream diffs are built separately) will be another Subject.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/profile_diff.h"
#include "core/base/error.h"

namespace tprof {

struct Threshold {
  enum class Subject { kTotal, kFunction, kShare };
  enum class Op { kGreater, kGreaterEqual, kLess, kLessEqual };
  enum class Unit { kPercent, kPoints, kRaw };
  Subject subject = Subject::kTotal;
  std::string pattern;  // kFunction, kShare
  std::string event;    // empty: the diff's first event
  Op op = Op::kGreater;
  double value = 0;  // with a time unit: in nanoseconds, what the clocks' periods count
  Unit unit = Unit::kPercent;
  std::string time_unit;  // "ns", "us", "ms" or "s" when written (kRaw); a time event's only
  std::string text;       // as written
};

// The grammar above, for `tprof diff --help`.
extern const char* const kThresholdSyntaxHelp;

// A syntax error names what is wrong and shows the grammar's shape.
Result<Threshold> ParseThreshold(std::string_view text);

// One subject that crossed (or, when nothing crossed, the one closest to crossing).
struct GateFinding {
  std::string subject;                  // "total.cpu-clock", "func(work_alpha(int)).cpu-clock"
  double observed = 0;                  // in the threshold's unit
  double old_value = 0, new_value = 0;  // what observed was computed from
  std::optional<double> p_value;        // with several runs per side
  // Why the values may be off beyond what they show (ipc/cpi: samples lost), when the subject
  // crossed only because they may be: the gate fails closed rather than pass over a value it
  // cannot trust.
  std::string bias;
};

struct GateCheck {
  Threshold threshold;
  bool tripped = false;
  std::vector<GateFinding> crossed;    // subjects that crossed, worst first
  std::optional<GateFinding> closest;  // when none crossed: the eligible subject nearest to it
  size_t matched = 0;                  // subjects the threshold named
  size_t not_significant = 0;          // of those, skipped because their change is not significant
  std::string explanation;             // one line: what tripped and by how much, or why not
};

struct GateVerdict {
  std::vector<GateCheck> checks;
  bool tripped() const;
};

// Errors: an event the diff does not have, ipc/cpi without the events they need, or a unit the
// subject does not take.
Result<GateVerdict> EvaluateGate(const ProfileDiff& diff, const std::vector<Threshold>& thresholds);

}  // namespace tprof
