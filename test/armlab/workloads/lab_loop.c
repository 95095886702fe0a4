// The arm lab's workload: a fixed amount of integer work whose instruction count is the same on
// every run, so the emulated PMU's counts (cycles = 2 x instructions under -icount shift=1) are an
// exact oracle for tprof's.
//
//   main -> run_rounds -> middle -> heavy   two thirds of the loop iterations
//                                -> light   one third
//
// `lab_loop ROUNDS [THREADS]` runs ROUNDS rounds in each of THREADS threads (default 1).
// `lab_loop --wait ROUNDS` first waits for a line on stdin (for attaching with -p).
// `lab_loop --clock CALLS` reads CLOCK_MONOTONIC CALLS times instead (in the vdso).
// Built -O2 -g twice: with frame pointers (lab_loop_fp) and without (lab_loop_nofp, for DWARF
// unwinding); every function below is a real frame (noinline, extern).
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ITERATIONS_PER_ROUND 30000

volatile uint64_t g_sink;

__attribute__((noinline)) uint64_t heavy(uint64_t n, uint64_t seed) {
  uint64_t h = seed;
  for (uint64_t i = 0; i < n; ++i) h = (h ^ i) * 0x100000001b3ull;
  return h;
}

__attribute__((noinline)) uint64_t light(uint64_t n, uint64_t seed) {
  uint64_t h = seed;
  for (uint64_t i = 0; i < n; ++i) h = (h + i) * 0x9e3779b97f4a7c15ull;
  return h;
}

__attribute__((noinline)) uint64_t middle(uint64_t seed) {
  volatile uint64_t frame[2] = {seed, 0};  // a stack frame of its own, for the unwinders
  uint64_t a = heavy(2 * ITERATIONS_PER_ROUND / 3, frame[0]);
  frame[1] = a;
  return light(ITERATIONS_PER_ROUND / 3, frame[1]) + 1;
}

__attribute__((noinline)) void* run_rounds(void* arg) {
  long rounds = (long)arg;
  uint64_t acc = 0;
  for (long r = 0; r < rounds; ++r) acc += middle(acc + (uint64_t)r);
  g_sink = acc;
  return NULL;
}

// The vdso's clock_gettime does the work here: the kernel maps it, so its symbols come from
// the kernel's image, not from a file.
__attribute__((noinline)) void read_clock(long calls) {
  struct timespec ts;
  uint64_t acc = 0;
  for (long i = 0; i < calls; ++i) {
    clock_gettime(CLOCK_MONOTONIC, &ts);
    acc += (uint64_t)ts.tv_nsec;
  }
  g_sink = acc;
}

int main(int argc, char** argv) {
  int arg = 1;
  if (argc == 3 && strcmp(argv[1], "--clock") == 0) {
    read_clock(atol(argv[2]));
    return 0;
  }
  if (argc > arg && strcmp(argv[arg], "--wait") == 0) {
    ++arg;
    char line[16];
    if (!fgets(line, sizeof line, stdin)) return 1;
  }
  long rounds = argc > arg ? atol(argv[arg]) : 200;
  long threads = argc > arg + 1 ? atol(argv[arg + 1]) : 1;
  if (rounds <= 0 || threads <= 0 || threads > 64) {
    fprintf(stderr, "usage: lab_loop [--wait] ROUNDS [THREADS]\n");
    return 2;
  }
  pthread_t ids[64];
  for (long t = 1; t < threads; ++t) pthread_create(&ids[t], NULL, run_rounds, (void*)rounds);
  run_rounds((void*)rounds);
  for (long t = 1; t < threads; ++t) pthread_join(ids[t], NULL);
  printf("lab_loop: %ld rounds x %ld threads done\n", rounds, threads);
  return 0;
}
