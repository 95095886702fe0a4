#include "core/perfdata/next_sample_off_cpu.h"

#include <utility>

namespace tprof {

void NextSampleOffCpu::OnSample(const Sample& sample) {
  auto it = pending_.find(sample.tid);
  if (it != pending_.end()) {
    Sample interval = std::move(it->second);
    pending_.erase(it);
    if (sample.time > interval.time) {
      interval.period = sample.time - interval.time;
      interval.time = sample.time;
      ++intervals_;
      next().OnSample(interval);
    }
  }
  if (sample.event == switch_event_) {
    pending_[sample.tid] = sample;
    return;
  }
  next().OnSample(sample);
}

}  // namespace tprof
