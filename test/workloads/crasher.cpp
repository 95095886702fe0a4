// Spins for a while in a known function, then dereferences a null pointer.
#include <time.h>

#include <cstdint>

namespace {
volatile uint64_t g_sink;
}  // namespace

__attribute__((noinline)) void spin_then_crash() {
  timespec start, now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  uint64_t x = 1;
  do {
    for (int i = 0; i < 10000; ++i) x = x * 6364136223846793005ULL + 1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 300000000L);
  g_sink = x;
  volatile int* null_pointer = nullptr;
  *null_pointer = 1;
}

int main() {
  spin_then_crash();
  return 0;
}
