// Version 2 of the stream-diff workload (test/integration/stream_diff_test.cpp builds it and
// stream_v2/ with the system compiler and compares their hot streams). Every function is
// noinline so that each is a callchain frame of its own; each hot loop sits on one line so the
// samples of a function fall on few lines.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#ifndef FLAG_ROUNDS
#define FLAG_ROUNDS 1  // v2 builds with -DFLAG_ROUNDS=3: more work, the same source lines
#endif

static volatile uint64_t sink;

// Called first by every hot function so that each sets up a frame (GCC omits the frame pointer
// of leaf functions even with -fno-omit-frame-pointer, and the caller would vanish from the
// callchains).
__attribute__((noinline)) uint64_t seed(uint64_t v) {
  asm volatile("" : "+r"(v));
  return v;
}

// Changed in v2: the same loop on different work (its line differs).
__attribute__((noinline)) uint64_t slow_func(uint64_t n) {
  uint64_t x = seed(1);
  for (uint64_t i = 0; i < n * 2; ++i) x = x * 6364136223846793005ull + (i ^ (x >> 17));
  return x;
}

// New in v2, in place of old_only_func. These lines, longer than the
// ones they replace, move hot_loop down by five lines: its samples then
// fall on other line numbers, which the source-line map takes back to v1's.
__attribute__((noinline)) uint64_t new_only_func(uint64_t n) {
  uint64_t x = seed(11);
  uint64_t y = 13;
  for (uint64_t i = 0; i < n; ++i) x += (x >> 3) ^ (i * 0x2545f4914f6cdd1dull);
  y ^= x;
  x += y;
  return x;
}

// Unchanged in v2, but v2 inserts lines above it: it moves.
__attribute__((noinline)) uint64_t hot_loop(uint64_t n) {
  uint64_t x = seed(3);
  for (uint64_t i = 0; i < n; ++i) x = (x ^ (i * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
  return x;
}

// The same source in both versions; FLAG_ROUNDS (a compiler flag) changes its code.
__attribute__((noinline)) uint64_t flag_func(uint64_t n) {
  uint64_t x = seed(5);
  for (uint64_t i = 0; i < n * FLAG_ROUNDS; ++i) x = (x + i) * 0xc2b2ae3d27d4eb4full;
  return x;
}

int main(int argc, char** argv) {
  uint64_t scale = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1;
  uint64_t n = 40000000ull * scale;
  uint64_t total = 0;
  total += slow_func(n);
  total += new_only_func(n);
  total += hot_loop(n);
  total += flag_func(n);
  sink = total;
  std::printf("%llu\n", static_cast<unsigned long long>(total & 0xff));
  return 0;
}
