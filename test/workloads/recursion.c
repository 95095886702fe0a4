// Workload for the recursion unwinding tests: direct recursion (rec calls itself DEPTH times),
// mutual recursion (ping and pong call each other DEPTH times) and deep recursion (deep calls
// itself 200 times, past a default 8 KiB stack copy), each ending in leaf(), none a tail call.
// Built twice: without frame pointers (only CFI can walk it) and with them (the reference).
//   recursion SECONDS
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

// GCC's noipa keeps it from cloning or specialising the recursive functions; clang has no such
// attribute and no such pass over functions with external linkage.
#if defined(__clang__)
#define KEEP_AS_WRITTEN __attribute__((noinline))
#else
#define KEEP_AS_WRITTEN __attribute__((noinline, noipa))
#endif

enum { kDepth = 12, kDeepDepth = 200 };

static volatile uint64_t g_sink;

static double CpuSeconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

KEEP_AS_WRITTEN uint64_t leaf(uint64_t seed) {
  volatile uint64_t local[4] = {seed, seed + 1, seed + 2, seed + 3};
  uint64_t h = seed;
  for (int i = 0; i < 20000; ++i) h = (h ^ local[i & 3]) * 1099511628211ULL;
  return h;
}

// The empty asm keeps the result live after the call, so no call is a tail call and no
// recursion becomes a loop.
KEEP_AS_WRITTEN uint64_t rec(int depth, uint64_t x) {
  volatile uint64_t pad[4] = {x, 0, 0, 0};
  uint64_t r = depth == 0 ? leaf(x + pad[0]) : rec(depth - 1, x * 3 + 1);
  __asm__ volatile("" : "+r"(r));
  return r + (uint64_t)depth;
}

KEEP_AS_WRITTEN uint64_t pong(int depth, uint64_t x);

KEEP_AS_WRITTEN uint64_t ping(int depth, uint64_t x) {
  volatile uint64_t pad[2] = {x, 1};
  uint64_t r = depth == 0 ? leaf(x + pad[1]) : pong(depth - 1, x + 1);
  __asm__ volatile("" : "+r"(r));
  return r * 2;
}

KEEP_AS_WRITTEN uint64_t pong(int depth, uint64_t x) {
  volatile uint64_t pad[6] = {x, 2};
  uint64_t r = depth == 0 ? leaf(x + pad[1]) : ping(depth - 1, x + 2);
  __asm__ volatile("" : "+r"(r));
  return r ^ 5;
}

KEEP_AS_WRITTEN uint64_t deep(int depth, uint64_t x) {
  volatile uint64_t pad[8] = {x};
  uint64_t r = depth == 0 ? leaf(x + pad[0]) : deep(depth - 1, x + 7);
  __asm__ volatile("" : "+r"(r));
  return r + 3;
}

int main(int argc, char** argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 1.0;
  double end = CpuSeconds() + seconds;
  uint64_t acc = 0;
  while (CpuSeconds() < end) {
    acc += rec(kDepth, acc);
    acc += ping(kDepth, acc);
    acc += deep(kDeepDepth, acc);
  }
  g_sink = acc;
  printf("%llu\n", (unsigned long long)acc);
  return 0;
}
