// Statistics over seeds, against textbook values.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/experiment/statistics.h"

namespace pipesim::sim {
namespace {

TEST(Statistics, StudentTQuantilesMatchTables) {
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.706, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 9), 2.262, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 99), 1.984, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.995, 30), 2.750, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.025, 9), -2.262, 1e-3);
}

TEST(Statistics, NormalQuantile) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959964, 1e-6);
  EXPECT_NEAR(normal_quantile(0.5), 0.0, 1e-9);
  EXPECT_NEAR(normal_quantile(0.01), -2.326348, 1e-6);
}

TEST(Statistics, SummaryOfASmallSample) {
  // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample sd sqrt(32/7).
  const SummaryStats s = summarize({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_NEAR(s.stddev, std::sqrt(32.0 / 7.0), 1e-12);
  const double half = 2.364624 * std::sqrt(32.0 / 7.0) / std::sqrt(8.0);  // t(0.975, 7)
  EXPECT_NEAR(s.ci_lo, 5.0 - half, 1e-5);
  EXPECT_NEAR(s.ci_hi, 5.0 + half, 1e-5);
  EXPECT_DOUBLE_EQ(s.p50, 4.5);
}

TEST(Statistics, PercentilesInterpolateLinearly) {
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4, 5}, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4, 5}, 0.95), 4.8);
  EXPECT_DOUBLE_EQ(percentile({10}, 0.99), 10.0);
}

TEST(Statistics, CountIntervalIsClippedAtZero) {
  const SummaryStats s = summarize({0, 0, 0, 10});
  EXPECT_EQ(s.ci_lo, 0.0);
  EXPECT_GT(s.ci_hi, 2.5);
}

TEST(Statistics, WilsonIntervalMatchesTheFormula) {
  // 8 of 10 at 95%: the classic (0.490, 0.943).
  const auto [lo, hi] = wilson_interval(8, 10);
  EXPECT_NEAR(lo, 0.4902, 1e-3);
  EXPECT_NEAR(hi, 0.9433, 1e-3);
  const auto [lo0, hi0] = wilson_interval(0, 20);
  EXPECT_EQ(lo0, 0.0);
  EXPECT_NEAR(hi0, 0.1611, 1e-3);
}

TEST(Statistics, SummarizeRunsKeepsMetricOrder) {
  const std::vector<Metrics> runs = {{{"a", 1}, {"b", 10}}, {{"a", 3}, {"b", 30}}};
  const auto s = summarize_runs(runs);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].name, "a");
  EXPECT_DOUBLE_EQ(s[0].stats.mean, 2.0);
  EXPECT_EQ(s[1].name, "b");
  EXPECT_DOUBLE_EQ(s[1].stats.mean, 20.0);
}

}  // namespace
}  // namespace pipesim::sim
