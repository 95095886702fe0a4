// A clock sampled at a fixed period (task-clock, cpu-clock: the kernel's timer, which has no
// jitter) credits each function the time its share of the samples stands for, which holds when
// the samples land at every point of the program's run alike. A program that repeats a loop of
// a few sampling periods (three functions of some 80 us called in turn, sampled every 50 us)
// breaks that: the samples fall at a few points of the loop, drifting through it slowly, and
// each sample's own cost lengthens the call it lands in, which holds the phase where it is. The
// shares then come out off beyond their intervals, which assume independent samples (seen: 2-4 %
// on calls of 82 us with a 20 kHz clock, -F 17000 and 23000 off by other amounts, intervals of
// ±3.5 %); nothing in one function's samples tells it from a long call.
//
// What does tell it is the order of the samples on a thread: in such a loop the sampled
// function repeats at a fixed lag of a few samples far more often than it stays the same from
// one sample to the next; in a program of long calls it stays, and in one without a loop
// neither. ClockRhythm looks at each thread's run of a timer clock's samples, unbroken (each a
// period after the last), and names the threads whose sampled rows repeat so.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/model/profile.h"

namespace tprof {

// What one event's samples showed on the threads whose rows repeat at a lag.
struct ClockRhythmFinding {
  uint32_t event = 0;
  uint32_t lag = 0;              // samples, on the thread with the most samples in step
  double same_at_lag = 0;        // the share of its samples `lag` apart that lie in one row
  double same_next = 0;          // ... and of those one apart
  uint64_t period_ns = 0;        // the clock's period: lag times it is about the loop's length
  uint64_t threads = 0;          // threads in step
  uint64_t samples_in_step = 0;  // their samples looked at
  uint64_t samples_seen = 0;     // every sample of the event looked at
  // Where two samples in a row in one row had another event's sample between them in another
  // row, on rows whose periods with others' work in them end in the row again far more or less
  // often than its share of the samples (the clock keeps to a loop's phase, and stepped over
  // that work): the other event seen most there (-1: none).
  int32_t stepped_by = -1;
  bool in_step() const { return lag > 0; }
};

// One stack's samples of a timer clock, as ClockRhythm counted them.
struct ClockRhythmStackCounts {
  uint64_t seen = 0, in_step = 0;   // samples looked at, and of threads in step
  uint64_t followed = 0;            // ... that came a period after another (the run unbroken)
  uint64_t stepped = 0;             // following one on the same row with another row between
  uint64_t spanned = 0, again = 0;  // followed by a period with another row's work; in the row
};

// Per sample a row may be credited with: how many of the event's samples that were looked at it
// holds, and how many of those came from threads in step. (ReportRow keeps one per event with
// samples in step.)
struct ClockRhythmCount {
  uint32_t event = 0;
  uint64_t self_seen = 0, self_in_step = 0;
  uint64_t total_seen = 0, total_in_step = 0;
  // Samples in step whose next sample on the thread lies outside the row: how often the loop
  // leaves it. A row that holds the whole loop (main, its caller) is never left, and its shares
  // do not depend on where in the loop the samples land.
  uint64_t self_exits = 0, total_exits = 0;
  // The row's own samples (its leaf's) that followed one in the row with another event's sample
  // in another row between them, where the clock keeps to a loop's phase (ClockRhythmFinding).
  uint64_t self_stepped = 0;
  // The row's own samples whose period ran another row's work, and of those the ones whose next
  // sample landed in the row again.
  uint64_t self_spanned = 0, self_again = 0;
  // How often the other events' samples show the thread entering the row (a sample in it after
  // one outside it): a lower bound on its calls. More than its clock samples, and its calls are
  // on average shorter than the clock's period.
  uint64_t self_entries = 0, total_entries = 0;
  // How often the clock's own samples show the thread entering the row: its samples (self, or
  // with the row on their chain) whose last one on the thread, a period before, lay outside it.
  // Where nearly all of them did, the row never held two samples in a row: its calls are shorter
  // than the period, which the other events cannot show where all of theirs land in the row.
  uint64_t self_clock_entries = 0, total_clock_entries = 0;
  // The row's samples that came a period after another on the thread (the run unbroken, the
  // last sample known): the ones that can show an entry (self_clock_entries) or a stay.
  uint64_t self_followed = 0, total_followed = 0;
  // The row's entries and the clock's samples looked at in it, self or (`inclusive`) total.
  uint64_t entries(bool inclusive) const { return inclusive ? total_entries : self_entries; }
  uint64_t clock_entries(bool inclusive) const {
    return inclusive ? total_clock_entries : self_clock_entries;
  }
  uint64_t followed(bool inclusive) const { return inclusive ? total_followed : self_followed; }
  uint64_t seen(bool inclusive) const { return inclusive ? total_seen : self_seen; }

