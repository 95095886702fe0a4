// Workload for the --call-graph dwarf import tests, built by the test without frame pointers
// (static and PIE): main -> work::Run -> work::Twice (inlined into Run) -> work::Hash, where
// Hash has all the self time and Run and the inlined Twice every sample of it.
// `inline_chain SECONDS` runs for that much CPU time.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

namespace {

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

namespace work {

__attribute__((noinline)) uint64_t Hash(const std::vector<uint64_t>& keys, int rounds) {
  volatile uint64_t mix[2] = {keys[0], keys[1]};
  uint64_t h = keys.size();
  for (int i = 0; i < rounds; ++i) h = (h ^ keys[i & 7] ^ mix[i & 1]) * 1099511628211ULL;
  return h;
}

__attribute__((always_inline)) inline uint64_t Twice(const std::vector<uint64_t>& keys) {
  return Hash(keys, 200000) + Hash(keys, 100000) * 3;
}

__attribute__((noinline)) uint64_t Run(std::vector<uint64_t>& keys) {
  uint64_t h = Twice(keys);
  keys[h & 7] ^= h;
  return h;
}

}  // namespace work

int main(int argc, char** argv) {
  const double end = CpuSeconds() + (argc > 1 ? std::atof(argv[1]) : 1.0);
  std::vector<uint64_t> keys = {1, 2, 3, 4, 5, 6, 7, 8};
  uint64_t acc = 0;
  while (CpuSeconds() < end) acc += work::Run(keys);
  std::printf("%llu\n", static_cast<unsigned long long>(acc));
  return 0;
}
