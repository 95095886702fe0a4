// What an event's values count: the software clocks (cpu-clock, task-clock) count nanoseconds;
// every other event counts occurrences of itself. Renderers choose ms or s for the clocks; the
// regression gate takes thresholds in time units for them.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <string_view>

namespace tprof {

enum class EventUnit { kCount, kNanoseconds };

// tprof record --off-cpu's synthetic event: the time threads spent off the CPU, one sample per
// blocked interval, its period the interval's nanoseconds. A software event tprof derives from
// context switches (never opened: its config is outside the kernel's software event numbers).
inline constexpr uint64_t kOffCpuEventConfig = 0x7470726f66000001;  // "tprof", 1
inline constexpr std::string_view kOffCpuEventName = "off-cpu";
// `report --off-cpu-reasons` splits it into one event per reason ("off-cpu:lock"), each sample
// of the off-cpu event read once more as its reason's: configs from this one up, by reason.
inline constexpr uint64_t kOffCpuReasonEventConfig = kOffCpuEventConfig + 0x100;
inline constexpr uint64_t kOffCpuReasonEvents = 0x100;  // room for that many reasons
inline bool IsOffCpuReasonEvent(uint64_t config) {
  return config >= kOffCpuReasonEventConfig &&
         config < kOffCpuReasonEventConfig + kOffCpuReasonEvents;
}

// The diff's derived event of an off-CPU recording: per function, its on-CPU clock time plus its
// off-CPU time (the gate's `func(P).wall`, `total.wall`).
inline constexpr std::string_view kWallTimeEventName = "wall";

// "cpu-clock", "task-clock", "off-cpu", "wall" and their modified forms ("cpu-clock:u") count
// nanoseconds.
inline EventUnit UnitOfEvent(std::string_view event_name) {
  const std::string_view base = event_name.substr(0, event_name.find(':'));
  return base == "cpu-clock" || base == "task-clock" || base == kOffCpuEventName ||
                 base == kWallTimeEventName
             ? EventUnit::kNanoseconds
             : EventUnit::kCount;
}

// A software clock (cpu-clock, task-clock): sampled by a timer, whose interrupts can come late or
// not at all (a host that holds the virtual CPU, interrupts held off) while its count keeps every
// nanosecond (seen: 14 ms of a 440 ms recording in stretches of 0.5-1.4 ms without a sample, and
// the rates of the functions they fell in 8 % high).
inline bool IsTimerClock(uint32_t type, uint64_t config) {
  return type == PERF_TYPE_SOFTWARE &&
         (config == PERF_COUNT_SW_CPU_CLOCK || config == PERF_COUNT_SW_TASK_CLOCK);
}

// Over a run, a clock in both modes whose reads count up to this share more than its samples'
// periods has missed nothing worth a word: each thread's last tick, late by part of a period, and
// restarts after switches add some 0.1-0.3 % (seen: 15 ms of a 6 s recording of the demo's five
// threads and a child). Its rows' own windows measure their share whatever the run's.
inline constexpr double kTimerLatenessShare = 0.01;

// A timer clock sampled in one mode only (:u or :k): the kernel drops its samples that fire in the
// other mode while its count keeps every nanosecond, so its sampled periods and a group's reads of
// it measure different times (seen: 149.5 faults/ms from the samples against 92.2 from the group's
// windows, and a truth of 92.2, in a function whose faults keep it in the kernel).
inline bool IsClockSampledInOneMode(uint32_t type, uint64_t config, bool exclude_user,
                                    bool exclude_kernel) {
  return IsTimerClock(type, config) && exclude_user != exclude_kernel;
}

}  // namespace tprof
