// Keeper as a queueing server (models/keeper): answer times stay representable.
#include <gtest/gtest.h>

#include "models/keeper/keeper.h"

namespace pipesim::keeper {
namespace {

// Swarm finding: capacity 1 op/s, a backlog episode at capacity_factor 0.0001
// with 1e8 extra ops/s. After one day the backlog is (1e8 - 0.0001) * 86400 ~
// 8.64e12 requests served at 0.0001/s: each waits ~8.6e16 s = 8.6e22 us, past
// 2^63 us (~9.2e18). The conversion used to wrap to a negative time, and the
// caller scheduled the answer in the past.
TEST(Keeper, ExtremeBacklogAnswersAfterAnyRunNeverInThePast) {
  KeeperOptions options;
  options.capacity_ops_per_s = 1;
  options.background_ops_per_s = 0;
  Keeper keeper(options);
  keeper.set_degradation(sim::Time{0}, 0.0001, 1e8);
  const sim::Time answer = keeper.submit(sim::Time::days(1), 100);
  EXPECT_GT(answer, sim::Time::days(3650 + 365));  // later than any run.duration + drain
  // Added to the latest time a run reaches, it does not overflow.
  EXPECT_GT((sim::Time::days(3650 + 365) + answer).us, 0);
}

// Healthy Keeper, by hand: 10,000 background ops/s on 40,000 ops/s capacity
// (rho 0.25): 1 ms latency + 1/(40000 * 0.75) s = 1 ms + 33.3 us per request.
TEST(Keeper, HealthyRequestTakesLatencyPlusQueueing) {
  Keeper keeper(KeeperOptions{});
  EXPECT_EQ(keeper.submit(sim::Time{0}, 1).us, 1033);
  EXPECT_EQ(keeper.submit(sim::Time{0}, 3).us, 3100);  // 3 x 1033.3 us
}

}  // namespace
}  // namespace pipesim::keeper
