#include "core/model/off_cpu_tracker.h"

#include <linux/perf_event.h>

#include "core/model/event_unit.h"

namespace tprof {

EventDesc OffCpuEventDesc(const EventDesc& switch_event) {
  EventDesc desc = switch_event;
  desc.name = std::string(kOffCpuEventName);
  desc.config = kOffCpuEventConfig;
  desc.use_frequency = false;
  desc.period_or_frequency = 0;
  desc.group_leader = -1;
  desc.group_members.clear();
  return desc;
}

void OffCpuTracker::SawSample(const Sample& sample) {
  SawTime(sample.time);
  // A thread's last switch-out follows its exit record: it is the end, not a wait.
  if (sample.event != switch_event_ || exited_.contains(sample.tid)) return;
  Sample& kept = out_[sample.tid];
  kept = sample;
  kept.event = off_cpu_event_;
}

void OffCpuTracker::SawTask(const TaskRecord& record) {
  SawTime(record.time);
  if (!record.is_exit) return;
  exited_.insert(record.tid);
  out_.erase(record.tid);
}

std::optional<Sample> OffCpuTracker::SwitchedIn(uint32_t tid, uint64_t time) {
  SawTime(time);
  auto it = out_.find(tid);
  if (it == out_.end()) return std::nullopt;
  Sample interval = std::move(it->second);
  out_.erase(it);
  if (time <= interval.time) return std::nullopt;
  interval.period = time - interval.time;
  interval.time = time;  // written where the interval ends, in the stream's time order
  ++intervals_;
  return interval;
}

std::vector<Sample> OffCpuTracker::Finish() {
  std::vector<Sample> open;
  for (auto& [tid, sample] : out_) {
    if (last_time_ <= sample.time) continue;
    sample.period = last_time_ - sample.time;
    sample.time = last_time_;
    open.push_back(std::move(sample));
  }
  out_.clear();
  intervals_ += open.size();
  return open;
}

}  // namespace tprof
