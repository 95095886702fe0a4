// Hot loops in always_inline helpers, for the inlined-function rows test (test/integration/
// inline_rows_test.cpp builds it with -O2 -g and compares tprof's rows with addr2line -i):
// one helper inlined into one noinline function, two levels of inlining, and one helper
// inlined into two callers. HELPER_WORK scales hot_helper's loop (the diff's slower build).
#include <stdlib.h>

#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))

#ifndef HELPER_WORK
#define HELPER_WORK 1
#endif

ALWAYS_INLINE unsigned long hot_helper(unsigned long n, unsigned long s) {
  for (unsigned long i = 0; i < n * HELPER_WORK; ++i) s = s * 6364136223846793005UL + i;
  return s;
}

NOINLINE unsigned long outer(unsigned long n) {
  unsigned long s = hot_helper(n, n | 1);
  return s ^ (s >> 7);
}

ALWAYS_INLINE unsigned long innermost(unsigned long n, unsigned long s) {
  for (unsigned long i = 0; i < n; ++i) s = (s ^ i) * 0x9E3779B97F4A7C15UL;
  return s;
}

ALWAYS_INLINE unsigned long middle(unsigned long n, unsigned long s) {
  s = innermost(n, s);
  for (unsigned long i = 0; i < n / 2; ++i) s = (s + (s >> 5)) * 2862933555777941757UL + i;
  return s;
}

NOINLINE unsigned long two_levels(unsigned long n) { return middle(n, n + 3); }

ALWAYS_INLINE unsigned long shared_helper(unsigned long n, unsigned long s) {
  for (unsigned long i = 0; i < n; ++i) s = (s + i) * 0xff51afd7ed558ccdUL;
  return s;
}

NOINLINE unsigned long caller_a(unsigned long n) { return shared_helper(n, n ^ 0x55); }

NOINLINE unsigned long caller_b(unsigned long n) { return shared_helper(2 * n, n ^ 0xaa); }

int main(int argc, char** argv) {
  unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000000;
  volatile unsigned long sink = 0;
  sink += outer(n);
  sink += two_levels(n);
  sink += caller_a(n);
  sink += caller_b(n);
  return sink == 42 ? 1 : 0;
}
