// simpleperf's --trace-offcpu records a sched:sched_switch sample, with its callchain, each time a
// recorded thread leaves the CPU, but not the thread's return: simpleperf's own report counts a
// switch's off-CPU time up to the thread's next sample. This visitor turns those samples into
// the "off-cpu" event of tprof's own --off-cpu (core/model/event_unit.h), the same way: one
// sample per switch, its stack the switch's, its period the nanoseconds to the thread's next
// sample of any event, written at that sample's time (so the stream stays in time order). The
// interval's end is the thread's next sample, not its return to the CPU: with a clock sampled
// every P ns, up to P of on-CPU time after the thread ran again is counted as off-CPU.
#pragma once

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "core/model/profile.h"

namespace tprof {

class NextSampleOffCpu : public ForwardingVisitor {
 public:
  // `switch_event`: the index of the sched_switch event, whose samples become off-CPU
  // intervals (the event itself is renamed by the reader).
  NextSampleOffCpu(RecordVisitor& next, uint32_t switch_event)
      : ForwardingVisitor(next), switch_event_(switch_event) {}

  void OnSample(const Sample& sample) override;

  uint64_t intervals() const { return intervals_; }
  // Switches that no later sample of their thread ended (a thread's last, such as its exit):
  // not counted, as simpleperf does not count them.
  uint64_t unended() const { return pending_.size(); }

 private:
  uint32_t switch_event_;
  absl::flat_hash_map<uint32_t, Sample> pending_;  // by thread: its switch not yet ended
  uint64_t intervals_ = 0;
};

}  // namespace tprof
