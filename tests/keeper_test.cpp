// Keeper as the server of a closed loop of ClickHouse threads: the
// machine-repairman distribution against exact mean value analysis by hand,
// the production baseline, a capacity drop (saturation: N - mu D at the
// leader) and its drain, operation timeouts, leader elections, a runaway
// client, bursts (the cleanup thread's reads and removes sent at once), and
// the bound every closed loop keeps: in-flight never exceeds the threads and
// the bursts not yet answered.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/keeper/keeper.h"
#include "sim/engine/random.h"

namespace pipesim::keeper {
namespace {

using sim::Time;

// The production queue (40000/s, 10000/s from 1728 threads) with a 1 ms
// round trip for reads and writes alike, so that the arithmetic below stays
// about the queue; what a write's commit adds is tested apart (ReadsAndWrites).
KeeperOptions production() {
  KeeperOptions o;
  o.latency = Time::millis(1);
  o.commit_latency = Time{};
  return o;
}

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

// Reads and writes (ClickHouse Keeper 25.x): a read is served by the node the
// server is connected to, a round trip; a write is forwarded to the leader and
// answered once Raft has committed it (the leader's and a follower's fsync),
// commit_latency more. The leader's request thread goes on batching while
// Raft commits, so the commit is time in flight, not the leader's service.
KeeperOptions no_queue() {
  KeeperOptions o;                 // a read 0.3 ms, a write 0.3 + 1.4 ms
  o.capacity_ops_per_s = 1000000;  // 1 us a request
  o.background_ops_per_s = 0;
  o.service_time_cv = 0;
  return o;
}

TEST(KeeperReadsAndWrites, AWriteTakesItsRaftCommitOnTopOfTheRoundTrip) {
  // allocateBlockNumber and the commit multi after a read: 3 x (300 + 1) us
  // + 2 x 1,400 us; the same three as reads: 903 us.
  Keeper k(no_queue(), 1);
  const KeeperAnswer chain = k.request(Time::seconds(1), 3, KeeperClient::INSERTS, -1, 2);
  ASSERT_TRUE(chain.ok);
  EXPECT_EQ(chain.latency, Time::micros(3 * 301 + 2 * 1400));
  EXPECT_EQ(chain.last_request, Time::micros(1701));
  const KeeperAnswer reads = k.request(Time::seconds(2), 3, KeeperClient::INSERTS);
  EXPECT_EQ(reads.latency, Time::micros(903));
  // The expected chain prices the same.
  EXPECT_EQ(
      k.expected_chain_time(Time::seconds(3), 6, 2) - k.expected_chain_time(Time::seconds(3), 6, 0),
      Time::micros(2800));
}

TEST(KeeperReadsAndWrites, ABurstOfRemovesHoldsTheLeaderAsLongAsReadsButIsAnsweredACommitLater) {
  Keeper reads(no_queue(), 1);
  Keeper removes(no_queue(), 1);
  const Keeper::BurstAnswer r =
      reads.burst(Time::seconds(1), 1000, KeeperClient::CLEANUP, -1, false);
  const Keeper::BurstAnswer w =
      removes.burst(Time::seconds(1), 1000, KeeperClient::CLEANUP, -1, true);
  // 1,000 x 1 us of the leader's time either way; the last answer a round
  // trip after it, and a commit more for the removes.
  EXPECT_EQ(r.held, Time::millis(1));
  EXPECT_EQ(w.held, r.held);
  EXPECT_EQ(r.done, Time::millis(1) + Time::micros(300));
  EXPECT_EQ(w.done, r.done + Time::micros(1400));
  // Still in flight 1.5 ms after they were sent: none of the reads, the
  // removes answered from 1.701 ms on.
  EXPECT_NEAR(reads.in_flight(Time::seconds(1) + Time::micros(1500)), 0, 1e-9);
  EXPECT_NEAR(removes.in_flight(Time::seconds(1) + Time::micros(1500)), 1000, 1e-9);
}

TEST(KeeperReadsAndWrites, LoadCountsEachWritesCommitInFlight) {
  // 10 requests from one sender, 4 of them writes, at 0: in flight for
  // 10 x 301 us + 4 x 1,400 us = 8.61 ms of request-seconds.
  Keeper k(no_queue(), 1);
  k.add_load(Time{0}, 10, KeeperClient::REPLICATION, 1, -1, 4);
  EXPECT_NEAR(k.mean_in_flight(Time::seconds(1)), 0.00861, 1e-9);
}

TEST(KeeperReadsAndWrites, TheBackgroundsWritesAreAThirdOfItsRequestsInFlight) {
  // 10,000/s from three servers, a third of them writes: a node takes its
  // server's 1,111/s writes, so a read waits on average
  // c - (1 - e^(-lambda c)) / lambda = 0.690 ms for the last of them to
  // commit. On its way: 0.3 ms + 1.4 / 3 ms + 2/3 x 0.690 ms, x 10,000/s by
  // Little's law, plus the 1/3 at the leader.
  Keeper k(KeeperOptions{}, 1);
  k.set_servers(3);
  const double lambda = 10000.0 / 3 / 3;
  const double wait = 0.0014 - (1 - std::exp(-lambda * 0.0014)) / lambda;
  EXPECT_NEAR(wait, 0.000690, 1e-6);
  EXPECT_NEAR(k.in_flight(Time::seconds(1)), 10000 * (0.0003 + 0.0014 / 3 + 2 * wait / 3) + 1.0 / 3,
              0.01);
  EXPECT_EQ(k.write_extra(), Time::micros(1400) - Time::micros(690));
  // Keeper's latency histogram: the reads that found no write uncommitted
  // (e^(-lambda c) = 21% of them, 14% of all) take a round trip and their
  // queue; the writes (a third), 1.4 ms more.
  (void)k.mean_in_flight(Time::seconds(100));
  const sim::Histogram& h = k.latency_histogram();
  EXPECT_LT(h.percentile(0.10), 300 + 100);
  EXPECT_GT(h.percentile(0.80), 1600);  // 1,700 us and more, to the histogram's resolution
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
  KeeperOptions o = production();
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

TEST(Keeper, InFlightNeverExceedsTheThreadsAndTheBursts) {
  // Random regimes: capacity, threads, a runaway client, an election, a
  // stall, cleanup bursts; at every probe the in-flight count, its peak and
  // its mean stay within the threads of the loop plus the bursts' requests.
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
    std::vector<std::int64_t> bursts;
    std::int64_t most_bursts = 0;
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
        if (!k.available(t)) bursts.clear();
      } else if (u < 0.55) {
        // A cleanup burst: all of it in flight the moment it is sent.
        const auto n = static_cast<std::int64_t>(1 + rng.below(20000));
        if (k.burst(t, n, KeeperClient::CLEANUP, -1, false).ok) {
          bursts.push_back(n);
          EXPECT_GE(k.in_flight(t), static_cast<double>(n) - 1e-6);
        }
      } else if (u < 0.6) {
        k.set_stalled(t, t + Time::millis(1 + static_cast<std::int64_t>(rng.below(30000))));
      } else {
        k.request(t, 1 + static_cast<int>(rng.below(3)), KeeperClient::INSERTS);
        bursts.push_back(1);  // this pipeline's own request: one in flight until answered
      }
      most_threads = std::max(most_threads, k.client_threads());
      std::int64_t sent = 0;  // own requests since the last election: a bound on those unanswered
      for (const std::int64_t n : bursts) sent += n;
      most_bursts = std::max(most_bursts, sent);
      EXPECT_LE(k.in_flight(t), static_cast<double>(k.client_threads() + sent) + 1e-6);
    }
    EXPECT_LE(k.peak_in_flight(), static_cast<double>(most_threads + most_bursts) + 1e-6);
    EXPECT_LE(k.mean_in_flight(t), static_cast<double>(most_threads + most_bursts) + 1e-6);
  }
}

