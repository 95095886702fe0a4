// Statistics for comparing repeated runs: the Mann-Whitney U test (two-sided), the fewest runs
// per side it needs to reach a significance level at all, and run-to-run noise. Nothing here
// knows about profiles: inputs are plain numbers, one per run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tprof {

struct MannWhitneyResult {
  double u_old = 0;    // U of the first sample: pairs (x, y) with x > y, ties counting 1/2
  double u_new = 0;    // U of the second sample; u_old + u_new = n_old * n_new
  double p_value = 1;  // two-sided
  bool exact = false;  // true: from the exact null distribution; false: normal approximation
};

// Two-sided Mann-Whitney U test of x against y, computed as scipy.stats.mannwhitneyu does with
// its defaults (method="auto", use_continuity=True): the exact distribution of U when there are
// no ties and at least one sample has at most 8 values (and the other at most 2000, to bound the
// work; scipy has no such bound); otherwise the normal approximation with the tie-corrected
// variance and a continuity correction of 1/2. Either sample empty, or all values equal: p = 1.
MannWhitneyResult MannWhitneyU(const std::vector<double>& x, const std::vector<double>& y);

// The smallest n such that two samples of n runs each, completely separated, give a two-sided
// exact Mann-Whitney p-value below `alpha` (that p is 2 / C(2n, n): 4 runs per side for 0.05).
// Fewer runs than this can never show a significant change, whatever the data.
size_t MinimumRunsPerSide(double alpha);

// The exact (Garwood) 97.5 % upper confidence bound of a Poisson mean from one observed count:
// the mean under which a count this small or smaller has probability 2.5 % (3.689 for 0, 5.572
// for 1, 18.390 for 10). Exact below 30, the Wilson-Hilferty cube-root approximation from 30 on
// (within 0.002 of exact there, and above it).
double PoissonUpper975(uint64_t count);
// How far above a count its exact 97.5 % bound lies, relative to the count: (U(n) - n) / n, the
// 95 % half-width of a ratio's factor from n Poisson samples (about 1.96 / sqrt(n) for many);
// infinite for none.
double PoissonRelativeReach(uint64_t count);

double Mean(const std::vector<double>& values);
// Sample standard deviation (n - 1 in the denominator); 0 for fewer than two values.
double SampleStdDev(const std::vector<double>& values);
// Standard deviation over mean: run-to-run noise as a fraction. 0 when the mean is 0 or there
// are fewer than two values.
double CoefficientOfVariation(const std::vector<double>& values);

}  // namespace tprof
