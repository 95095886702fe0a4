// The calling thread's task-clock, counted by a perf counter of its own: the time the thread is
// switched in, by the clock that stamps the kernel's switch records and samples. The off-CPU
// workloads measure themselves with it (a thread's CPU-time clock leaves out time the host took
// the vCPU away, which the switch records count as on the CPU).
#pragma once

#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

// A counter of this thread alone (not inherited by threads it starts); -1 when refused.
static inline int OpenTaskClock(void) {
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

// Nanoseconds counted so far; 0 with *ok cleared when the read fails.
static inline uint64_t ReadTaskClock(int counter, int* ok) {
  uint64_t ns = 0;
  if (read(counter, &ns, sizeof ns) != sizeof ns) *ok = 0;
  return ns;
}