// The production background with a constant service time (25 us a request),
// so that a burst's timing is exact: D = 0.172767 s is the threads' away
// time (TheBaselineKeepsTenRequestsInFlight), and 1/3 of a request is at the
// leader when nothing is held.
constexpr double kAway = 0.172767;
constexpr double kRoundTripShare = 0.001 / kAway;
KeeperOptions constant_service() {
  KeeperOptions o = production();
  o.service_time_cv = 0;
  return o;
}
// The threads' mean-field number at the leader `tau` s into a hold (from 0).
double held_threads(double tau) { return 1728 * (1 - std::exp(-tau / kAway)); }
// Everything in flight with `at_leader` of the threads at the leader.
double threads_in_flight(double at_leader) {
  return at_leader + (1728 - at_leader) * kRoundTripShare;
}

TEST(Keeper, ABurstHoldsTheLeaderAndIsInFlightUntilItsLastAnswer) {
  // 8,000 removes sent at once at 10 s: behind the 1/3 request at the leader
  // (8 us of service), 8,000 x 25 us = 0.2 s of the leader's time, answered
  // one by one, each a round trip (1 ms) after its service.
  Keeper k(constant_service(), 1);
  const Time now = Time::seconds(10);
  const double calm = k.in_flight(now);
  EXPECT_NEAR(calm, 10.3333, 0.01);
  const Keeper::BurstAnswer b = k.burst(now, 8000, KeeperClient::CLEANUP, -1, false);
  ASSERT_TRUE(b.ok);
  EXPECT_EQ(b.done, Time::micros(8) + Time::millis(200) + Time::millis(1));
  EXPECT_EQ(k.ops(KeeperClient::CLEANUP), 8000);
  EXPECT_NEAR(k.in_flight(now), calm + 8000, 1e-6);
  EXPECT_NEAR(k.peak_in_flight(), calm + 8000, 1e-6);
  // 100 ms into the leader's work: the threads pile up behind it
  // (dF/dt = (N - F) / D from 0: 759.3 of them) and 8,000 x 101 / 200 of the
  // burst's answers are still to come.
  const Time half = now + Time::micros(8) + Time::millis(100);
  EXPECT_FALSE(k.healthy(half));
  EXPECT_NEAR(k.in_flight(half),
              threads_in_flight(1.0 / 3 + held_threads(0.1)) + 8000 * 0.101 / 0.2, 1.0);
  // Once the leader is done with them, the threads' queue (1,184.9) drains
  // at 40,000/s against their return: within D ln((1184.9 + 5182.7) / 5182.7)
  // = 36 ms it is the baseline again.
  EXPECT_TRUE(k.healthy(now + b.done + Time::millis(40)));
  EXPECT_NEAR(k.in_flight(now + b.done + Time::millis(40)), calm, 0.01);
  // Over the whole run: the burst's request-seconds are 8,000 x (8 us + 1 ms)
  // plus the ramp's 8,000 x 0.1 s; the threads' queue adds its own.
  EXPECT_GT(k.mean_in_flight(Time::seconds(20)) * 20, 10.3333 * 20 + 8000 * (0.001008 + 0.1) - 1);
}

