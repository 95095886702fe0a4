// A function that never faults, whose calls are separated by a short call that does: the window
// method's bias that no window of its own shows. `step_over_work` computes for WORK_US (default
// 1000) microseconds of its CPU time;
// `step_over_touch` maps 4 fresh pages, touches them (4 faults) and unmaps them, in about 10 us.
// A 250 us window that starts and ends in step_over_work steps over step_over_touch's calls
// without a sample in them, and credits their faults to step_over_work; with calls of 1 ms most
// of its windows lie inside one call, so its windows' ends do not show it.
//   step_over SECONDS [WORK_US]   (for SECONDS, and at least 500 rounds)
// Prints what the workload counted itself around each function's calls (getrusage's minor faults
// of this thread, and its CPU clock), so the test's truth is what the kernel counted:
//   work_faults N work_ns N touch_faults N touch_ns N touch_own_ns N
// touch_ns is the whole touching phase (the mmap and munmap calls, rows of their own in a
// profile, included); touch_own_ns is the touching loop alone, step_over_touch's own time and its
// faults' (CLOCK_MONOTONIC around the loop, read in the vDSO: no system call, and so no kernel
// entry of its own, inside the function measured; a loop of a few us is seldom preempted).
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

static volatile unsigned long g_sink;
static double g_touch_own_s;

static double Seconds(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long MinorFaults(void) {
  struct rusage usage;
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

// Steps of arithmetic a call makes: calibrated at the start to take WORK_US, so that the call
// calls nothing (every sample of it falls in it).
static long g_work_steps = 1000;

__attribute__((noinline)) void step_over_work(void) {
  unsigned long x = g_sink;
  for (long i = 0; i < g_work_steps; ++i) x = x * 6364136223846793005ul + 1442695040888963407ul;
  g_sink = x;
}

__attribute__((noinline)) void step_over_touch(void) {
  const size_t bytes = 4 * 4096;
  char* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) abort();
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;
  clock_gettime(CLOCK_MONOTONIC, &end);
  g_touch_own_s +=
      (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) * 1e-9;
  g_sink += (unsigned long)p[4096];
  munmap(p, bytes);
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? atof(argv[1]) : 2;
  const double work_seconds = (argc > 2 ? atof(argv[2]) : 1000) * 1e-6;
  const double calibration_start = Seconds(CLOCK_THREAD_CPUTIME_ID);
  g_work_steps = 1000000;
  step_over_work();
  const double per_step = (Seconds(CLOCK_THREAD_CPUTIME_ID) - calibration_start) / 1e6;
  g_work_steps = (long)(work_seconds / per_step);
  const double end = Seconds(CLOCK_MONOTONIC) + seconds;
  long work_faults = 0, touch_faults = 0;
  double work_s = 0, touch_s = 0;
  // At least 500 rounds however loaded the machine is: the tests rely on the touching
  // function's faults (4 a round) being there.
  for (long round = 0; round < 500 || Seconds(CLOCK_MONOTONIC) < end; ++round) {
    long f0 = MinorFaults();
    double t0 = Seconds(CLOCK_THREAD_CPUTIME_ID);
    step_over_work();
    double t1 = Seconds(CLOCK_THREAD_CPUTIME_ID);
    long f1 = MinorFaults();
    step_over_touch();
    double t2 = Seconds(CLOCK_THREAD_CPUTIME_ID);
    long f2 = MinorFaults();
    work_faults += f1 - f0;
    touch_faults += f2 - f1;
    work_s += t1 - t0;
    touch_s += t2 - t1;
  }
  printf("work_faults %ld work_ns %.0f touch_faults %ld touch_ns %.0f touch_own_ns %.0f\n",
         work_faults, work_s * 1e9, touch_faults, touch_s * 1e9, g_touch_own_s * 1e9);
  return 0;
}
