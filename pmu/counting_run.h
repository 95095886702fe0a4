// One live counting run, start to end: opens the groups on the target (a launched command, every
// thread of running processes, or every CPU), counts until the target ends, the duration passes
// or the user interrupts, hands every interval's scaled deltas to a callback on the way, and
// returns the total. The counting half of `tprof topdown` live, without the metric table.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/model/counter_report.h"
#include "pmu/counting_session.h"
#include "pmu/counting_watch.h"

namespace tprof {

struct CountingRunOptions {
  std::vector<std::string> command;  // launch this (counting from its exec), or
  std::vector<pid_t> pids;           // attach to every thread of these processes, or
  bool system_wide = false;          // count every CPU (while `command` runs, if given)
  double duration_seconds = 0;       // 0: until the target ends or Ctrl-C
  uint64_t interval_ns = 0;          // 0: no intervals
};

struct CountingRunResult {
  CounterReport total;  // with intervals: exactly the sum of the intervals' raw deltas, scaled
  CountingEnd end = CountingEnd::kTargetExited;
  uint64_t elapsed_ns = 0;
  std::string target;    // "the command", "3 threads of pid 42", "2 CPUs"
  int wait_status = 0;   // the launched command's
  size_t intervals = 0;  // how many on_interval calls, the last partial one included
  // One line each the reader should know: events counted in user space only because this user
  // may not count the kernel (perf_event_paranoid 2, the kernel's default, for a user who is
  // not root), as perf stat falls back.
  std::vector<std::string> notes;
  bool user_space_only = false;
};

// `on_interval(seconds since the start, that interval's counts)` runs at every interval and once
// more for the partial interval at the end, so that the intervals cover the whole run.
Result<CountingRunResult> RunCounting(
    const std::vector<std::vector<CountedEvent>>& groups, const CountingRunOptions& options,
    const std::function<Status(double seconds, const CounterReport& counts)>& on_interval);

}  // namespace tprof
