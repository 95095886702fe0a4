#include "core/perfdata/switch_record_off_cpu.h"

#include <algorithm>
#include <optional>

namespace tprof {

void SwitchRecordOffCpu::OnSample(const Sample& sample) {
  last_time_ = std::max(last_time_, sample.time);
  next().OnSample(sample);
  if (sample.event == switch_event_) tracker_.SwitchedOut(sample);
}

void SwitchRecordOffCpu::OnTask(const TaskRecord& record) {
  last_time_ = std::max(last_time_, record.time);
  if (record.is_exit) tracker_.Exited(record.tid);
  next().OnTask(record);
}

void SwitchRecordOffCpu::OnSwitch(uint32_t tid, uint64_t time, bool out) {
  ++switch_records_;
  last_time_ = std::max(last_time_, time);
  if (out) return;  // the switch event's sample, taken at the same moment, holds the stack
  if (std::optional<Sample> interval = tracker_.SwitchedIn(tid, time)) next().OnSample(*interval);
}

void SwitchRecordOffCpu::Finish() {
  for (const Sample& still_off : tracker_.Finish(last_time_)) next().OnSample(still_off);
}

}  // namespace tprof
