// What an event's values count: the software clocks (cpu-clock, task-clock) count nanoseconds;
// every other event counts occurrences of itself. Renderers choose ms or s for the clocks; the
// regression gate takes thresholds in time units for them.
#pragma once

#include <string_view>

namespace tprof {

enum class EventUnit { kCount, kNanoseconds };

// "cpu-clock", "task-clock" and their modified forms ("cpu-clock:u") count nanoseconds.
inline EventUnit UnitOfEvent(std::string_view event_name) {
  const std::string_view base = event_name.substr(0, event_name.find(':'));
  return base == "cpu-clock" || base == "task-clock" ? EventUnit::kNanoseconds : EventUnit::kCount;
}

}  // namespace tprof