TEST(Keeper, AMultiReadIsOneRequestInFlightThatHoldsTheLeaderForItsSubReads) {
  // zkutil's exists() over 77,400 paths against ClickHouse Keeper: one
  // MultiRead request. Behind the 1/3 request at the leader (8 us), its
  // sub-reads at 774,000/s take 100 ms; it is answered whole a round trip
  // later, one request in flight until then.
  Keeper k(constant_service(), 1);
  const Time now = Time::seconds(10);
  const double calm = k.in_flight(now);
  const Keeper::BurstAnswer r = k.multi_read(now, 77400, KeeperClient::CLEANUP);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.held, Time::millis(100));
  EXPECT_EQ(r.done, Time::micros(8) + Time::millis(100) + Time::millis(1));
  EXPECT_EQ(k.ops(KeeperClient::CLEANUP), 1);
  EXPECT_NEAR(k.in_flight(now), calm + 1, 1e-6);
  // 50 ms into its sub-reads: still one request of ours, and the threads
  // piled up behind it as behind any hold.
  const Time half = now + Time::micros(8) + Time::millis(50);
  EXPECT_NEAR(k.in_flight(half), threads_in_flight(1.0 / 3 + held_threads(0.05)) + 1, 1.0);
  // Answered: only the threads are left.
  EXPECT_LT(k.in_flight(now + r.done + Time::millis(40)), calm + 0.01);

  // Without the MULTI_READ feature (Apache ZooKeeper): an asyncExists per
  // path, all in flight at once, at the leader's 40,000/s (1.935 s).
  KeeperOptions zk = constant_service();
  zk.multi_read = false;
  Keeper z(zk, 1);
  const Keeper::BurstAnswer each = z.multi_read(now, 77400, KeeperClient::CLEANUP);
  EXPECT_EQ(each.held, Time::micros(1935000));
  EXPECT_EQ(z.ops(KeeperClient::CLEANUP), 77400);
  EXPECT_NEAR(z.in_flight(now), calm + 77400, 1e-6);

  // A keeper_backlog at a quarter of the capacity slows the sub-reads alike.
  Keeper slow(constant_service(), 1);
  slow.set_degradation(now, 0.25, ExtraClient{});
  EXPECT_EQ(slow.multi_read(now + Time::seconds(100), 77400, KeeperClient::CLEANUP).held,
            Time::millis(400));
}

