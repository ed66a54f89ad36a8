// Keeper as a queueing server: in-flight requests from Little's law, the
// Pollaczek-Khinchine queueing delay, the fluid backlog of an overload
// episode, operation timeouts and leader elections, each computed by hand.
#include <gtest/gtest.h>

#include "models/keeper/keeper.h"

namespace pipesim::keeper {
namespace {

using sim::Time;

KeeperOptions production() { return KeeperOptions{}; }  // 1 ms, 40000/s, cv 1, 10000/s background

TEST(Keeper, BackgroundLoadKeepsTenRequestsInFlight) {
  // rho = 10000 / 40000 = 0.25, E[S] = 25 us, E[Wq] = 0.25 / 0.75 * 25 us = 8.333 us;
  // time in Keeper 1000 + 25 + 8.333 us; in flight 10000/s * 1.033333 ms = 10.333.
  Keeper k(production(), 1);
  EXPECT_NEAR(k.in_flight(Time::seconds(1)), 10.3333, 1e-3);
  EXPECT_EQ(k.expected_request_time(Time::seconds(1)), Time::micros(1033));
  // A constant service time halves the queueing: E[Wq] = 4.1667 us -> 10.2917.
  KeeperOptions constant = production();
  constant.service_time_cv = 0;
  Keeper c(constant, 1);
  EXPECT_NEAR(c.in_flight(Time::seconds(1)), 10.2917, 1e-3);
}

TEST(Keeper, OurOwnRequestsRaiseUtilisationLatencyAndInFlight) {
  // 20000 of our requests in the second [0, 1) count as 20000/s from t = 1 s:
  // rho = 30000 / 40000 = 0.75, E[Wq] = 3 * 25 us = 75 us, time in Keeper
  // 1.1 ms, in flight 30000 * 1.1 ms = 33.
  Keeper k(production(), 1);
  k.add_load(Time::millis(500), 20000, KeeperClient::REPLICATION);
  EXPECT_NEAR(k.in_flight(Time::millis(1500)), 33.0, 1e-6);
  EXPECT_EQ(k.expected_request_time(Time::millis(1500)), Time::micros(1100));
  EXPECT_EQ(k.ops(), 20000);
  EXPECT_EQ(k.ops(KeeperClient::REPLICATION), 20000);
  EXPECT_EQ(k.ops(KeeperClient::INSERTS), 0);
  // The next second had none of ours: back to the background alone.
  EXPECT_NEAR(k.in_flight(Time::millis(2500)), 10.3333, 1e-3);
}

TEST(Keeper, SampledWaitsHaveThePollaczekKhinchineMean) {
  // Background only, rho = 0.25: a request waits with probability 0.25, and
  // 8.333 us on average. 100000 single requests in one second (our own load
  // only counts from the next second on).
  Keeper k(production(), 7);
  const int n = 100000;
  std::int64_t waited = 0;
  double wait_us = 0;
  for (int i = 0; i < n; ++i) {
    const KeeperAnswer a = k.request(Time::micros(100000 + i), 1, KeeperClient::INSERTS);
    ASSERT_TRUE(a.ok);
    const double w = static_cast<double>(a.latency.us - 1025);  // 1 ms + 25 us service
    wait_us += w;
    waited += w > 0 ? 1 : 0;
  }
  EXPECT_NEAR(static_cast<double>(waited) / n, 0.25, 0.01);
  EXPECT_NEAR(wait_us / n, 8.333, 0.5);
  // 75% of the requests took exactly 1025 us: the median's bucket is
  // [1024, 1088) (2^10 split in widths of 64), reported as 1056.
  EXPECT_EQ(k.latency_histogram().count(), n);
  EXPECT_EQ(k.latency_histogram().percentile(0.5), 1056.0);
  EXPECT_EQ(k.ops(KeeperClient::INSERTS), n);
}

TEST(Keeper, AnOverloadEpisodeBuildsABacklogThatDrainsAfterwards) {
  // Capacity 1000/s, background 900/s; from t = 0 capacity x 0.5 = 500/s: the
  // backlog grows by 400 requests a second. At 10 s: 4000 waiting, a
  // request waits 4000 / 500 = 8 s behind them plus the capped M/G/1 delay
  // (rho 0.995: 199 * 2 ms = 0.398 s). In flight: 500/s served * (1 + 2 +
  // 398) ms + 4000 = 4200.5.
  KeeperOptions o;
  o.capacity_ops_per_s = 1000;
  o.background_ops_per_s = 900;
  Keeper k(o, 1);
  k.set_degradation(Time{0}, 0.5, 0);
  EXPECT_NEAR(k.in_flight(Time::seconds(10)), 4200.5, 1e-6);
  EXPECT_EQ(k.expected_wait(Time::seconds(10)), Time::millis(8398));
  EXPECT_NEAR(k.peak_in_flight(), 4200.5, 1e-6);
  // Back to full capacity at 10 s: drains at 1000 - 900 = 100/s: 2000 left at 30 s.
  k.set_degradation(Time::seconds(10), 1.0, 0);
  EXPECT_NEAR(k.in_flight(Time::seconds(30)) - 2000, 900 * (0.001 + 0.001 + 0.9 / 0.1 * 0.001),
              1e-6);
}

TEST(Keeper, ARequestWaitingLongerThanTheOperationTimeoutFails) {
  // As above, at 15 s the backlog is 6000: a 12 s wait > operation_timeout_ms
  // (10 s): the client gives up after 10 s (ZOPERATIONTIMEOUT).
  KeeperOptions o;
  o.capacity_ops_per_s = 1000;
  o.background_ops_per_s = 900;
  o.service_time_cv = 0;
  Keeper k(o, 1);
  k.set_degradation(Time{0}, 0.5, 0);
  const KeeperAnswer a = k.request(Time::seconds(15), 2, KeeperClient::INSERTS);
  EXPECT_FALSE(a.ok);
  EXPECT_TRUE(a.operation_timeout);
  EXPECT_EQ(a.latency, Time::seconds(10));
  EXPECT_EQ(k.ops(), 1);  // the second request was never sent
  // At 5 s: 2000 waiting, 4 s + the queueing delay (mean 0.199 s here) < 10 s.
  Keeper early(o, 1);
  early.set_degradation(Time{0}, 0.5, 0);
  const KeeperAnswer b = early.request(Time::seconds(5), 1, KeeperClient::INSERTS);
  EXPECT_TRUE(b.ok);
  EXPECT_GE(b.latency, Time::millis(4003));  // 1 ms + 2 ms service + 4 s
}

TEST(Keeper, WithoutALeaderEveryRequestFailsAtOnce) {
  Keeper k(production(), 1);
  k.set_unavailable(Time::seconds(1), Time::seconds(3));
  EXPECT_FALSE(k.available(Time::seconds(2)));
  const KeeperAnswer a = k.request(Time::seconds(2), 2, KeeperClient::KEEPER_MAP);
  EXPECT_FALSE(a.ok);
  EXPECT_FALSE(a.operation_timeout);
  EXPECT_EQ(a.latency, Time::millis(1));  // a connection loss, one round trip
  EXPECT_EQ(k.ops(), 0);
  EXPECT_EQ(k.failed_requests(), 1);
  EXPECT_TRUE(k.request(Time::seconds(3), 1, KeeperClient::KEEPER_MAP).ok);
}

}  // namespace
}  // namespace pipesim::keeper
