// perf's own recipe for off-CPU time without BPF, and hotspot's: `perf record --switch-events`
// with a sample at every switch out (`-e context-switches -c 1`, or `-e sched:sched_switch`), with
// callchains. tprof record --off-cpu records the same: each switch out's sample gives a blocked
// interval its stack, and the switch record of the thread's return its end. This visitor turns
// them into the samples of the "off-cpu" event (core/model/event_unit.h) through the recorder's
// OffCpuTracker, so a perf recording reads as tprof's own: the switch event's samples pass
// unchanged, and each interval is one off-cpu sample, written when the thread came back.
#pragma once

#include <cstdint>

#include "core/model/off_cpu_tracker.h"
#include "core/model/profile.h"

namespace tprof {

class SwitchRecordOffCpu : public ForwardingVisitor {
 public:
  // `switch_event`: the event sampled at every switch out; `off_cpu_event`: the index the reader
  // gave the off-cpu event.
  SwitchRecordOffCpu(RecordVisitor& next, uint32_t switch_event, uint32_t off_cpu_event)
      : ForwardingVisitor(next), tracker_(switch_event, off_cpu_event) {}

  void OnSample(const Sample& sample) override;
  void OnTask(const TaskRecord& record) override;
  // A switch record (time order, as every record): only the returns end intervals.
  void OnSwitch(uint32_t tid, uint64_t time, bool out);
  // At the end of the input: threads still off the CPU (an attached recording's) count until
  // the last record's time.
  void Finish();

  uint64_t intervals() const { return tracker_.intervals(); }
  uint64_t switch_records() const { return switch_records_; }

 private:
  OffCpuTracker tracker_;
  uint64_t switch_records_ = 0;
};

}  // namespace tprof
