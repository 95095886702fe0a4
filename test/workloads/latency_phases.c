// Workload for the latency view: a serial phase on one thread, then a parallel phase on THREADS
// threads at once, each phase a designed amount of CPU time per thread (measured on the thread's
// own CPU clock, so a busy machine stretches the wall time, not the work).
//   latency_phases SERIAL_MS PARALLEL_MS THREADS
// serial_phase computes SERIAL_MS; each thread's parallel_phase computes PARALLEL_MS, all
// starting together (a barrier). With THREADS up to the CPUs free, the CPU view shows
// parallel_phase at THREADS x PARALLEL_MS and the wall clock (the latency view) at PARALLEL_MS.
// Each worker is pinned to a CPU of its own where there are enough, so that the scheduler cannot
// put them on one CPU; a busy machine can still run them one after the other. main prints the
// parallel phase's wall time, from the barrier to the last join:
//   parallel_wall_ms W
// the truth that bounds the latency view: the time when at least one worker ran is at most W.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t g_sink;
static long g_parallel_ms;
static pthread_barrier_t g_start;

static uint64_t ThreadCpuNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

// Inlined into each phase, so that every sample of a phase falls in its function.
__attribute__((always_inline)) static inline void Compute(long ms) {
  const uint64_t end = ThreadCpuNs() + (uint64_t)ms * 1000000ull;
  uint64_t x = 1;
  while (ThreadCpuNs() < end)
    for (int i = 0; i < 100000; i++) x = x * 6364136223846793005ull + 1;
  g_sink = x;
}

__attribute__((noinline)) void serial_phase(long ms) { Compute(ms); }

__attribute__((noinline)) void parallel_phase(long ms) { Compute(ms); }

static uint64_t MonotonicNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

// Pins the calling thread to the index-th CPU it may run on, when there is one.
static void PinToCpu(int index) {
  cpu_set_t allowed, one;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++) {
    if (!CPU_ISSET(cpu, &allowed) || seen++ != index) continue;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof(one), &one);
    return;
  }
}

static void* Worker(void* index) {
  PinToCpu((int)(intptr_t)index);
  pthread_barrier_wait(&g_start);
  parallel_phase(g_parallel_ms);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  const long serial_ms = atol(argv[1]);
  g_parallel_ms = atol(argv[2]);
  const int threads = atoi(argv[3]);
  if (threads < 1 || threads > 64) return 2;
  serial_phase(serial_ms);
  pthread_t workers[64];
  pthread_barrier_init(&g_start, 0, (unsigned)threads + 1);  // the workers and main
  for (int i = 0; i < threads; i++)
    if (pthread_create(&workers[i], 0, Worker, (void*)(intptr_t)i) != 0) return 1;
  pthread_barrier_wait(&g_start);
  const uint64_t start = MonotonicNs();
  for (int i = 0; i < threads; i++) pthread_join(workers[i], 0);
  printf("parallel_wall_ms %.3f\n", (double)(MonotonicNs() - start) / 1e6);
  return 0;
}
