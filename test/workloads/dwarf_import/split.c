/* Workload for the --call-graph dwarf import tests, built by the test without frame pointers
 * (static and PIE): main -> heavy -> spin and main -> light -> spin, heavy doing three times the
 * work of light, so spin has all the self time, heavy 3/4 and light 1/4 of it as callers, and
 * main, __libc_start_main and _start every sample. `split SECONDS` runs for that much CPU time.
 * -DVARIANT=N makes a different build of the same program. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef VARIANT
#define VARIANT 1
#endif

volatile uint64_t g_sink;

static double CpuSeconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Each function keeps locals on the stack, so every frame is a real one with CFI. */
__attribute__((noinline)) uint64_t spin(uint64_t seed, int rounds) {
  volatile uint64_t local[4] = {seed, seed + 1, seed + 2, seed + VARIANT};
  uint64_t h = seed;
  for (int i = 0; i < rounds; ++i) h = (h ^ local[i & 3]) * 1099511628211ULL;
  return h;
}

__attribute__((noinline)) uint64_t heavy(uint64_t seed) {
  volatile uint64_t pad[8] = {0};
  pad[seed & 7] = seed;
  return spin(seed + pad[1], 300000) + 1;
}

__attribute__((noinline)) uint64_t light(uint64_t seed) {
  volatile uint64_t pad[16] = {0};
  pad[seed & 15] = seed;
  return spin(seed + pad[2], 100000) + 2;
}

/* Prints the CPU seconds each of heavy and light took: the truth of their shares on the machine
 * as it ran (3/4 and 1/4 by design; a loaded machine can make it otherwise). */
int main(int argc, char** argv) {
  double now = CpuSeconds();
  const double end = now + (argc > 1 ? atof(argv[1]) : 1.0);
  double heavy_seconds = 0, light_seconds = 0;
  uint64_t acc = 0;
  while (now < end) {
    acc += heavy(acc);
    const double mid = CpuSeconds();
    heavy_seconds += mid - now;
    acc += light(acc);
    now = CpuSeconds();
    light_seconds += now - mid;
  }
  g_sink = acc;
  printf("%llu heavy %.6f light %.6f\n", (unsigned long long)acc, heavy_seconds, light_seconds);
  return 0;
}
