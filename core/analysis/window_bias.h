// The two ways the window method ([g]: a group's deltas credited to a function when a window
// starts and ends in it) goes wrong in a way its interval does not cover, detected per function
// and group member from the recording itself:
//  - events at calls' edges: a window from one function into another is discarded, and with it
//    whatever happens at the end of the first call and the start of the next (allocations, first
//    touches, locks). The pooled windows of each (A, B) pair are held against the mean of A's
//    and B's credited rates (the boundary lies at a uniformly random point of such a window):
//    more events (or fewer) than that, beyond the intervals, says the credited windows miss what
//    the edges do.
//    A window across an edge that ran over twice as long as any credited to either function (a
//    stall: the kernel or the host held the thread while the clock went on) holds time neither
//    function's credited windows count; each function at its ends (with windows enough of its
//    own to say how long they run) is flagged where that time, all of it its own, would move
//    its rates beyond their interval.
//  - windows that span calls: a window that starts and ends in a function may have left its call
//    and come back in a later one, stepping over other functions' calls too short for a sample
//    to land in. How often one sample of another function lies between two of the function's
//    own bounds how much of its credited windows' time may be others' (SpanShare); that share
//    times how far the rates of the functions seen between its samples lie from its own, beyond
//    its interval, flags it.
// Neither can see aliasing (a loop whose round is the sampling period credits whole rounds to
// whichever function the phase lands in): that needs the period jittered or the events sampled
// on their own as well, and the two methods compared.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/window_attribution.h"

namespace tprof {

// kMethodsDisagree: the value against the same formula from the events sampled on their own;
// kSamplesLost: a sampled-periods value when the kernel lost samples (a full ring buffer) that
// may have been any of its events' (DerivedMetrics finds both; nothing here does);
// kClockInOneMode: a sampled-periods value whose clock is sampled in one mode (task-clock:u),
// found beyond the group's value in the direction the time the clock's samples leave out
// moves it (DerivedMetrics); kClockMissedTicks: a sampled-periods value read from a timer clock
// that reads itself, whose reads count time its samples do not beyond what the interval allows
// (the timer's missed ticks: DerivedMetrics); kClockInStep: a sampled-periods value read from a
// timer clock whose samples, on the threads this row's come from, repeat with a loop of a few
// periods (ClockRhythm); kClockStepsOver: one whose clock's periods in the row spanned other
// functions' work, seen in another event's samples between two of the row's, or whose calls are
// shorter than the clock's period, as the other events' samples or the clock's own show the row
// entered (ClockRhythm).
enum class WindowBiasKind {
  kCallEdges,
  kCallMiddles,
  kSpansCalls,
  kMethodsDisagree,
  kSamplesLost,
  kClockInOneMode,
  kClockMissedTicks,
  kClockInStep,
  kClockStepsOver
};
// "call edges", "call middles", "spans calls", "methods disagree", "samples lost", "clock in one
// mode", "clock missed ticks", "clock in step", "clock steps over calls"
const char* WindowBiasKindName(WindowBiasKind kind);

struct WindowBias {
  WindowBiasKind kind = WindowBiasKind::kCallEdges;
  std::string reason;  // one line: what was seen, in the recording's numbers
};

// A function whose credited windows' time may be others' by at most this share is not flagged
// for it, however far the others' rates lie (a window's own noise is larger).
inline constexpr double kMaxSpanShare = 0.02;

// The share of a function's credited windows' time that may be other functions' calls stepped
// over (SampleRuns::single_returns against the windows that stayed). Empty when no window stayed.
std::optional<double> SpanShare(const SampleRuns& runs);

// Per function (WindowAttributor's keys) and member (leader first, which is never flagged: the
// rates are per unit of the leader), the biases found. `member_names` name the members in the
// reasons, `row_name` a function's key.
using WindowBiases = std::map<std::string, std::vector<std::vector<WindowBias>>>;
// Per function and member (leader first, always 0): how far, in the member's count per unit of
// the leader, the credited rate may lie from the whole calls' because of what the call edges
// hold, where that is too little to flag (at most the larger of the value's interval and 5 % of
// the rates beside it) but was seen: the value's interval is widened by it (DerivedMetrics), so
// that a value shown without a reason still covers what its calls' edges may hold.
using WindowBounds = std::map<std::string, std::vector<double>>;
struct WindowFindings {
  WindowBiases biases;
  WindowBounds bounds;
};
WindowFindings DetectWindowBias(const WindowAttributor& attributor,
                                const std::vector<std::string>& member_names,
                                std::string (*row_name)(const std::string& key));

}  // namespace tprof