  // A stack's counts, for a row it is the leaf of, or one on its chain.
  void AddSelf(const ClockRhythmStackCounts& stack) {
    self_seen += stack.seen;
    self_followed += stack.followed;
    self_in_step += stack.in_step;
    self_stepped += stack.stepped;
    self_spanned += stack.spanned;
    self_again += stack.again;
  }
  void AddTotal(const ClockRhythmStackCounts& stack) {
    total_seen += stack.seen;
    total_followed += stack.followed;
    total_in_step += stack.in_step;
  }
};

// The entry of `event` among a row's or frame's findings or counts: null when it has none.
template <typename PerEvent>
const PerEvent* OfEvent(const std::vector<PerEvent>& entries, size_t event) {
  for (const PerEvent& entry : entries)
    if (entry.event == event) return &entry;
  return nullptr;
}
// The same, made when missing.
inline ClockRhythmCount& CountOfEvent(std::vector<ClockRhythmCount>& counts, uint32_t event) {
  for (ClockRhythmCount& c : counts)
    if (c.event == event) return c;
  counts.push_back({});
  counts.back().event = event;
  return counts.back();
}

// A row is said to be in step when at least this share of its looked-at samples are, and the
// loop leaves it at least once in two rounds.
inline constexpr double kMinInStepShare = 0.5;

class ClockRhythm {
 public:
  // Watches the timer clocks among `events` (software cpu-clock and task-clock that take
  // samples) where another event takes samples too; looks at the first `max_samples` of their
  // samples in all (the order of samples decides, and a million of them tell it as well as all).
  explicit ClockRhythm(const std::vector<EventDesc>& events, size_t max_samples = 1 << 20);

  bool Watches(uint32_t event) const { return event < watched_.size() && watched_[event]; }
  // A sample the table counts, tallied as stack `stack`.
  void Add(const Sample& sample, uint32_t stack);
  // A sample of a watched event the table does not count (its thread filtered out): the
  // thread's run is broken there.
  void Break(const Sample& sample);
  // A sample of another event, tallied as `stack`: what lies between the clock's samples.
  void AddOther(const Sample& sample, uint32_t stack);
  bool watches_any() const { return watches_any_; }

  using StackCounts = ClockRhythmStackCounts;
  struct Result {
    // Events with a thread in step, or with pairs of samples that stepped over another row.
    std::vector<ClockRhythmFinding> findings;
    // Per event found (parallel to findings): per stack, its counts.
    std::vector<absl::flat_hash_map<uint32_t, StackCounts>> stacks;
    // Per event found: consecutive samples in step on two different stacks, (from, to), with
    // how often.
    std::vector<absl::flat_hash_map<std::pair<uint32_t, uint32_t>, uint64_t>> steps;
    // Per event found: consecutive samples of the other events on a thread on two different
    // stacks, (from, to), with how often: where the thread entered the rows of `to`.
    std::vector<absl::flat_hash_map<std::pair<uint32_t, uint32_t>, uint64_t>> other_steps;
    // Per event found: the clock's own consecutive samples on a thread on two different stacks,
    // (from, to), with how often: where its samples show the thread entering the rows of `to`.
    std::vector<absl::flat_hash_map<std::pair<uint32_t, uint32_t>, uint64_t>> clock_steps;
  };
  // `row_of_stack(stack)` is the row (the leaf's key) a stack's sample counts for by itself:
  // what "the same row" means.
  template <typename RowOf>
  Result Find(RowOf row_of_stack) const {
    return FindWith([&](uint32_t stack) { return static_cast<uint64_t>(row_of_stack(stack)); });
  }

