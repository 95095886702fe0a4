#include "core/analysis/significance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

namespace tprof {
namespace {

// P(U >= u) under the null hypothesis, from the exact distribution of U for samples of m and n
// values without ties. Counts arrangements with the recurrence
//   f(u; m, n) = f(u - n; m - 1, n) + f(u; m, n - 1)
// (the largest of all values belongs to the first sample, beating all n of the second, or to the
// second): only additions, so no cancellation; O(m^2 n^2) work, small for the sizes the exact
// method is used on.
double ExactUpperTail(size_t m, size_t n, double u) {
  if (m > n) std::swap(m, n);  // U's distribution is the same either way; the work is not
  const size_t max_u = m * n;
  // f[i][k]: arrangements of i first-sample values and j second-sample values with U = k, for
  // the current j.
  std::vector<std::vector<double>> f(m + 1, std::vector<double>(max_u + 1, 0.0));
  for (size_t i = 0; i <= m; ++i) f[i][0] = 1.0;  // j = 0: U is 0
  for (size_t j = 1; j <= n; ++j) {
    // f[0][*] stays {1, 0, ...}: no first-sample values, U = 0.
    for (size_t i = 1; i <= m; ++i) {
      // f[i] (for j - 1) + f[i - 1] (for j, already updated) shifted by j.
      for (size_t k = j; k <= i * j; ++k) f[i][k] += f[i - 1][k - j];
    }
  }
  const std::vector<double>& dist = f[m];
  double total = std::accumulate(dist.begin(), dist.end(), 0.0);
  double tail = 0;
  for (size_t k = 0; k <= max_u; ++k)
    if (static_cast<double>(k) >= u - 1e-9) tail += dist[k];
  return tail / total;
}

}  // namespace

MannWhitneyResult MannWhitneyU(const std::vector<double>& x, const std::vector<double>& y) {
  MannWhitneyResult result;
  const size_t n1 = x.size(), n2 = y.size();
  if (n1 == 0 || n2 == 0) return result;
  // Mid-ranks of the pooled values.
  std::vector<std::pair<double, bool>> pooled;  // value, from x
  for (double v : x) pooled.push_back({v, true});
  for (double v : y) pooled.push_back({v, false});
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  const size_t n = pooled.size();
  double rank_sum_x = 0, tie_term = 0;
  bool ties = false;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    double t = static_cast<double>(j - i);
    double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second) rank_sum_x += mid_rank;
    if (j - i > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  const double d1 = static_cast<double>(n1), d2 = static_cast<double>(n2);
  result.u_old = rank_sum_x - d1 * (d1 + 1) / 2.0;
  result.u_new = d1 * d2 - result.u_old;
  const double u = std::max(result.u_old, result.u_new);
  if (!ties && std::min(n1, n2) <= 8 && std::max(n1, n2) <= 2000) {
    result.exact = true;
    result.p_value = std::min(1.0, 2.0 * ExactUpperTail(n1, n2, u));
    return result;
  }
  const double dn = static_cast<double>(n);
  const double mu = d1 * d2 / 2.0;
  const double variance = d1 * d2 / 12.0 * ((dn + 1) - tie_term / (dn * (dn - 1)));
  if (variance <= 0) return result;  // every value equal: no evidence of a difference
  const double z = (u - mu - 0.5) / std::sqrt(variance);
  result.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));  // 2 * (1 - Phi(z))
  return result;
}

size_t MinimumRunsPerSide(double alpha) {
  // The most extreme arrangement of n against n has probability 1 / C(2n, n) in each tail.
  double arrangements = 2;  // C(2, 1)
  for (size_t n = 1; n < 64; ++n) {
    if (2.0 / arrangements < alpha) return n;
    // C(2n+2, n+1) = C(2n, n) * (2n+1)(2n+2) / (n+1)^2
    const double dn = static_cast<double>(n);
    arrangements = arrangements * (2 * dn + 1) * (2 * dn + 2) / ((dn + 1) * (dn + 1));
  }
  return 64;
}

double PoissonUpper975(uint64_t count) {
  constexpr double kTail = 0.025;
  constexpr double kZ = 1.959964;  // the normal 97.5 % quantile
  const double k = static_cast<double>(count);
  if (count >= 30) {
    const double a = k + 1;
    return a * std::pow(1 - 1 / (9 * a) + kZ / (3 * std::sqrt(a)), 3);
  }
  // P(X <= count) for a Poisson mean `mean`, falling as the mean grows: bisect for kTail.
  auto at_most_count = [count](double mean) {
    double term = std::exp(-mean), sum = term;
    for (uint64_t i = 1; i <= count; ++i) {
      term *= mean / static_cast<double>(i);
      sum += term;
    }
    return sum;
  };
  double low = k, high = k + 20 + 10 * std::sqrt(k + 1);
  for (int i = 0; i < 100; ++i) {
    const double middle = (low + high) / 2;
    (at_most_count(middle) > kTail ? low : high) = middle;
  }
  return high;
}

double PoissonRelativeReach(uint64_t count) {
  if (count == 0) return std::numeric_limits<double>::infinity();
  const double k = static_cast<double>(count);
  return (PoissonUpper975(count) - k) / k;
}

double Mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double SampleStdDev(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double mean = Mean(values);
  double squares = 0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

double CoefficientOfVariation(const std::vector<double>& values) {
  const double mean = Mean(values);
  if (values.size() < 2 || mean == 0) return 0;
  return SampleStdDev(values) / std::fabs(mean);
}

}  // namespace tprof
