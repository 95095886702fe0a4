#include "core/perfdata/switch_record_off_cpu.h"

#include <optional>

namespace tprof {

void SwitchRecordOffCpu::OnSample(const Sample& sample) {
  next().OnSample(sample);
  tracker_.SawSample(sample);
}

void SwitchRecordOffCpu::OnTask(const TaskRecord& record) {
  tracker_.SawTask(record);
  next().OnTask(record);
}

void SwitchRecordOffCpu::OnSwitch(uint32_t tid, uint64_t time, bool out) {
  ++switch_records_;
  if (out) {  // the switch event's sample, taken at the same moment, holds the stack
    tracker_.SawTime(time);
    return;
  }
  if (std::optional<Sample> interval = tracker_.SwitchedIn(tid, time)) next().OnSample(*interval);
}

void SwitchRecordOffCpu::Finish() {
  for (const Sample& still_off : tracker_.Finish()) next().OnSample(still_off);
}

}  // namespace tprof
