// Workload for the off-CPU tests: functions that wait for designed times (nanosleep: at least the
// time asked for), and one that only computes.
//   off_cpu LONG_MS SHORT_MS ROUNDS SPIN_ITERATIONS [CLOCK_FILE]
//   wait_long sleeps ROUNDS x LONG_MS, wait_short ROUNDS x SHORT_MS, spin never sleeps.
// CLOCK_FILE gets the task-clock (ns) the workload counted of itself from main to its end, a
// counter of its own: what a test holds the sampled clock to.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "task_clock.h"

static volatile uint64_t g_sink;

static void Nap(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, 0);
}

__attribute__((noinline)) void wait_long(long ms, int rounds) {
  for (int i = 0; i < rounds; i++) Nap(ms);
}

__attribute__((noinline)) void wait_short(long ms, int rounds) {
  for (int i = 0; i < rounds; i++) Nap(ms);
}

__attribute__((noinline)) void spin(uint64_t iterations) {
  for (uint64_t i = 0; i < iterations; i++) g_sink += i;
}

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) return 2;
  int clock = -1;
  if (argc == 6) {
    clock = OpenTaskClock();
    if (clock < 0) return 1;
  }
  const long long_ms = atol(argv[1]), short_ms = atol(argv[2]);
  const int rounds = atoi(argv[3]);
  wait_long(long_ms, rounds);
  spin(strtoull(argv[4], 0, 10));
  wait_short(short_ms, rounds);
  if (clock >= 0) {
    int ok = 1;
    const uint64_t ns = ReadTaskClock(clock, &ok);
    FILE* out = fopen(argv[5], "w");
    if (!ok || !out) return 1;
    fprintf(out, "%llu\n", (unsigned long long)ns);
    if (fclose(out) != 0) return 1;
  }
  return 0;
}
