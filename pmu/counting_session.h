// Counts groups of events on a task (and the threads and children it creates) and reads them
// back scaled: value * time_enabled / time_running, with the running share of each group, so
// that multiplexed groups give comparable numbers and a group that never ran gives nothing.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/counter_report.h"
#include "core/error.h"
#include "pmu/perf_event.h"

namespace tprof {

struct CountedEvent {
  std::string name;
  uint32_t type = 0;
  uint64_t config = 0;
};

// value * enabled / running; nothing when the counter never ran.
std::optional<double> ScaleCount(uint64_t value, uint64_t time_enabled, uint64_t time_running);

class CountingSession {
 public:
  // Opens each group on `pid` (all its threads and children, counting from its exec when
  // `enable_on_exec`) on `cpu` (-1: every CPU the task runs on).
  static Result<CountingSession> Open(const std::vector<std::vector<CountedEvent>>& groups,
                                      pid_t pid, int cpu, bool enable_on_exec);
  // Starts counting now (when not waiting for exec).
  Status Enable();
  // Reads every counter; groups as they were opened.
  Result<CounterReport> Read() const;

 private:
  struct Counter {
    PerfEventFd fd;
    std::string name;
  };
  std::vector<std::vector<Counter>> groups_;
};

}  // namespace tprof
