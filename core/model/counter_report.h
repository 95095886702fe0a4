// Counts from a counting run (perf stat's -x, CSV or -j JSON output, or tprof's own saved counts),
// kept in the groups that measured them: in perf's outputs a group is a run of consecutive rows
// with the same run time and running percentage. Values are as perf printed them, already scaled
// by time_enabled / time_running.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tprof {

struct CounterValue {
  std::string event;  // as the tool named it: "CPU_CYCLES", "armv8_pmuv3_0/cpu_cycles/", "r11"
  std::optional<double> value;  // empty: "<not counted>" or "<not supported>"
};

struct CounterGroup {
  std::vector<CounterValue> counters;
  uint64_t run_time = 0;         // ns the group was counting
  double running_percent = 100;  // of the time it was enabled
};

struct CounterReport {
  std::string format;  // "perf stat CSV", "perf stat JSON", "tprof counts"
  std::vector<CounterGroup> groups;
};

}  // namespace tprof
