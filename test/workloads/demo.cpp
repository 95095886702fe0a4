// tprof's demo workload: clearly separated hot functions of different kinds, so that a profile of
// it has a known answer.
//
//   main thread:    compute_kernel   (floating-point bound)      1 unit of CPU time
//                   pointer_chase    (memory-latency bound)      1 unit
//                   branchy_loop     (unpredictable branches)    1 unit
//   worker thread:  inline_mix_loop  (calls an always-inlined helper)  2 units
//   child process:  child_spin       (integer hash chain)              1 unit
//
// Each phase runs for a fixed amount of its own thread's CPU time (not wall time), so the expected
// shares hold however busy the machine is: 1/6 each for the main-thread functions and the child,
// 2/6 for inline_mix_loop. One unit is 1 s by default; `demo SECONDS_PER_UNIT` changes it.
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <numeric>
#include <thread>
#include <vector>

namespace {

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

volatile uint64_t g_sink;  // keeps results alive so the compiler cannot drop the work

// Runs `step` in batches until this thread has used `seconds` of CPU time.
template <typename Step>
void RunFor(double seconds, Step step) {
  double end = ThreadCpuSeconds() + seconds;
  while (ThreadCpuSeconds() < end) step();
}

__attribute__((noinline)) void compute_kernel(double seconds) {
  double x = 1.0001, acc = 0;
  RunFor(seconds, [&] {
    for (int i = 0; i < 200000; ++i) {
      acc = acc * x + 1e-9 * i;
      x = x * 0.9999999 + 1e-7;
    }
  });
  g_sink = static_cast<uint64_t>(acc);
}

__attribute__((noinline)) void pointer_chase(double seconds, const std::vector<uint32_t>& next) {
  uint32_t at = 0;
  RunFor(seconds, [&] {
    for (int i = 0; i < 20000; ++i) at = next[at];
  });
  g_sink = at;
}

__attribute__((noinline)) void branchy_loop(double seconds, const std::vector<uint8_t>& bits) {
  uint64_t a = 0, b = 0;
  size_t i = 0;
  RunFor(seconds, [&] {
    for (int k = 0; k < 100000; ++k) {
      if (bits[i]) {
        a += i * 3;
      } else {
        b ^= i;
      }
      i = (i + 1) & (bits.size() - 1);
    }
  });
  g_sink = a + b;
}

__attribute__((always_inline)) inline uint64_t mix_helper(uint64_t v) {
  v ^= v >> 33;
  v *= 0xff51afd7ed558ccdULL;
  v ^= v >> 29;
  return v;
}

__attribute__((noinline)) void inline_mix_loop(double seconds) {
  uint64_t v = 42;
  RunFor(seconds, [&] {
    for (int i = 0; i < 200000; ++i) v = mix_helper(v + i);
  });
  g_sink = v;
}

__attribute__((noinline)) void child_spin(double seconds) {
  uint64_t h = 1469598103934665603ULL;
  RunFor(seconds, [&] {
    for (int i = 0; i < 200000; ++i) h = (h ^ static_cast<uint64_t>(i)) * 1099511628211ULL;
  });
  g_sink = h;
}

std::vector<uint32_t> MakeRandomCycle(size_t n) {
  // A full-period LCG modulo a power of two visits every slot once: one long cycle whose
  // successive slots are far apart, so nearly every load misses the cache. Cheap to build, so
  // set-up stays out of the profile.
  std::vector<uint32_t> next(n);
  for (size_t i = 0; i < n; ++i)
    next[i] = static_cast<uint32_t>((i * 2862933555777941757ULL + 3037000493ULL) & (n - 1));
  return next;
}

}  // namespace

int main(int argc, char** argv) {
  double unit = argc > 1 ? std::atof(argv[1]) : 1.0;
  if (unit <= 0) {
    std::fprintf(stderr, "usage: %s [SECONDS_PER_UNIT]\n", argv[0]);
    return 2;
  }

  std::vector<uint32_t> next = MakeRandomCycle(size_t{1} << 24);  // 64 MiB
  std::vector<uint8_t> bits(size_t{1} << 20);
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (auto& b : bits) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;  // xorshift64
    b = state & 1;
  }

  pid_t child = fork();
  if (child == 0) {
    child_spin(unit);
    _exit(0);
  }
  std::thread worker([unit] {
    pthread_setname_np(pthread_self(), "demo-worker");
    inline_mix_loop(2 * unit);
  });
  compute_kernel(unit);
  pointer_chase(unit, next);
  branchy_loop(unit, bits);
  worker.join();
  int status = 0;
  if (child > 0) waitpid(child, &status, 0);
  std::printf("demo done\n");
  return 0;
}
