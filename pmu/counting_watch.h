// Waits while counters count, until the target ends, a duration passes or the user interrupts,
// ticking at a fixed interval on the way (perf stat's -p, -a, --duration and -I).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "core/base/error.h"
#include "pmu/workload.h"

namespace tprof {

struct CountingWatchOptions {
  double duration_seconds = 0;   // 0: no limit
  uint64_t interval_ns = 0;      // 0: no ticks
  std::vector<pid_t> processes;  // attached (-p): the end comes when all have exited
  Workload* workload = nullptr;  // launched: started here, the end comes when it exits
};

enum class CountingEnd {
  kTargetExited,  // the launched command or every attached process
  kDuration,      // --duration passed (a launched command got SIGTERM and was waited for)
  kInterrupted,   // SIGINT, SIGTERM or SIGHUP (a launched command was waited for)
};

struct CountingStop {
  CountingEnd end = CountingEnd::kTargetExited;
  uint64_t elapsed_ns = 0;  // since the watch began, as the ticks count it
};

// Blocks the termination signals and waits. Starts `workload` once the signals are watched. At
// every interval calls on_tick with the nanoseconds since the watch began; an error from it ends
// the wait with that error. Attached processes and CPUs are left alone at the end; a launched
// workload is signalled (a forwarded signal, SIGTERM at the duration, SIGKILL at a second
// interrupt) and then its exit awaited, but not reaped.
Result<CountingStop> WatchCounting(const CountingWatchOptions& options,
                                   const std::function<Status(uint64_t elapsed_ns)>& on_tick);

}  // namespace tprof
