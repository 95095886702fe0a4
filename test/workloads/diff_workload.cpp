// The workload of the `tprof diff` tests: three functions whose amount of work is set on the
// command line, so that a test can make one of them slower, everything slower, or one vanish,
// without rebuilding.
//
//   diff_workload ALPHA BETA GAMMA
//
// Each argument is a number of work units (1 unit = 2^20 steps of a dependent integer hash
// chain, a fixed amount of CPU work) for work_alpha, work_beta and work_gamma; 0 skips the
// function entirely (it then has no samples: it "vanishes" from a profile). The functions do the
// same kind of work per step, so CPU time is proportional to the units: "ALPHA x1.2" is a 20%
// slowdown of work_alpha alone, every argument x2 a uniform 2x slowdown.
//
// The work runs in rounds, a slice of each function per round, so that whatever else the
// machine runs meanwhile (another test on the sibling core, a VM's steal time) slows the three
// functions alike rather than whichever happened to be running.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

volatile uint64_t g_sink;  // keeps results alive so the compiler cannot drop the work

constexpr uint64_t kStepsPerUnit = 1u << 20;

// One dependent chain: each step needs the previous result, so the time per step is fixed by
// the latency of a multiply and a few ALU operations, whatever the CPU's width. A macro, not an
// inline function: an inlined function is a function of its own in tprof's rows, and the
// tests compare the three work functions, so the loop is written out in each of them.
#define CHAIN(seed, steps)                   \
  ({                                         \
    uint64_t v = (seed);                     \
    for (uint64_t i = 0; i < (steps); ++i) { \
      v ^= v >> 29;                          \
      v *= 0xbf58476d1ce4e5b9ULL;            \
      v += i;                                \
    }                                        \
    v;                                       \
  })

}  // namespace

// extern "C": plain function names in the profile ("work_alpha").
extern "C" __attribute__((noinline)) uint64_t work_alpha(uint64_t steps) {
  return CHAIN(0x1234, steps);
}
extern "C" __attribute__((noinline)) uint64_t work_beta(uint64_t steps) {
  return CHAIN(0x5678, steps);
}
extern "C" __attribute__((noinline)) uint64_t work_gamma(uint64_t steps) {
  return CHAIN(0x9abc, steps);
}

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s ALPHA BETA GAMMA (work units each; 0 skips)\n", argv[0]);
    return 2;
  }
  uint64_t alpha = std::strtoull(argv[1], nullptr, 10);
  uint64_t beta = std::strtoull(argv[2], nullptr, 10);
  uint64_t gamma = std::strtoull(argv[3], nullptr, 10);
  constexpr uint64_t kRounds = 32;
  // Round r's slice of N units: the steps up to the end of round r less those before it, so the
  // rounds add up to exactly N units.
  auto slice = [](uint64_t units, uint64_t r) {
    return units * kStepsPerUnit * (r + 1) / kRounds - units * kStepsPerUnit * r / kRounds;
  };
  uint64_t sum = 0;
  for (uint64_t r = 0; r < kRounds; ++r) {
    if (alpha) sum += work_alpha(slice(alpha, r));
    if (beta) sum += work_beta(slice(beta, r));
    if (gamma) sum += work_gamma(slice(gamma, r));
  }
  g_sink = sum;
  std::printf("diff_workload done\n");
  return 0;
}