 private:
  static constexpr uint32_t kBreak = UINT32_MAX;
  struct Run {
    uint64_t last_time = 0;
    bool started = false;
    std::vector<uint32_t> stacks;  // kBreak where the run is broken
    std::vector<uint64_t> times;   // per entry of `stacks` (0 for a break)
    // Other events' samples on the thread: what lies between two of the clock's samples is found
    // by time, as the input may give one event's samples ahead of another's.
    struct Other {
      uint64_t time;
      uint32_t stack, event;
    };
    std::vector<Other> others;
  };
  void Push(Run& run, uint32_t entry, uint64_t time);
  Result FindWith(const std::function<uint64_t(uint32_t)>& row_of_stack) const;
  Run& RunOf(const Sample& sample);

  std::vector<bool> watched_;
  std::vector<uint32_t> watched_events_;
  bool watches_any_ = false;
  std::vector<uint64_t> periods_;  // per event: its period in ns when known from the attribute
  size_t max_samples_;
  size_t kept_ = 0;
  // Per (pid, tid, event), in the order first seen.
  absl::flat_hash_map<std::tuple<uint32_t, uint32_t, uint32_t>, size_t> run_index_;
  std::vector<std::pair<uint32_t, Run>> runs_;  // event, run
};

// How far a stretch of a row's samples between the loop's entering and leaving it may be off, in
// samples: the stretch's edges are where the phase decides. (Seen: 0.05 on calls of 82 us, some
// 1.6 samples each at 20 kHz, that came out 2-4 % off; a quarter allows five times that.)
inline constexpr double kStretchEdgeShare = 0.25;

// The share of its count that `event`'s samples in a row so counted may be off by (empty: the
// row is not in step, or is never left by the loop): kStretchEdgeShare a time the loop leaves
// it, against its samples in step. `inclusive`: the row's Total% samples.
std::optional<double> ClockRhythmReach(const ClockRhythmFinding& finding,
                                       const ClockRhythmCount& count, bool inclusive);
// The share of its count that the clock's samples in a row may be off by for the periods that
// stepped over other rows' work (ClockRhythmCount::self_stepped): each such period may be
// theirs. Empty when none stepped. From the row's own samples, for Total% too: a caller's
// periods hold its callees' work by right.
std::optional<double> ClockSteppingReach(const ClockRhythmCount& count);
std::string ClockSteppingReason(const ClockRhythmFinding& finding, const ClockRhythmCount& count,
                                double reach, const std::vector<EventDesc>& events);
// Whether the other events' samples show the row entered more often than the clock sampled it
// (at least kMinShortCallEntries times): its calls are on average shorter than the clock's
// period, and the clock's share of them cannot be bounded (ClockShortCallsReason).
bool ClockStepsOverMostCalls(const ClockRhythmCount& count, bool inclusive);
std::string ClockShortCallsReason(const ClockRhythmFinding& finding, const ClockRhythmCount& count,
                                  bool inclusive, const std::vector<EventDesc>& events);
// The same read from the clock's own samples, where the other events' cannot show it (all of
// theirs land in the row: a short call that faults between long ones that do not): at least
// kMinShortCallEntries of the row's samples came a period after one outside it, and they are
// nearly all (kMinClockEntryShare) of its samples that came a period after another: it seldom
// held the clock for two periods running.
bool ClockNeverHeldTwoPeriods(const ClockRhythmCount& count, bool inclusive);
std::string ClockIsolatedCallsReason(const ClockRhythmFinding& finding,
                                     const ClockRhythmCount& count, bool inclusive,
                                     const std::vector<EventDesc>& events);
// The share of its count that the clock's samples in a row may be off by at the edges of its
// calls, where the other events' samples show it entered at least kMinShortCallEntries times but
// no more often than the clock sampled it (its calls a period or longer on average): a
// kStretchEdgeShare of a period a call, against its samples. A clock of fixed period that keeps
// to a loop's phase moves each call's count by up to a sample, the same way each time, and
// calls a few periods long leave that beyond the interval (seen: calls of 1.1 periods 8 % off,
// of 1.8 periods 1-4 % off, with intervals of 2-4 %). Empty where the row shows no entries.
std::optional<double> ClockCallEdgeReach(const ClockRhythmCount& count, bool inclusive);
std::string ClockCallEdgeReason(const ClockRhythmFinding& finding, const ClockRhythmCount& count,
                                bool inclusive, double reach, const std::vector<EventDesc>& events);
// The reason, in the recording's numbers, for a value that `reach` moves beyond its interval.
std::string ClockRhythmReason(const ClockRhythmFinding& finding, const ClockRhythmCount& count,
                              bool inclusive, double reach, const std::string& event_name);

}  // namespace tprof
