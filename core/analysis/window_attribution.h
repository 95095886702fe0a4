// Per-function counter attribution from group-read samples. Each sample carries the running
// totals of every group member; the deltas between two consecutive samples of one counter
// instance (one thread on one CPU) are a window of execution. A window is credited to a function
// only when it starts and ends in that function; otherwise its deltas are discarded (the sample
// still counts toward the function's share). Counters are per thread per CPU (as perf opens
// them), so a window is two samples of one thread on one CPU with no sample of that thread on
// another CPU between them: across a migration the instance's counts may include stretches of
// other functions that ran on its CPU while the thread went and came back, so such a window is
// discarded too. With a short window inside a long period (burst
// sampling) most windows stay inside one function, which is what makes the credited metrics mean
// something per function.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/profile.h"

namespace tprof {

struct FunctionCounters {
  std::vector<double> deltas;  // per group member, leader first: sums over credited windows
  // members x members, row-major: the sums over credited windows of delta_i * delta_j, from
  // which the window-to-window variation (and so a metric's interval) is estimated.
  std::vector<double> products;
  uint64_t windows_credited = 0;
  uint64_t windows_discarded = 0;  // windows that ended in this function but started elsewhere
  uint64_t samples = 0;
  double longest_credited = 0;  // the leader's largest delta in one credited window
  // Per member: the events that samples of that member taken on its own (AddInterloper) place in
  // other functions, inside this function's credited windows: work those windows stepped over
  // and credited here, seen directly (empty until one is seen).
  std::vector<double> stepped_events;
  uint64_t stepped_samples = 0;                  // how many such samples, all members
  std::map<std::string, uint64_t> stepped_over;  // their functions, with how many
};

// The windows between two functions, pooled per (start, end) pair: those discarded only because
// their ends fall in two functions. Each holds the end of one call and the start of the next, so
// their counts tell whether events gather at calls' edges (see window_bias).
struct EdgeWindows {
  // How many of the pair's windows `longest` keeps: a stall is rare, and a pair with more
  // than this many of them beyond both functions' credited windows is flagged on these alone.
  static constexpr size_t kLongestKept = 8;
  std::vector<double> deltas;    // per member: sums over the pair's windows
  std::vector<double> products;  // members x members, as FunctionCounters::products
  uint64_t windows = 0;
  // The deltas (per member, leader first) of the pair's windows with the largest leader
  // deltas, at most kLongestKept, in no order: a stall (the kernel or the host holding the
  // thread, the clock going on) in a window no function is credited with.
  std::vector<std::vector<double>> longest;
};

// How a function's samples follow one another on its threads (windows that are whole: not
// across a migration, a throttle or a backwards counter): from which a window's chance of
// leaving a call and landing in another call of the same function is estimated.
struct SampleRuns {
  uint64_t windows_from = 0;  // windows that start in the function
  uint64_t windows_stay = 0;  // ... and end in it too
  // Two whole windows in a row from the function, out of it and back, with one sample of another
  // function between (A, B, A): a stretch of other functions' calls short enough for one sample
  // to land in it. Where such stretches are shorter than a window, a window can also step over
  // one without a sample in it and be credited whole to the function, the others' work inside;
  // a stretch of g windows (g < 1) is stepped over with chance 1 - g and holds a sample with
  // chance g, so sum over them of the time stepped over, (1 - g) g windows, is at most the number
  // of these returns: the credited windows' time that may be other functions' is at most this
  // many windows.
  uint64_t single_returns = 0;
  // The functions whose one sample lay between (the B of A, B, A), with how often: the kind of
  // work a window of this function may have stepped over.
  std::map<std::string, uint64_t> returned_over;
};

class WindowAttributor {
 public:
  // `members`: how many counters the group reads. `short_window`: the leader's hf_sample_period
  // when the kernel alternated a long and a short period (burst sampling), 0 otherwise. Then
  // only the short windows (samples whose period is the short one) are windows: the long ones
  // span calls by design, and one that begins and ends in the same function may still have run
  // others in between.
  explicit WindowAttributor(size_t members, uint64_t short_window = 0)
      : members_(members), short_window_(short_window) {}

  // `function` names where the sample's ip falls. Samples must come in time order per thread.
  void Add(const Sample& sample, const std::string& function);

  // A sample of `member`'s event taken on its own (the recorder samples a group's members
  // beside it), standing for `events` events in `function`: where it lies inside a window that
  // is then credited to another function, that window stepped over `function`'s work
  // (FunctionCounters::stepped_events). Samples must come in time order per thread.
  void AddInterloper(const Sample& sample, const std::string& function, size_t member,
                     uint64_t events);

  // The group's leader was throttled or unthrottled. Before Linux 6.16 throttling stops only the
  // leader while the members go on counting, so a window spanning it has member deltas from a
  // longer stretch than its leader's: the next window of every counter instance is discarded
  // (a profile's throttle records keep the event, not the instance).
  void Interrupt();

  const std::map<std::string, FunctionCounters>& functions() const { return functions_; }
  // Keyed by (start function, end function).
  const std::map<std::pair<std::string, std::string>, EdgeWindows>& edges() const { return edges_; }
  const std::map<std::string, SampleRuns>& runs() const { return runs_; }
  uint64_t windows_credited() const { return credited_; }
  uint64_t windows_discarded() const { return discarded_; }
  // Burst sampling: the long periods between the short windows, neither credited nor discarded.
  uint64_t long_periods() const { return long_periods_; }
  // Discarded windows as a share of all windows, in percent.
  double discarded_percent() const;
  // Per member, the last value read from each counter instance, summed: what the group counted
  // up to each instance's last sample (counters start at zero when enabled), to hold against a
  // counting run of the same work.
  std::vector<uint64_t> read_totals() const;
  // Per instance, the leader's first read less that sample's period, summed: what it counted
  // before the window of its first sample here (for a time range, before the range).
  uint64_t leader_read_before_first_samples() const { return leader_read_before_first_samples_; }

 private:
  struct Previous {
    std::vector<uint64_t> values;
    std::string function;
    std::string function_before;  // the sample's before it, when that window was whole
    bool interrupted = false;
    struct Interloper {
      size_t member;
      std::string function;
      uint64_t events;
    };
    std::vector<Interloper> interlopers;  // in the window this sample opened, so far
  };
  struct SeriesKey {
    uint32_t tid, cpu;
    bool operator<(const SeriesKey& o) const { return tid != o.tid ? tid < o.tid : cpu < o.cpu; }
  };

  size_t members_;
  uint64_t short_window_;
  std::map<SeriesKey, Previous> previous_;
  std::unordered_map<uint32_t, uint32_t> last_cpu_;  // per thread: the CPU of its last sample
  std::map<std::string, FunctionCounters> functions_;
  std::map<std::pair<std::string, std::string>, EdgeWindows> edges_;
  std::map<std::string, SampleRuns> runs_;
  uint64_t credited_ = 0;
  uint64_t discarded_ = 0;
  uint64_t long_periods_ = 0;
  uint64_t leader_read_before_first_samples_ = 0;
};

}  // namespace tprof
