// The unit of an event's values (sums of sample periods), for people: the software clocks
// (cpu-clock, task-clock) count nanoseconds and read best as ms or s; every other event counts
// occurrences of itself and reads best with its name ("12,000,000 cycles"). Machine-readable
// outputs (JSON, CSV) keep the raw numbers.
#pragma once

#include <string>
#include <string_view>

#include "core/model/event_unit.h"

namespace tprof {

// How a column of values of one event is written: a time unit chosen once for the column (so
// that rows compare at a glance), or a plain count.
struct ValueScale {
  double divisor = 1;  // raw value / divisor = the number shown
  int decimals = 0;
  std::string unit;  // "ms", "s"; for counts the event's name
};

// Milliseconds when `largest` (the largest absolute value to show, in ns) is below 100 s, else
// seconds; counts as they are, labelled with the event's name.
ValueScale ScaleForEvent(std::string_view event_name, double largest);

// `value` in the scale's unit without the unit ("457.000"); `sign` adds '+' to positive values.
std::string FormatScaled(const ValueScale& scale, double value, bool sign = false);

}  // namespace tprof
