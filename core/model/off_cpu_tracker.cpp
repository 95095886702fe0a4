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

void OffCpuTracker::SwitchedOut(const Sample& sample) {
  // A thread's last switch-out follows its exit record: it is the end, not a wait.
  if (exited_.contains(sample.tid)) return;
  Sample& kept = out_[sample.tid];
  kept = sample;
  kept.event = off_cpu_event_;
}

std::optional<Sample> OffCpuTracker::SwitchedIn(uint32_t tid, uint64_t time) {
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

void OffCpuTracker::Exited(uint32_t tid) {
  exited_.insert(tid);
  out_.erase(tid);
}

std::vector<Sample> OffCpuTracker::Finish(uint64_t end) {
  std::vector<Sample> open;
  for (auto& [tid, sample] : out_) {
    if (end <= sample.time) continue;
    sample.period = end - sample.time;
    sample.time = end;
    open.push_back(std::move(sample));
  }
  out_.clear();
  intervals_ += open.size();
  return open;
}

}  // namespace tprof
