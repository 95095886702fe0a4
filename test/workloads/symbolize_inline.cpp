// Workload for the symbolizer tests: code with inlining several levels deep (always-inline
// helpers, templates, lambdas, standard algorithms), built with -O2 -g, so that many addresses
// carry inline chains. Runs briefly and prints a checksum.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <string>
#include <vector>

namespace workload {

__attribute__((always_inline)) inline uint64_t rotate(uint64_t v, int s) {
  return (v << s) | (v >> (64 - s));
}

__attribute__((always_inline)) inline uint64_t scramble(uint64_t v) {
  v ^= rotate(v, 17);
  v *= 0x9e3779b97f4a7c15ULL;
  return v ^ rotate(v, 31);
}

template <typename T>
struct Accumulator {
  T total{};
  __attribute__((always_inline)) void add(T v) { total += static_cast<T>(scramble(v)); }
};

__attribute__((noinline)) uint64_t hash_range(const std::vector<uint64_t>& values) {
  Accumulator<uint64_t> acc;
  for (uint64_t v : values) acc.add(v);
  return acc.total;
}

__attribute__((noinline)) std::vector<uint64_t> sorted_copy(std::vector<uint64_t> values) {
  std::sort(values.begin(), values.end(),
            [](uint64_t a, uint64_t b) { return scramble(a) < scramble(b); });
  return values;
}

__attribute__((noinline)) std::map<std::string, int> word_counts(int n) {
  std::map<std::string, int> counts;
  for (int i = 0; i < n; ++i) counts["w" + std::to_string(i % 97)] += i;
  return counts;
}

struct Shape {
  virtual ~Shape() = default;
  virtual double area() const = 0;
};
struct Square : Shape {
  double side;
  explicit Square(double s) : side(s) {}
  double area() const override { return side * side; }
};
struct Circle : Shape {
  double r;
  explicit Circle(double radius) : r(radius) {}
  double area() const override { return 3.14159 * r * r; }
};

__attribute__((noinline)) double total_area(const std::vector<Shape*>& shapes) {
  return std::accumulate(shapes.begin(), shapes.end(), 0.0,
                         [](double sum, const Shape* s) { return sum + s->area(); });
}

}  // namespace workload

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 10000;
  std::vector<uint64_t> values(static_cast<size_t>(n));
  std::iota(values.begin(), values.end(), 1);
  uint64_t h = workload::hash_range(workload::sorted_copy(values));
  auto counts = workload::word_counts(n);
  std::vector<workload::Shape*> shapes;
  for (int i = 0; i < 16; ++i)
    shapes.push_back(i % 2 ? static_cast<workload::Shape*>(new workload::Square(i))
                           : new workload::Circle(i));
  double area = workload::total_area(shapes);
  for (auto* s : shapes) delete s;
  std::printf("%llu %zu %.1f\n", static_cast<unsigned long long>(h), counts.size(), area);
  return 0;
}
