#include "core/analysis/clock_left_out.h"

#include <linux/perf_event.h>

#include "core/model/event_unit.h"

namespace tprof {

ClockLeftOutTime::ClockLeftOutTime(const std::vector<EventDesc>& events)
    : totals_(events.size(), 0),
      across_interrupts_(events.size(), 0),
      interrupts_(events.size(), 0) {
  for (size_t e = 0; e < events.size(); ++e) {
    const EventDesc& d = events[e];
    const bool reads = (d.sample_type & PERF_SAMPLE_READ) && d.group_members.size() == 1 &&
                       d.group_members[0] == e && IsTimerClock(d.type, d.config);
    reads_itself_.push_back(reads);
    both_modes_.push_back(
        !IsClockSampledInOneMode(d.type, d.config, d.exclude_user, d.exclude_kernel));
    any_ |= reads;
  }
}

double ClockLeftOutTime::Add(const Sample& sample) {
  if (!reads_itself(sample.event) || sample.counter_values.size() != 1) return 0;
  const uint64_t read = sample.counter_values[0];
  const uint64_t interrupts = interrupts_[sample.event];
  auto [last, first] =
      last_read_.try_emplace({sample.event, sample.tid, sample.cpu}, LastRead{read, interrupts});
  double left_out = 0;
  if (!first && read >= last->second.read + sample.period)
    left_out = static_cast<double>(read - last->second.read - sample.period);
  const bool across_interrupt = last->second.interrupts != interrupts;
  last->second = {read, interrupts};
  if (across_interrupt && both_modes_[sample.event]) {
    across_interrupts_[sample.event] += left_out;
    return 0;
  }
  // A timer's lateness, which the next sample gives back, is under a period.
  if (both_modes_[sample.event] && left_out < 0.5 * static_cast<double>(sample.period))
    left_out = 0;
  totals_[sample.event] += left_out;
  return left_out;
}

}  // namespace tprof
