// The Mann-Whitney U test against published values and scipy.
//
// Sources of the expected values:
//  - scipy.stats.mannwhitneyu documentation, "Examples" (Conover, Practical Nonparametric
//    Statistics, 3rd ed., example 1 of section 5.1: male and female ages), which prints
//    U1 = 17.0, p = 0.1111111111111111 (exact) and p = 0.11134688653314041 (asymptotic).
//  - Every other value: scipy 1.10.1 (Debian 12 python3-scipy), scipy.stats.mannwhitneyu(x, y)
//    with its defaults (method="auto", two-sided, use_continuity=True); the call is written next
//    to each case. The values were computed once by hand-run scipy, not by tprof.
//  - Textbook exact tails: two completely separated samples of n and n have a two-sided exact p
//    of 2 / C(2n, n): 2/20 = 0.1 (n = 3), 2/70 = 0.02857 (n = 4), 2/252 = 0.0079365 (n = 5).
#include "core/analysis/significance.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tprof {
namespace {

TEST(MannWhitneyU, ConoverAgesExactAsInTheScipyDocs) {
  // males = [19, 22, 16, 29, 24], females = [20, 11, 17, 12]: 5 and 4 values, no ties: exact.
  auto r = MannWhitneyU({19, 22, 16, 29, 24}, {20, 11, 17, 12});
  EXPECT_DOUBLE_EQ(r.u_old, 17.0);
  EXPECT_DOUBLE_EQ(r.u_new, 3.0);
  EXPECT_TRUE(r.exact);
  EXPECT_NEAR(r.p_value, 0.1111111111111111, 1e-12);
}

TEST(MannWhitneyU, CompletelySeparatedSamplesHitTheTextbookMinimum) {
  // scipy: mannwhitneyu([1,2,3],[4,5,6]) -> (0.0, 0.1)
  auto r3 = MannWhitneyU({1, 2, 3}, {4, 5, 6});
  EXPECT_DOUBLE_EQ(r3.u_old, 0.0);
  EXPECT_NEAR(r3.p_value, 2.0 / 20, 1e-12);
  // scipy: mannwhitneyu([1,2,3,4],[5,6,7,8]) -> (0.0, 0.02857142857142857)
  auto r4 = MannWhitneyU({1, 2, 3, 4}, {5, 6, 7, 8});
  EXPECT_NEAR(r4.p_value, 0.02857142857142857, 1e-12);
  // scipy: mannwhitneyu([1..5],[6..10]) -> (0.0, 0.007936507936507936)
  auto r5 = MannWhitneyU({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  EXPECT_NEAR(r5.p_value, 0.007936507936507936, 1e-12);
  // Order of the samples only swaps the U's.
  auto swapped = MannWhitneyU({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5});
  EXPECT_DOUBLE_EQ(swapped.u_old, 25.0);
  EXPECT_NEAR(swapped.p_value, r5.p_value, 1e-15);
}

TEST(MannWhitneyU, OverlappingSamplesExact) {
  // scipy: mannwhitneyu([1.1,2.2,3.3,4.4,5.5],[2.0,3.0,4.0,5.0,6.0]) -> (10.0, 0.6904761904761905)
  auto r = MannWhitneyU({1.1, 2.2, 3.3, 4.4, 5.5}, {2.0, 3.0, 4.0, 5.0, 6.0});
  EXPECT_DOUBLE_EQ(r.u_old, 10.0);
  EXPECT_TRUE(r.exact);
  EXPECT_NEAR(r.p_value, 0.6904761904761905, 1e-12);
  // scipy: mannwhitneyu([3],[1,2]) -> (2.0, 0.6666666666666666)
  auto one = MannWhitneyU({3}, {1, 2});
  EXPECT_DOUBLE_EQ(one.u_old, 2.0);
  EXPECT_NEAR(one.p_value, 0.6666666666666666, 1e-12);
  // Unequal sizes, one small: still exact.
  // scipy: mannwhitneyu([0.5,2.5,9.5],[1,2,...,8,10,11,12,13]) -> (10.0, 0.29450549450549457)
  auto uneven = MannWhitneyU({0.5, 2.5, 9.5}, {1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13});
  EXPECT_DOUBLE_EQ(uneven.u_old, 10.0);
  EXPECT_TRUE(uneven.exact);
  EXPECT_NEAR(uneven.p_value, 0.29450549450549457, 1e-12);
}

TEST(MannWhitneyU, TiesUseTheCorrectedNormalApproximation) {
  // scipy: mannwhitneyu([1,2,2,3,4],[2,3,5,5,6]) -> (4.5, 0.11049202405566802)
  auto r = MannWhitneyU({1, 2, 2, 3, 4}, {2, 3, 5, 5, 6});
  EXPECT_DOUBLE_EQ(r.u_old, 4.5);
  EXPECT_FALSE(r.exact);
  EXPECT_NEAR(r.p_value, 0.11049202405566802, 1e-12);
  // scipy: mannwhitneyu([1..10],[6..15]) -> (12.5, 0.005075392315273923)
  auto big = MannWhitneyU({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  EXPECT_DOUBLE_EQ(big.u_old, 12.5);
  EXPECT_NEAR(big.p_value, 0.005075392315273923, 1e-12);
}

TEST(MannWhitneyU, LargeSamplesWithoutTiesUseTheNormalApproximation) {
  // Both samples above 8: scipy's "auto" goes asymptotic.
  // scipy: mannwhitneyu([1.5,3.5,...,17.5],[1..11]) -> (69.0, 0.14887949369946918)
  auto r = MannWhitneyU({1.5, 3.5, 5.5, 7.5, 9.5, 11.5, 13.5, 15.5, 17.5},
                        {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  EXPECT_DOUBLE_EQ(r.u_old, 69.0);
  EXPECT_FALSE(r.exact);
  EXPECT_NEAR(r.p_value, 0.14887949369946918, 1e-12);
}

TEST(MannWhitneyU, DegenerateInputs) {
  // scipy: mannwhitneyu([7,7,7],[7,7,7]) -> (4.5, 1.0)
  auto same = MannWhitneyU({7, 7, 7}, {7, 7, 7});
  EXPECT_DOUBLE_EQ(same.u_old, 4.5);
  EXPECT_DOUBLE_EQ(same.p_value, 1.0);
  EXPECT_DOUBLE_EQ(MannWhitneyU({}, {1, 2}).p_value, 1.0);
}

TEST(MinimumRunsPerSide, SmallestNWhoseBestCaseReachesAlpha) {
  // 2/C(2n,n): n=3 gives 0.1, n=4 gives 0.0286 < 0.05; for 0.01: n=5 gives 0.0079.
  EXPECT_EQ(MinimumRunsPerSide(0.05), 4u);
  EXPECT_EQ(MinimumRunsPerSide(0.01), 5u);
  EXPECT_EQ(MinimumRunsPerSide(0.2), 3u);  // 0.1 < 0.2; n=2 gives 2/6 = 0.33
  // The claim itself: at n = 4, complete separation is significant; at n = 3 it cannot be.
  EXPECT_LT(MannWhitneyU({1, 2, 3, 4}, {5, 6, 7, 8}).p_value, 0.05);
  EXPECT_GE(MannWhitneyU({1, 2, 3}, {4, 5, 6}).p_value, 0.05);
}

// Garwood's exact 97.5 % upper bounds of a Poisson mean, as published in tables of exact
// Poisson confidence limits (and recomputed here by bisection on the Poisson distribution in
// Python, an implementation of its own): 3.689 for a count of 0 ... 121.63 for 100.
TEST(PoissonBounds, UpperBoundsAreGarwoodsExactOnes) {
  const std::pair<uint64_t, double> published[] = {{0, 3.689},   {1, 5.572},   {2, 7.225},
                                                   {3, 8.767},   {4, 10.242},  {5, 11.668},
                                                   {10, 18.390}, {20, 30.888}, {29, 41.649}};
  for (const auto& [count, bound] : published)
    EXPECT_NEAR(PoissonUpper975(count), bound, 0.001) << count;
  // From 30 on, Wilson-Hilferty's approximation: within 0.002 of the exact bound, never below.
  const std::pair<uint64_t, double> exact[] = {
      {30, 42.8269}, {50, 65.9188}, {100, 121.6268}, {300, 335.9411}};
  for (const auto& [count, bound] : exact) {
    EXPECT_GE(PoissonUpper975(count), bound) << count;
    EXPECT_LE(PoissonUpper975(count), bound + 0.002) << count;
  }
  // Beyond the normal approximation's reach for small counts, and near it for large ones.
  EXPECT_GT(PoissonUpper975(1) - 1, 2 * 1.96);
  EXPECT_NEAR((PoissonUpper975(10000) - 10000) / (1.96 * 100), 1.0, 0.01);
}

TEST(RunNoise, CoefficientOfVariationUsesTheSampleStdDev) {
  // Values 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sum of squared deviations 32, sample variance 32/7.
  std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(Mean(v), 5.0);
  EXPECT_NEAR(SampleStdDev(v), std::sqrt(32.0 / 7.0), 1e-12);
  EXPECT_NEAR(CoefficientOfVariation(v), std::sqrt(32.0 / 7.0) / 5.0, 1e-12);
  EXPECT_EQ(CoefficientOfVariation({3}), 0.0);
  EXPECT_EQ(CoefficientOfVariation({0, 0}), 0.0);
}

}  // namespace
}  // namespace tprof
