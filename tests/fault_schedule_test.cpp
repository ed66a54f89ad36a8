// The fault timeline: scheduled and Poisson faults, one stream per kind.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/engine/fault_schedule.h"

namespace pipesim::sim {
namespace {

FaultSpec poisson(const std::string& kind, double rate) {
  FaultSpec s;
  s.kind = kind;
  s.rate_per_day = rate;
  return s;
}

TEST(FaultSchedule, ScheduledFaultFiresOnceAtItsTime) {
  FaultSpec s;
  s.kind = "worker_crash";
  s.at = Time::hours(2);
  s.target = "worker-0";
  const auto o = build_fault_schedule({s}, 1, Time::days(1), nullptr);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].at, Time::hours(2));
  EXPECT_EQ(o[0].target, "worker-0");
}

TEST(FaultSchedule, ScheduledFaultAfterTheHorizonDoesNotFire) {
  FaultSpec s;
  s.kind = "worker_crash";
  s.at = Time::days(2);
  EXPECT_TRUE(build_fault_schedule({s}, 1, Time::days(1), nullptr).empty());
}

TEST(FaultSchedule, PoissonCountMatchesRateOverManySeeds) {
  // 4/day over 1 day: mean 4 per seed; over 2,000 seeds the mean is within
  // 5 standard errors (sqrt(4/2000)).
  double total = 0;
  for (std::uint64_t seed = 1; seed <= 2000; ++seed) {
    total += static_cast<double>(build_fault_schedule({poisson("rebalance", 4)}, seed, Time::days(1), nullptr).size());
  }
  EXPECT_NEAR(total / 2000, 4.0, 5 * std::sqrt(4.0 / 2000));
}

TEST(FaultSchedule, AddingAnotherKindLeavesThisKindsTimelineUnchanged) {
  const auto alone = build_fault_schedule({poisson("worker_crash", 3)}, 5, Time::days(1), nullptr);
  const auto mixed = build_fault_schedule({poisson("rebalance", 7), poisson("worker_crash", 3)}, 5,
                                          Time::days(1), nullptr);
  std::vector<Time> crashes;
  for (const auto& o : mixed) {
    if (o.spec == 1) crashes.push_back(o.at);
  }
  ASSERT_EQ(crashes.size(), alone.size());
  for (std::size_t i = 0; i < alone.size(); ++i) EXPECT_EQ(crashes[i], alone[i].at);
}

TEST(FaultSchedule, OccurrencesAreSortedAndTargetsDrawnFromCandidates) {
  const auto o = build_fault_schedule({poisson("worker_crash", 50), poisson("task_restart", 50)}, 3,
                                      Time::days(1), [](const std::string& kind) {
                                        return kind == "worker_crash"
                                                   ? std::vector<std::string>{"worker-0", "worker-1"}
                                                   : std::vector<std::string>{"task-0"};
                                      });
  ASSERT_GT(o.size(), 50u);
  for (std::size_t i = 1; i < o.size(); ++i) EXPECT_LE(o[i - 1].at, o[i].at);
  for (const auto& f : o) {
    if (f.spec == 0) {
      EXPECT_TRUE(f.target == "worker-0" || f.target == "worker-1");
    } else {
      EXPECT_EQ(f.target, "task-0");
    }
  }
}

TEST(FaultSchedule, StreamNamesAreDistinctPerSpecOfTheSameKind) {
  const std::vector<FaultSpec> specs = {poisson("worker_crash", 1), poisson("rebalance", 1),
                                        poisson("worker_crash", 1)};
  EXPECT_EQ(fault_stream_name(specs, 0), "faults/worker_crash");
  EXPECT_EQ(fault_stream_name(specs, 1), "faults/rebalance");
  EXPECT_EQ(fault_stream_name(specs, 2), "faults/worker_crash/1");
}

TEST(FaultSchedule, ExponentialDurationsHaveTheirMean) {
  FaultSpec s = poisson("insert_timeout", 2000);
  s.duration_mean = Time::seconds(40);
  const auto o = build_fault_schedule({s}, 8, Time::days(1), nullptr);
  double sum = 0;
  for (const auto& f : o) sum += f.duration.as_seconds();
  const double n = static_cast<double>(o.size());
  EXPECT_NEAR(sum / n, 40.0, 5 * 40.0 / std::sqrt(n));
}

}  // namespace
}  // namespace pipesim::sim
