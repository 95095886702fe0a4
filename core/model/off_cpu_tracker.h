// Off-CPU time for `tprof record --off-cpu` (and perf's --switch-events recordings of the same,
// core/perfdata/switch_record_off_cpu.h): the kernel samples a thread's stack each time it
// leaves the CPU (the context-switches software event at period 1) and reports each return to
// the CPU (PERF_RECORD_SWITCH); the two, in time order, give each blocked interval its length and
// the stack it blocked in. Each interval becomes one sample of the "off-cpu" event, its period
// the interval in nanoseconds, so that every view (table, folded stacks, flame graph, exports,
// diff) weighs off-CPU time as it weighs any other event.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/model/profile.h"

namespace tprof {

// The synthetic event's EventDesc (kOffCpuEventName, kOffCpuEventConfig): a software event
// tprof derives (never opened), counting nanoseconds.
EventDesc OffCpuEventDesc(const EventDesc& switch_event);

// Fed a recording's records in time order: the samples of the switch event, thread exits, the
// returns to the CPU, and the time of every other record (where an unfinished wait ends).
class OffCpuTracker {
 public:
  // `switch_event`: the event sampled at every switch out; `off_cpu_event`: the index the
  // off-cpu event's samples get.
  OffCpuTracker(uint32_t switch_event, uint32_t off_cpu_event)
      : switch_event_(switch_event), off_cpu_event_(off_cpu_event) {}

  // A sample of the switch event: the thread left the CPU, and its stack is kept until it runs
  // again. Samples of other events only mark the time.
  void SawSample(const Sample& sample);
  // A thread's exit: its last switch-out (the exit itself) is not time spent waiting.
  void SawTask(const TaskRecord& record);
  // Any other record's time.
  void SawTime(uint64_t time) { last_time_ = std::max(last_time_, time); }
  // The thread runs again: the off-CPU sample of the interval, when its start was seen.
  std::optional<Sample> SwitchedIn(uint32_t tid, uint64_t time);
  // Threads still off the CPU when recording ends (Ctrl-C, --duration, attached targets):
  // counted until the latest time seen.
  std::vector<Sample> Finish();

  uint64_t intervals() const { return intervals_; }

 private:
  uint32_t switch_event_;
  uint32_t off_cpu_event_;
  absl::flat_hash_map<uint32_t, Sample> out_;  // by tid
  absl::flat_hash_set<uint32_t> exited_;
  uint64_t intervals_ = 0;
  uint64_t last_time_ = 0;
};

}  // namespace tprof
