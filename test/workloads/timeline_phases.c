// Workload for the flame graph page's timeline: phases of a designed kind, one after another on
// the main thread, and a helper thread beside the first.
//   timeline_phases PHASE_MS
// main: compute_phase computes PHASE_MS of its own CPU time; sleep_phase sleeps PHASE_MS;
// fault_phase computes PHASE_MS while first-touching a new page every FAULT_EVERY_US of CPU
// time (about 1000 / FAULT_EVERY_US faults per ms). The helper's helper_phase computes PHASE_MS
// beside compute_phase. It prints what it counted itself, the truth of the fault phase's rate:
//   fault_phase faults F task_clock_ns T
// (minor faults from getrusage of the thread, its task-clock from a counter of its own, around
// the phase alone), and each phase's wall-clock bounds from the process start:
//   phase NAME START_NS END_NS
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "task_clock.h"

#define FAULT_EVERY_US 50

static volatile uint64_t g_sink;
static uint64_t g_start_ns;

static uint64_t Now(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

// Computes until the thread's CPU clock has advanced `ns`.
__attribute__((always_inline)) static inline void Compute(uint64_t ns) {
  const uint64_t end = Now(CLOCK_THREAD_CPUTIME_ID) + ns;
  uint64_t x = g_sink | 1;
  while (Now(CLOCK_THREAD_CPUTIME_ID) < end)
    for (int i = 0; i < 2000; i++) x = x * 6364136223846793005ull + 1;
  g_sink = x;
}

static void Phase(const char* name, uint64_t start, uint64_t end) {
  printf("phase %s %llu %llu\n", name, (unsigned long long)(start - g_start_ns),
         (unsigned long long)(end - g_start_ns));
}

__attribute__((noinline)) void compute_phase(long ms) { Compute((uint64_t)ms * 1000000ull); }

__attribute__((noinline)) void helper_phase(long ms) { Compute((uint64_t)ms * 1000000ull); }

__attribute__((noinline)) void sleep_phase(long ms) {
  const uint64_t end = Now(CLOCK_MONOTONIC) + (uint64_t)ms * 1000000ull;
  for (uint64_t now; (now = Now(CLOCK_MONOTONIC)) < end;) {
    const uint64_t left = end - now;
    struct timespec t = {(time_t)(left / 1000000000ull), (long)(left % 1000000000ull)};
    nanosleep(&t, NULL);
  }
}

__attribute__((noinline)) void fault_phase(long ms) {
  const long page = sysconf(_SC_PAGESIZE);
  const size_t pages = (size_t)ms * 1000 / FAULT_EVERY_US + 1;
  char* area = mmap(NULL, pages * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                    -1, 0);
  if (area == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  const int counter = OpenTaskClock();
  int ok = counter >= 0;
  struct rusage before, after;
  getrusage(RUSAGE_THREAD, &before);
  const uint64_t clock_before = ok ? ReadTaskClock(counter, &ok) : 0;
  const uint64_t end = Now(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)ms * 1000000ull;
  for (size_t p = 0; p < pages && Now(CLOCK_THREAD_CPUTIME_ID) < end; p++) {
    area[p * (size_t)page] = 1;
    Compute(FAULT_EVERY_US * 1000ull);
  }
  const uint64_t clock_after = ok ? ReadTaskClock(counter, &ok) : 0;
  getrusage(RUSAGE_THREAD, &after);
  printf("fault_phase faults %ld task_clock_ns %llu\n", after.ru_minflt - before.ru_minflt,
         ok ? (unsigned long long)(clock_after - clock_before) : 0ull);
  munmap(area, pages * (size_t)page);
}

static long g_ms;

static void* Helper(void* unused) {
  (void)unused;
  pthread_setname_np(pthread_self(), "phase-helper");
  helper_phase(g_ms);
  return NULL;
}

int main(int argc, char** argv) {
  g_ms = argc > 1 ? atol(argv[1]) : 300;
  g_start_ns = Now(CLOCK_MONOTONIC);
  pthread_t helper;
  pthread_create(&helper, NULL, Helper, NULL);
  uint64_t t0 = Now(CLOCK_MONOTONIC);
  compute_phase(g_ms);
  uint64_t t1 = Now(CLOCK_MONOTONIC);
  Phase("compute", t0, t1);
  pthread_join(helper, NULL);
  t0 = Now(CLOCK_MONOTONIC);
  sleep_phase(g_ms);
  t1 = Now(CLOCK_MONOTONIC);
  Phase("sleep", t0, t1);
  t0 = Now(CLOCK_MONOTONIC);
  fault_phase(g_ms);
  t1 = Now(CLOCK_MONOTONIC);
  Phase("fault", t0, t1);
  return 0;
}
