// perf record --off-cpu (perf 5.19 on, built with BPF) counts off-CPU time in a BPF map keyed by
// thread, user stack and task state, and when recording ends writes one sample of its "offcpu-time"
// event per key: the period the nanoseconds summed, the callchain the user stack, the time a
// made-up one past every real record (perf's OFF_CPU_TIMESTAMP, ~0 << 32, plus one per sample) so
// that they sort last. The reader names the event off-cpu; this visitor gives each such sample the
// time of the last real record instead, so that time ranges and durations stay those of the run.
// Nothing tells when a thread waited: Metadata::off_cpu_summed says so, and views that need the
// intervals (the latency view) refuse such profiles. Since perf's 2025 rework, waits longer than
// --off-cpu-thresh also come during the run, one sample each stamped when the thread ran again:
// real times, passed on as they are.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "core/model/profile.h"

namespace tprof {

// perf's name for the event (OFFCPU_EVENT).
inline constexpr std::string_view kPerfOffCpuEventName = "offcpu-time";

class SummedOffCpuTimes : public ForwardingVisitor {
 public:
  // `off_cpu_event`: the index of perf's offcpu-time event.
  SummedOffCpuTimes(RecordVisitor& next, uint32_t off_cpu_event)
      : ForwardingVisitor(next), off_cpu_event_(off_cpu_event) {}

  void OnSample(const Sample& sample) override {
    if (sample.event != off_cpu_event_ || sample.time < kMadeUpTimes) {
      if (sample.time < kMadeUpTimes) last_time_ = std::max(last_time_, sample.time);
      next().OnSample(sample);
      return;
    }
    summed_ = sample;
    summed_.time = last_time_;
    next().OnSample(summed_);
  }

 private:
  static constexpr uint64_t kMadeUpTimes = ~0ull << 32;
  uint32_t off_cpu_event_;
  uint64_t last_time_ = 0;
  Sample summed_;  // reused, so that rewriting does not allocate per sample
};

}  // namespace tprof
