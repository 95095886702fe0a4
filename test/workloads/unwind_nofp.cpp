// Workload for the DWARF unwinding tests: a call chain main -> top -> mid -> leaf built with
// -O2 -g -fomit-frame-pointer, so frame-pointer callchains break and only CFI can walk it.
// `unwind_nofp SECONDS` spins in leaf() for that much CPU time.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace {

volatile uint64_t g_sink;

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

// Extern and noinline, with stack use of their own, so each is a real frame with CFI.
extern "C" __attribute__((noinline)) uint64_t leaf(uint64_t seed) {
  volatile uint64_t local[4] = {seed, seed + 1, seed + 2, seed + 3};
  uint64_t h = seed;
  for (int i = 0; i < 100000; ++i) h = (h ^ local[i & 3]) * 1099511628211ULL;
  return h;
}

extern "C" __attribute__((noinline)) uint64_t mid(uint64_t seed) {
  volatile uint64_t pad[8] = {};
  pad[seed & 7] = seed;
  return leaf(seed + pad[1]) + 1;
}

extern "C" __attribute__((noinline)) uint64_t top(uint64_t seed) {
  volatile uint64_t pad[16] = {};
  pad[seed & 15] = seed;
  return mid(seed * 3 + pad[2]) + 2;
}

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
  double end = CpuSeconds() + seconds;
  uint64_t acc = 0;
  while (CpuSeconds() < end) acc += top(acc);
  g_sink = acc;
  std::printf("%llu\n", static_cast<unsigned long long>(acc));
  return 0;
}
