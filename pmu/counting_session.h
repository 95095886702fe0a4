// Counts groups of events on a target and reads them back scaled: value * time_enabled /
// time_running, with the running share of each group, so that multiplexed groups give comparable
// numbers and a group that never ran gives nothing.
//
// A target is one or more (pid, cpu) instances: a launched task (pid, -1), every thread of
// attached processes (tid, -1) each, or every CPU (-1, cpu) each. Every group is opened once per
// instance, and a read sums each event's value, time_enabled and time_running over the instances
// before scaling, as perf stat aggregates them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/model/counter_report.h"
#include "pmu/perf_event.h"

namespace tprof {

struct CountedEvent {
  std::string name;
  uint32_t type = 0;
  uint64_t config = 0;
  bool exclude_kernel = false;  // user space only (:u)
};

// value * enabled / running; nothing when the counter never ran.
std::optional<double> ScaleCount(uint64_t value, uint64_t time_enabled, uint64_t time_running);

// Where one copy of every group is opened.
struct CountingInstance {
  pid_t pid = -1;  // -1: every task (with a cpu)
  int cpu = -1;    // -1: wherever the task runs
};

// Every thread of the processes, from /proc (an error names a pid that does not exist).
Result<std::vector<CountingInstance>> ThreadsOfProcesses(const std::vector<pid_t>& pids);
// One instance per online CPU, all tasks (system-wide).
std::vector<CountingInstance> EveryCpu();

// Raw counts summed over the instances, in the groups' shape: what the kernel reported, so that
// deltas between two reads add up exactly to the difference of the totals.
struct RawCount {
  uint64_t value = 0;
  uint64_t time_enabled = 0;
  uint64_t time_running = 0;
};
struct RawCounts {
  std::vector<std::vector<RawCount>> groups;
};
// later - earlier, counter by counter (the two of one session).
RawCounts Subtract(const RawCounts& later, const RawCounts& earlier);

class CountingSession {
 public:
  // Opens each group on `pid` (all its threads and children, counting from its exec when
  // `enable_on_exec`) on `cpu` (-1: every CPU the task runs on).
  static Result<CountingSession> Open(const std::vector<std::vector<CountedEvent>>& groups,
                                      pid_t pid, int cpu, bool enable_on_exec);
  // Opens each group on every instance, disabled (Enable starts them). Task instances inherit to
  // the threads and children they create later, whose counts a read includes. A thread that
  // exited between the listing and the opening is skipped; if none is left, that is an error.
  static Result<CountingSession> Open(const std::vector<std::vector<CountedEvent>>& groups,
                                      const std::vector<CountingInstance>& instances);
  // Starts counting now (when not waiting for exec).
  Status Enable();
  // Stops counting; the counts stay readable.
  Status Disable();
  // Reads every counter, summed over the instances.
  Result<RawCounts> ReadRaw() const;
  // Reads every counter scaled; groups as they were opened.
  Result<CounterReport> Read() const;
  // Scales raw counts (totals or deltas) into a report with this session's event names.
  CounterReport ToReport(const RawCounts& counts) const;
  size_t instance_count() const { return instance_count_; }

 private:
  struct Counter {
    std::vector<PerfEventFd> fds;  // one per instance
    std::string name;
  };
  static Result<CountingSession> OpenWith(const std::vector<std::vector<CountedEvent>>& groups,
                                          const std::vector<CountingInstance>& instances,
                                          bool enable_on_exec);
  std::vector<std::vector<Counter>> groups_;
  size_t instance_count_ = 0;
};

}  // namespace tprof