TEST(Keeper, ARequestSentDuringABurstWaitsForItAndTheThreadsThatCameMeanwhile) {
  // Sent 50 ms into the burst's service: the leader is 150 ms from done;
  // then it serves the 1728 (1 - e^(-0.05 / D)) = 434.3 (434) thread requests
  // queued meanwhile and this one, at 25 us each, plus the round trip.
  Keeper k(constant_service(), 1);
  const Time now = Time::seconds(10);
  k.burst(now, 8000, KeeperClient::CLEANUP, -1, false);
  const KeeperAnswer a =
      k.request(now + Time::micros(8) + Time::millis(50), 1, KeeperClient::INSERTS);
  ASSERT_TRUE(a.ok);
  EXPECT_EQ(std::llround(held_threads(0.05)), 434);
  EXPECT_EQ(a.latency, Time::millis(150) + Time::millis(1) + Time::micros(435 * 25));
}

TEST(Keeper, TheRemovesSentOnTheReadsLastAnswerFindTheThreadsTheReadsHeld) {
  // getBlocksSortedByTime's 8,000 reads, then clearOldBlocks' 7,000 removes
  // sent when the last read is answered (201.008 ms later): the threads held
  // for 0.2 s (1,184.9) have drained for 1 ms since (dF/dt = (N - F) / D - mu:
  // L = 1728 - 40,000 D = -5,182.7, F = L + (1,184.9 - L) e^(-0.001 / D)), so
  // the removes are in flight beside them, and start after them.
  Keeper k(constant_service(), 1);
  const Time now = Time::seconds(10);
  const Keeper::BurstAnswer reads = k.burst(now, 8000, KeeperClient::CLEANUP, -1, false);
  const Time sent = now + reads.done;
  const double limit = 1728 - 40000 * kAway;
  const double queued = limit + (held_threads(0.2) - limit) * std::exp(-0.001 / kAway);
  EXPECT_NEAR(queued, 1148.0, 1.0);
  const Keeper::BurstAnswer removes = k.burst(sent, 7000, KeeperClient::CLEANUP, -1, false);
  EXPECT_NEAR(k.peak_in_flight(), threads_in_flight(1.0 / 3 + queued) + 7000, 2.0);
  EXPECT_NEAR(static_cast<double>(removes.done.us) / 1e6,
              (1.0 / 3 + queued) / 40000 + 0.175 + 0.001, 50e-6);
}

TEST(Keeper, AStallDuringABurstPostponesTheAnswersItHadNotGiven) {
  // The burst of 8,000 is half served at 10.1 s; a 1 s stall holds the rest,
  // answered from 11.1 s on at the same pace.
  Keeper k(constant_service(), 1);
  const Time now = Time::seconds(10);
  const Keeper::BurstAnswer b = k.burst(now, 8000, KeeperClient::CLEANUP, -1, false);
  const double left =
      k.in_flight(now + Time::millis(100)) - threads_in_flight(1.0 / 3 + held_threads(0.1 - 8e-6));
  k.set_stalled(now + Time::millis(100), now + Time::millis(1100));
  EXPECT_NEAR(
      k.in_flight(now + Time::millis(1100)) - threads_in_flight(1.0 / 3 + held_threads(1.1 - 8e-6)),
      left, 2.0);
  // Its last answer comes a second later than planned.
  EXPECT_FALSE(k.healthy(now + b.done + Time::millis(900)));
  EXPECT_NEAR(k.in_flight(now + b.done + Time::seconds(2)), 10.3333, 0.01);
}

TEST(Keeper, AnElectionDropsTheBurstItsOldLeaderHeld) {
  Keeper k(constant_service(), 1);
  k.burst(Time::seconds(10), 8000, KeeperClient::CLEANUP, -1, false);
  k.set_unavailable(Time::seconds(10) + Time::millis(50), Time::seconds(11));
  EXPECT_EQ(k.in_flight(Time::seconds(10) + Time::millis(60)), 0.0);
  EXPECT_FALSE(
      k.burst(Time::seconds(10) + Time::millis(60), 10, KeeperClient::CLEANUP, -1, false).ok);
  // The new leader starts empty: no burst held, the baseline within a second.
  EXPECT_NEAR(k.in_flight(Time::seconds(12)), 10.3333, 0.01);
  EXPECT_TRUE(k.healthy(Time::seconds(12)));
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
