// Workload for the off-CPU tests: functions that wait for designed times (nanosleep: at least the
// time asked for), and one that only computes.
//   off_cpu LONG_MS SHORT_MS ROUNDS SPIN_ITERATIONS
//   wait_long sleeps ROUNDS x LONG_MS, wait_short ROUNDS x SHORT_MS, spin never sleeps.
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

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
  if (argc != 5) return 2;
  const long long_ms = atol(argv[1]), short_ms = atol(argv[2]);
  const int rounds = atoi(argv[3]);
  wait_long(long_ms, rounds);
  spin(strtoull(argv[4], 0, 10));
  wait_short(short_ms, rounds);
  return 0;
}
