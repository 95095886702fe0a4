// Off-CPU time for `tprof record --off-cpu` (and perf's --switch-events recordings of the same,
// core/perfdata/switch_record_off_cpu.h): the kernel samples a thread's stack each time it
// leaves the CPU (the context-switches software event at period 1) and reports each return to
// the CPU (PERF_RECORD_SWITCH); the two, in time order, give each blocked interval its length and
// the stack it blocked in. Each interval becomes one sample of the "off-cpu" event, its period
// the interval in nanoseconds, so that every view (table, folded stacks, flame graph, exports,
// diff) weighs off-CPU time as it weighs any other event.
#pragma once

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

class OffCpuTracker {
 public:
  explicit OffCpuTracker(uint32_t off_cpu_event) : off_cpu_event_(off_cpu_event) {}

  // A thread left the CPU: its stack is kept until it runs again.
  void SwitchedOut(const Sample& sample);
  // The thread runs again: the off-CPU sample of the interval, when its start was seen.
  std::optional<Sample> SwitchedIn(uint32_t tid, uint64_t time);
  // A thread ended: its last switch-out (the exit itself) is not time spent waiting.
  void Exited(uint32_t tid);
  // Threads still off the CPU when recording ends (Ctrl-C, --duration, attached targets):
  // counted until `end`.
  std::vector<Sample> Finish(uint64_t end);

  uint64_t intervals() const { return intervals_; }

 private:
  uint32_t off_cpu_event_;
  absl::flat_hash_map<uint32_t, Sample> out_;  // by tid
  absl::flat_hash_set<uint32_t> exited_;
  uint64_t intervals_ = 0;
};

}  // namespace tprof
