// Keeper as the server of a closed loop of ClickHouse threads: the
// machine-repairman distribution against exact mean value analysis by hand,
// the production baseline, a capacity drop (saturation: N - mu D at the
// leader) and its drain, operation timeouts, leader elections, a runaway
// client, and the bound every closed loop keeps: in-flight never exceeds the
// threads.
#include <gtest/gtest.h>

#include <algorithm>

#include "models/keeper/keeper.h"
#include "sim/engine/random.h"

namespace pipesim::keeper {
namespace {

using sim::Time;

KeeperOptions production() { return KeeperOptions{}; }  // 1 ms, 40000/s, 10000/s from 1728 threads

TEST(ClosedLoop, TwoClientsMatchMeanValueAnalysis) {
  // Exact MVA by hand, S = 1 s, away D = 1 s: R(1) = 1, X(1) = 1 / 2,
  // Q(1) = 0.5; R(2) = S (1 + Q(1)) = 1.5, X(2) = 2 / (1 + 1.5) = 0.8,
  // Q(2) = 0.8 * 1.5 = 1.2.
  ClosedLoop loop;
  loop.solve(1.0, {ClientClass{2, 1.0}});
  EXPECT_NEAR(loop.throughput(), 0.8, 1e-12);
  EXPECT_NEAR(loop.mean_at_leader(), 1.2, 1e-12);
  // A request from outside sees P_2 = (1, 2, 2) / 5.
  EXPECT_EQ(loop.ahead(0.19), 0);
  EXPECT_EQ(loop.ahead(0.21), 1);
  EXPECT_EQ(loop.ahead(0.59), 1);
  EXPECT_EQ(loop.ahead(0.61), 2);
  EXPECT_EQ(loop.ahead(0.999), 2);
  // And the inverse: the away time that gives 0.8/s is 1 s.
  EXPECT_NEAR(ClosedLoop::away_for_throughput(1.0, 2, 0.8), 1.0, 1e-9);
  // Two classes with the same away time are one class.
  ClosedLoop split;
  split.solve(1.0, {ClientClass{1, 1.0}, ClientClass{1, 1.0}});
  EXPECT_NEAR(split.throughput(), 0.8, 1e-9);
  EXPECT_NEAR(split.mean_at_leader(), 1.2, 1e-9);
}

// Exact mean value analysis (Reiser-Lavenberg) of one class of n threads
// away d each, one FCFS exponential server of rate mu: an algorithm
// independent of the product-form distribution ClosedLoop sums. The rows are
// VALIDATION.md's "Keeper under load" table (tools/keeper_mva.py).
struct Mva {
  double throughput = 0;
  double at_leader = 0;
};
Mva mva(std::int64_t n, double d, double mu) {
  double q = 0;
  Mva out;
  for (std::int64_t k = 1; k <= n; ++k) {
    const double r = (1 + q) / mu;
    out.throughput = static_cast<double>(k) / (d + r);
    q = out.throughput * r;
  }
  out.at_leader = q;
  return out;
}

TEST(ClosedLoop, AgreesWithMeanValueAnalysisUnderLoad) {
  struct Row {
    std::int64_t n;
    double d, mu;
  };
  for (const Row& row : {Row{1728, 0.172767, 40000}, Row{1728, 0.172767, 10000}, Row{1728, 0.172767, 2000},
                         Row{1728, 0.172767, 120}, Row{1000, 1.998004, 50}, Row{16, 0.01, 1000}}) {
    ClosedLoop loop;
    loop.solve(row.mu, {ClientClass{row.n, row.d}});
    const Mva want = mva(row.n, row.d, row.mu);
    EXPECT_NEAR(loop.throughput(), want.throughput, 1e-9 * want.throughput) << row.n << " " << row.mu;
    EXPECT_NEAR(loop.mean_at_leader(), want.at_leader, 1e-6 * std::max(1.0, want.at_leader))
        << row.n << " " << row.mu;
  }
}

TEST(Keeper, TheBaselineKeepsTenRequestsInFlight) {
  // 10000/s on their way for 1 ms: 10 (Little's law); at the leader, with
  // utilisation 10000 / 40000 = 0.25 and 1728 threads, the open M/M/1 figure
  // rho / (1 - rho) = 1/3 is within 0.01 of the closed one.
  Keeper k(production(), 1);
  EXPECT_NEAR(k.in_flight(Time::seconds(1)), 10.3333, 0.01);
  EXPECT_NEAR(k.mean_in_flight(Time::seconds(100)), 10.3333, 0.01);
  EXPECT_NEAR(k.background_ops(Time::seconds(100)), 1e6, 1.0);
  // 1 ms + (1/3 + 1) * 25 us.
  EXPECT_NEAR(static_cast<double>(k.expected_request_time(Time::seconds(100)).us), 1033.3, 1.0);
  EXPECT_TRUE(k.healthy(Time::seconds(100)));
}

TEST(Keeper, ACapacityDropFillsTheQueueWithTheThreadsAndNotMore) {
  // Capacity x 0.05 = 2000/s. The threads' away time D solves
  // 1728 / (D + R) = 10000 at R = (1/3 + 1) * 25 us: D = 0.172767 s. Saturated,
  // the leader serves 2000/s, so a cycle lasts 1728 / 2000 = 0.864 s and a
  // request spends R = 0.864 - D = 0.6912 s at the leader: N - mu D = 1382.5
  // requests there, plus 2000/s x 1 ms on their way (Little's law).
  Keeper k(production(), 1);
  k.set_degradation(Time{0}, 0.05, ExtraClient{});
  // Background work slows down to what the leader serves: 2000/s.
  const double before = k.background_ops(Time::seconds(50));
  EXPECT_NEAR(k.background_ops(Time::seconds(60)) - before, 20000, 1.0);
  EXPECT_FALSE(k.healthy(Time::seconds(60)));
  const double in_flight = k.in_flight(Time::seconds(60));
  EXPECT_NEAR(in_flight, 1382.5 + 2.0, 3.0);
  EXPECT_LE(k.peak_in_flight(), 1728.0);
  EXPECT_NEAR(static_cast<double>(k.expected_request_time(Time::seconds(60)).us), 1000 + 691200, 3000);
  // Half-way through the fill (t = D ln 2 = 0.12 s) the mean-field queue is
  // half of 1382.5 (it starts near 0); the threads away, 1728 - 691, spend
  // 1 ms of their 0.172767 s on the way.
  Keeper fill(production(), 1);
  fill.set_degradation(Time{0}, 0.05, ExtraClient{});
  EXPECT_NEAR(fill.in_flight(Time::micros(119753)), 1382.5 / 2 + (1728 - 691.25) * 0.001 / 0.172767, 3.0);
  // Capacity back at 60 s: the clients cannot keep 40000/s busy, the queue
  // empties within D ln((1382.5 + 5183) / 5183) = 41 ms; a second later it is
  // the baseline again.
  k.set_degradation(Time::seconds(60), 1.0, ExtraClient{});
  EXPECT_NEAR(k.in_flight(Time::seconds(61)), 10.3333, 0.01);
  EXPECT_TRUE(k.healthy(Time::seconds(61)));
}

TEST(Keeper, KeepersHistogramHoldsEveryRequestItServed) {
  // A 30-minute drop to 5% in an hour: 2000/s x 1800 s = 3.6 M requests at
  // ~0.69 s, 18 M at ~1 ms: 16.7% of them are slow, so p99 is the backlog's
  // latency (histogram buckets are within ~3%) and p50 the healthy one.
  Keeper k(production(), 1);
  k.set_degradation(Time::minutes(10), 0.05, ExtraClient{});
  k.set_degradation(Time::minutes(40), 1.0, ExtraClient{});
  const double mean = k.mean_in_flight(Time::hours(1));
  // Time-weighted: (1384.5 * 1800 + 10.33 * 1800) / 3600.
  EXPECT_NEAR(mean, (1384.5 + 10.33) / 2, 3.0);
  const auto& h = k.latency_histogram();
  EXPECT_NEAR(static_cast<double>(h.count()), 3.6e6 + 1.8e7, 2.0);
  EXPECT_NEAR(h.percentile(0.99) / 1000.0, 692.2, 0.03 * 692.2);
  EXPECT_NEAR(h.percentile(0.50) / 1000.0, 1.03, 0.05);
}

TEST(Keeper, ARequestUnansweredPastTheOperationTimeoutFails) {
  // Capacity x 0.003 = 120/s: R = 1728 / 120 - 0.1728 = 14.2 s > 10 s; the
  // client gives up after operation_timeout_ms (ZOPERATIONTIMEOUT).
  Keeper k(production(), 1);
  k.set_degradation(Time{0}, 0.003, ExtraClient{});
  const KeeperAnswer a = k.request(Time::seconds(30), 2, KeeperClient::INSERTS);
  EXPECT_FALSE(a.ok);
  EXPECT_TRUE(a.operation_timeout);
  EXPECT_EQ(a.latency, Time::seconds(10));
  EXPECT_EQ(k.ops(), 1);  // the second request was never sent
  // At 5% (0.69 s a request) both are answered, after ~1.38 s.
  Keeper slow(production(), 1);
  slow.set_degradation(Time{0}, 0.05, ExtraClient{});
  const KeeperAnswer b = slow.request(Time::seconds(30), 2, KeeperClient::INSERTS);
  EXPECT_TRUE(b.ok);
  EXPECT_NEAR(static_cast<double>(b.latency.us) / 1e6, 2 * 0.6932, 0.1);
}

TEST(Keeper, ARunawayClientSaturatesTheLeaderAtFullCapacity) {
  // 64 threads that send again at once (away = the 1 ms round trip) offer
  // 64000/s on top of 10000/s: the mean-field R solves
  // 1728 / (0.172767 + R) + 64 / (0.001 + R) = 40000, R = 1.13 ms by
  // bisection by hand; the folded model is within 15% of it.
  Keeper k(production(), 1);
  k.set_degradation(Time{0}, 1.0, ExtraClient{"runaway mutation", 64, Time{0}});
  const double r_us = static_cast<double>(k.expected_request_time(Time::seconds(10)).us) - 1000;
  EXPECT_NEAR(r_us, 1130, 0.15 * 1130);
  EXPECT_FALSE(k.healthy(Time::seconds(10)));
  EXPECT_GT(k.peak_utilisation(), 1.8);  // (10000 + 64000) / 40000 offered
}

TEST(Keeper, WhenTheOnlyClientLeavesNothingIsAheadAnyMore) {
  // No background; a runaway client of 100 threads at 1/s fills the queue
  // (99 or 100 ahead); once it is gone and its queue drained, a request
  // waits for its own service only: 1 ms + 1 s (constant service time).
  KeeperOptions o;
  o.capacity_ops_per_s = 1;
  o.background_ops_per_s = 0;
  o.service_time_cv = 0;
  Keeper k(o, 1);
  k.set_degradation(Time{0}, 1.0, ExtraClient{"runaway", 100, Time{0}});
  EXPECT_GE(k.expected_request_time(Time::seconds(10)), Time::seconds(99));
  k.set_degradation(Time::seconds(10), 1.0, ExtraClient{});
  const KeeperAnswer a = k.request(Time::hours(1), 1, KeeperClient::INSERTS);
  EXPECT_EQ(a.latency, Time::millis(1) + Time::seconds(1));
}

TEST(Keeper, InFlightNeverExceedsTheThreads) {
  // Random regimes: capacity, threads, a runaway client, an election; at
  // every probe the in-flight count, its peak and its mean stay within the
  // threads of the loop.
  sim::RandomStream rng(42, "test/keeper-bound");
  for (int trial = 0; trial < 40; ++trial) {
    KeeperOptions o;
    o.capacity_ops_per_s = 1000 + static_cast<std::int64_t>(rng.below(100000));
    o.background_clients = 1 + static_cast<std::int64_t>(rng.below(5000));
    o.background_ops_per_s = static_cast<std::int64_t>(
        static_cast<double>(std::min<std::int64_t>(o.background_clients * 900, o.capacity_ops_per_s)) *
        rng.uniform01() * 0.9);
    Keeper k(o, static_cast<std::uint64_t>(trial));
    std::int64_t most_threads = k.client_threads();
    Time t{0};
    for (int step = 0; step < 30; ++step) {
      t += Time::millis(1 + static_cast<std::int64_t>(rng.below(20000)));
      const double u = rng.uniform01();
      if (u < 0.3) {
        const ExtraClient extra{"x", static_cast<std::int64_t>(rng.below(300)),
                                Time::millis(static_cast<std::int64_t>(rng.below(50)))};
        k.set_degradation(t, 0.001 + rng.uniform01(), extra);
      } else if (u < 0.4) {
        k.set_unavailable(t, t + Time::seconds(2));
      } else {
        k.request(t, 1 + static_cast<int>(rng.below(3)), KeeperClient::INSERTS);
      }
      most_threads = std::max(most_threads, k.client_threads());
      EXPECT_LE(k.in_flight(t), static_cast<double>(k.client_threads()) + 1e-9);
    }
    EXPECT_LE(k.peak_in_flight(), static_cast<double>(most_threads) + 1e-9);
    EXPECT_LE(k.mean_in_flight(t), static_cast<double>(most_threads) + 1e-9);
  }
}

TEST(Keeper, WithoutALeaderEveryRequestFailsAtOnce) {
  Keeper k(production(), 1);
  k.set_unavailable(Time::seconds(1), Time::seconds(3));
  EXPECT_FALSE(k.available(Time::seconds(2)));
  EXPECT_EQ(k.in_flight(Time::seconds(2)), 0.0);
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
