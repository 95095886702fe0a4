// A function template's hot loop inlined into its callers (two instantiations), for the
// inlined-function rows test (test/integration/inline_rows_test.cpp).
#include <cstdlib>
#include <vector>

template <typename T>
__attribute__((always_inline)) inline T accumulate_rounds(const std::vector<T>& values,
                                                           unsigned long rounds) {
  T sum{};
  for (unsigned long r = 0; r < rounds; ++r)
    for (const T& v : values) sum = sum / T(2) + v;
  return sum;
}

__attribute__((noinline)) double run_doubles(const std::vector<double>& values,
                                             unsigned long rounds) {
  return accumulate_rounds(values, rounds);
}

__attribute__((noinline)) long run_longs(const std::vector<long>& values, unsigned long rounds) {
  return accumulate_rounds(values, rounds);
}

int main(int argc, char** argv) {
  unsigned long rounds = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 20000;
  std::vector<double> doubles(1000);
  std::vector<long> longs(1000);
  for (size_t i = 0; i < doubles.size(); ++i) doubles[i] = 0.5 * static_cast<double>(i);
  for (size_t i = 0; i < longs.size(); ++i) longs[i] = static_cast<long>(i);
  volatile double sink = run_doubles(doubles, rounds);
  sink += static_cast<double>(run_longs(longs, rounds));
  return sink > 0 ? 0 : 1;
}
