// Intervals for a mean count that stay valid when little or nothing was
// seen: numerics against tables, and coverage on Poisson samples with a
// known mean (rare ones included).
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <vector>

#include "sim/engine/random.h"
#include "sim/experiment/count_interval.h"
#include "sim/experiment/statistics.h"

namespace pipesim::sim {
namespace {

TEST(CountInterval, ChiSquareQuantilesMatchTables) {
  EXPECT_NEAR(chi_square_quantile(0.95, 1), 3.841, 1e-3);
  EXPECT_NEAR(chi_square_quantile(0.95, 2), 5.991, 1e-3);
  EXPECT_NEAR(chi_square_quantile(0.975, 2), 7.378, 1e-3);
  EXPECT_NEAR(chi_square_quantile(0.025, 10), 3.247, 1e-3);
  EXPECT_NEAR(chi_square_quantile(0.99, 20), 37.566, 1e-3);
  // P(1, x) = 1 - e^-x.
  EXPECT_NEAR(gamma_p(1.0, 2.0), 1 - std::exp(-2.0), 1e-14);
}

TEST(CountInterval, PoissonBoundsOfATotal) {
  // Nothing in one run: two-sided 95% upper bound -ln(0.025) = 3.689; at
  // 90% (a one-sided 95% bound) -ln(0.05) = 2.996, the "rule of three".
  EXPECT_NEAR(poisson_mean_interval(0, 1, 0.95).second, -std::log(0.025), 1e-9);
  EXPECT_NEAR(poisson_mean_interval(0, 1, 0.90).second, -std::log(0.05), 1e-9);
  EXPECT_EQ(poisson_mean_interval(0, 1, 0.95).first, 0.0);
  // Ten events (Garwood 1936, 95%): [4.795, 18.390]; over 5 runs a fifth of that.
  const auto [lo, hi] = poisson_mean_interval(10, 5, 0.95);
  EXPECT_NEAR(lo * 5, 4.795, 1e-3);
  EXPECT_NEAR(hi * 5, 18.390, 1e-3);
}

TEST(CountInterval, AllZeroCountsDoNotProveAZeroMean) {
  const std::vector<double> zeros(20, 0.0);
  EXPECT_EQ(summarize(zeros).ci_hi, 0.0);  // Student-t: no spread, no width
  const auto [lo, hi] = count_mean_interval(zeros, 0.95);
  EXPECT_EQ(lo, 0.0);
  EXPECT_NEAR(hi, -std::log(0.025) / 20, 1e-9);
  EXPECT_TRUE(is_count_sample({0, 3, 7}));
  EXPECT_FALSE(is_count_sample({0, 2.5}));
  EXPECT_FALSE(is_count_sample({-1, 2}));
}

TEST(CountInterval, WilsonBoundsAreExactAtNoneAndAll) {
  EXPECT_EQ(wilson_interval(0, 20).first, 0.0);  // was 1.39e-17
  EXPECT_EQ(wilson_interval(20, 20).second, 1.0);
}

// The share of `reps` samples of n Poisson(mean) counts whose interval holds the mean.
double coverage(double mean, int n, bool counts, int reps, std::uint64_t seed) {
  RandomStream stream(seed, "coverage");
  int held = 0;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int r = 0; r < reps; ++r) {
    for (double& x : v) x = static_cast<double>(stream.poisson(mean));
    double lo = 0;
    double hi = 0;
    if (counts) {
      std::tie(lo, hi) = count_mean_interval(v, 0.95);
    } else {
      const SummaryStats s = summarize(v, 0.95);
      lo = s.ci_lo;
      hi = s.ci_hi;
    }
    held += lo <= mean && mean <= hi ? 1 : 0;
  }
  return static_cast<double>(held) / reps;
}

TEST(CountInterval, CoversTheTrueMeanAtItsNominalRateRareEventsIncluded) {
  // 4,000 samples each: the share holding the mean has a standard error of
  // sqrt(0.95 x 0.05 / 4000) = 0.0034, so >= 0.94 is within 3 of 95%. The
  // hull holds the exact interval, which covers at least 95% (Garwood).
  std::uint64_t seed = 1;
  for (const double mean : {0.02, 0.3, 3.0}) {
    for (const int n : {2, 5, 20}) {
      EXPECT_GE(coverage(mean, n, true, 4000, seed++), 0.94)
          << "mean " << mean << ", " << n << " seeds";
    }
  }
  // The Student-t interval alone misses a rare mean whenever nothing was
  // seen: at 0.02 over 5 seeds that is e^(-0.1) = 90% of samples, so it
  // covers ~10%.
  EXPECT_LT(coverage(0.02, 5, false, 4000, 99), 0.2);
}

}  // namespace
}  // namespace pipesim::sim
