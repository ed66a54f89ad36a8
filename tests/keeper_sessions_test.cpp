// The ClickHouse servers' sessions as Keeper's queue sees them
// (models/keeper/keeper_sessions.cpp): when the threads' requests outwait
// operation_timeout_ms (every server's session ends then), and what a
// server without a session leaves behind (its threads gone, their queued
// requests served for no one). Expectations by hand from the closed loop's
// mean-field equation, dF/dt = (N - F) / D - mu.
#include <gtest/gtest.h>

#include <cmath>

#include "models/keeper/keeper.h"

namespace pipesim::keeper {
namespace {

using sim::Time;

// configs/lab/keeper_backlog_insert_timeout.json's Keeper: 1000 requests/s,
// 1000 threads sending 500/s healthy (away D = 1.998 s, by bisection on the
// machine-repairman throughput), constant service, 0.1 ms round trip.
constexpr double kAway = 1.998;
KeeperOptions lab() {
  KeeperOptions o;
  o.latency = Time::micros(100);
  o.commit_latency = Time{};
  o.capacity_ops_per_s = 1000;
  o.background_ops_per_s = 500;
  o.background_clients = 1000;
  o.service_time_cv = 0;
  return o;
}
double seconds(Time t) { return static_cast<double>(t.us) / 1e6; }
// The production queue with a 1 ms round trip for reads and writes alike
// (the arithmetic below is about the queue; tests/keeper_test.cpp's
// ReadsAndWrites test what a write's commit adds).
KeeperOptions production() {
  KeeperOptions o;
  o.latency = Time::millis(1);
  o.commit_latency = Time{};
  return o;
}
// The production threads' away time (tools/keeper_mva.py).
constexpr double kAway_production() { return 0.172767; }
// At 50/s the threads fill the queue towards L = N - mu D with time constant D.
constexpr double kLimit = 1000 - 50 * kAway;  // 900.1
double queued_after(double tau) { return kLimit * (1 - std::exp(-tau / kAway)); }

TEST(KeeperSessions, AHealthyKeeperEndsNoSession) {
  Keeper k(lab(), 1);
  EXPECT_EQ(k.threads_time_out_at(Time::seconds(5)), Time::max());
  // A capacity drop to 25% (250/s): the queue fills to N - mu D = 500.5,
  // 2.0 s of work: far from the operation timeout.
  k.set_degradation(Time::seconds(5), 0.25, ExtraClient{});
  EXPECT_EQ(k.threads_time_out_at(Time::seconds(5)), Time::max());
}

TEST(KeeperSessions, TheThreadsOutwaitTheOperationTimeoutOnceTheQueueHoldsTenSecondsOfWork) {
  // At 50/s a request waits (ahead + 1) / 50 + 0.1 ms: past 10 s once 499.0
  // are ahead, D ln(L / (L - 499.0)) = 1.615 s into the backlog; its session
  // ends 10 s after it was sent.
  Keeper k(lab(), 1);
  const Time start = Time::seconds(61);
  k.set_degradation(start, 0.05, ExtraClient{});
  const double ahead = (10 - 0.0001) * 50 - 1;
  const double crossing = kAway * std::log(kLimit / (kLimit - ahead));
  EXPECT_NEAR(crossing, 1.615, 0.001);
  EXPECT_NEAR(seconds(k.threads_time_out_at(start) - start), crossing + 10, 0.005);
  // Asked later in the same regime, the answer is the same moment.
  EXPECT_NEAR(seconds(k.threads_time_out_at(start + Time::seconds(1)) - start), crossing + 10,
              0.005);
  // Past the crossing: the request sent now is the first over.
  EXPECT_EQ(k.threads_time_out_at(start + Time::seconds(3)), start + Time::seconds(13));
}

TEST(KeeperSessions, AStallLongerThanTheOperationTimeoutEndsTheSessionsTenSecondsIn) {
  Keeper k(production(), 1);
  k.set_stalled(Time::seconds(10), Time::seconds(22));
  EXPECT_EQ(k.threads_time_out_at(Time::seconds(10)), Time::seconds(20));
  // A 5 s stall: the 1,728 threads queued by its end take 43 ms to serve.
  Keeper calm(production(), 1);
  calm.set_stalled(Time::seconds(10), Time::seconds(15));
  EXPECT_EQ(calm.threads_time_out_at(Time::seconds(10)), Time::max());
}

TEST(KeeperSessions, ABurstOfMoreThanTenSecondsOfWorkEndsTheSessionsOfTheThreadsBehindIt) {
  // 500,000 removes at 40,000/s: 12.5 s of the leader's work; a thread's
  // request sent just after them waits for all of them.
  KeeperOptions o = production();
  o.service_time_cv = 0;
  Keeper k(o, 1);
  k.burst(Time::seconds(10), 500000, KeeperClient::CLEANUP, -1, false);
  EXPECT_EQ(k.threads_time_out_at(Time::seconds(10)), Time::seconds(20));
  // 300,000 (7.5 s): none does.
  Keeper small(o, 1);
  small.burst(Time::seconds(10), 300000, KeeperClient::CLEANUP, -1, false);
  EXPECT_EQ(small.threads_time_out_at(Time::seconds(10)), Time::max());
}

TEST(KeeperSessions, AServerWithoutASessionLeavesItsQueuedRequestsToBeServedForNoOne) {
  // 20 s into the backlog 900.1 (1 - e^(-20 / D)) = 900.06 requests are
  // queued. Every session ends: the threads leave, in flight drops to what
  // no thread has (nothing), and their requests hold the leader for
  // 900.06 / 50 = 18.0 s: a request sent then (the restarting thread's
  // handshake) waits for them, outwaits 10 s, and is served 18.0 s + its own
  // 20 ms + 0.1 ms later.
  Keeper k(lab(), 1);
  const Time start = Time::seconds(61);
  k.set_degradation(start, 0.05, ExtraClient{});
  const Time end = start + Time::seconds(20);
  EXPECT_NEAR(k.in_flight(end), queued_after(20) + (1000 - queued_after(20)) * 0.0001 / kAway, 0.5);
  k.set_session_share(end, 0.0);
  EXPECT_NEAR(k.in_flight(end), 0.0, 1e-9);
  EXPECT_EQ(k.threads_time_out_at(end), Time::max());  // no thread left to time out
  const KeeperAnswer handshake = k.request(end, 1, KeeperClient::REPLICATION);
  EXPECT_FALSE(handshake.ok);
  EXPECT_TRUE(handshake.operation_timeout);
  EXPECT_NEAR(seconds(handshake.served_after), queued_after(20) / 50 + 0.02 + 0.0001, 0.001);
  // Capacity comes back 5 s later: the 13.0 s of work left take 0.65 s.
  k.set_degradation(end + Time::seconds(5), 1.0, ExtraClient{});
  const double left = (queued_after(20) / 50 - 5) / 20;
  const KeeperAnswer after = k.request(end + Time::seconds(5), 1, KeeperClient::REPLICATION);
  ASSERT_TRUE(after.ok);
  EXPECT_NEAR(seconds(after.latency), left + 0.001 + 0.0001, 0.001);
}

TEST(KeeperSessions, HalfTheServersLeaveHalfTheirThreadsQueue) {
  // At 50/s, 20 s in: half the sessions end. Half the queue (450.03) is
  // left for no one, served first (9.0 s); the other half stays, and the
  // 500 threads left, away D each, keep coming back behind them.
  Keeper k(lab(), 1);
  const Time start = Time::seconds(61);
  k.set_degradation(start, 0.05, ExtraClient{});
  const Time end = start + Time::seconds(20);
  const double before = k.in_flight(end);
  k.set_session_share(end, 0.5);
  EXPECT_DOUBLE_EQ(k.session_share(), 0.5);
  EXPECT_FALSE(k.healthy(end));
  // In flight: the 450.03 of theirs still queued, and the round trips of the 49.97 away.
  const double half = queued_after(20) / 2;
  EXPECT_NEAR(k.in_flight(end), half + (500 - half) * 0.0001 / kAway, 0.5);
  EXPECT_LT(k.in_flight(end), before / 2 + 1);
  // A request sent now waits 9.0 s for the orphans, then the 450 queued and
  // the threads that came meanwhile (500 (1 - e^(-9 / D)) - ... at most 500):
  // past 10 s, so the sessions left end 10 s later.
  EXPECT_EQ(k.threads_time_out_at(end), end + Time::seconds(10));
  // Back to every session: the threads return, the loop is whole again.
  k.set_session_share(end + Time::seconds(60), 1.0);
  k.set_degradation(end + Time::seconds(60), 1.0, ExtraClient{});
  EXPECT_TRUE(k.healthy(end + Time::seconds(120)));
}

TEST(KeeperSessions, TheThreadsRequestsHeldByAStallAreInKeepersHistogramWithTheirWaits) {
  // A 2 s stall from 10 s: the threads come back to it at (N - F) / D and
  // queue, 1,728 (1 - e^(-2 / D)) = 1,728.0 of them. Half of them came by
  // D ln 2 = 0.1198 s (F = 864): that one is answered at the stall's end +
  // 865 / 40,000 + 1 ms, so it spent 2 - 0.1198 + 0.0226 = 1.9028 s in
  // Keeper. By 13 s Keeper served the background's 10,000/s for 11 s too:
  // the held ones are the top 1,728 of the histogram, their median the
  // (1 - 864 / count) quantile.
  Keeper k(production(), 1);
  k.set_stalled(Time::seconds(10), Time::seconds(12));
  (void)k.mean_in_flight(Time::seconds(13));  // brings the histogram up to 13 s
  const sim::Histogram& h = k.latency_histogram();
  const auto count = static_cast<double>(h.count());
  EXPECT_NEAR(count, 10000 * 11 + 1728, 100);
  const double median_held = 2 - kAway_production() * std::log(2.0) + 865.0 / 40000 + 0.001;
  EXPECT_NEAR(median_held, 1.9028, 0.0001);
  EXPECT_NEAR(h.percentile(1 - 864 / count) / 1e6, median_held, 0.03 * median_held);
  // And none of them waited less than the queue left at the stall's end.
  EXPECT_GT(h.percentile(1 - 1700 / count) / 1e6, 1728.0 / 40000);
}

// ZooKeeperRequest per server: three servers share the production
// background (constant service, 25 us a request): 10.3333 in flight
// Keeper-wide when calm (tests/keeper_test.cpp), a third of it each.
KeeperOptions constant_service() {
  KeeperOptions o = production();
  o.service_time_cv = 0;
  return o;
}
constexpr double kCalm = 10.3333;

TEST(KeeperSessions, EachServerCountsItsShareOfTheThreadsAndTheBurstsItSent) {
  Keeper k(constant_service(), 1);
  k.set_servers(3);
  // A minute of calm: four readings a server, each a third of the threads'.
  const Keeper::Readings& calm = k.server_readings(Time::seconds(60));
  EXPECT_EQ(calm.count, 3 * 4);
  EXPECT_NEAR(calm.sum / static_cast<double>(calm.count), kCalm / 3, 0.001);
  EXPECT_NEAR(calm.max, kCalm / 3, 0.001);
  EXPECT_NEAR(k.busiest_server_mean_in_flight(Time::seconds(60)), kCalm / 3, 0.001);
  // Server 1 sends 8,000 at once at 60 s: its ZooKeeperRequest holds all of
  // them and its third of the threads; Keeper-wide counts them too.
  k.burst(Time::seconds(60), 8000, KeeperClient::CLEANUP, 1, false);
  EXPECT_NEAR(k.server_peak_in_flight(), kCalm / 3 + 8000, 0.001);
  EXPECT_NEAR(k.peak_in_flight(), kCalm + 8000, 0.01);
  // Its time-average over 80 s gains the burst's 8,000 x (8 us + 1 ms) +
  // 8,000 x 0.1 s (answered evenly over 0.2 s) = 808.06 request-seconds,
  // and its third of the threads' pile-up behind it: over the 0.2 s hold
  // 1728 (0.2 - D (1 - e^(-0.2/D))) = 140.87 (D = 0.172767 s), then the
  // drain from 1,184.9 at L = 1728 - 40,000 D = -5,182.7 for
  // D ln(6,367.6 / 5,182.7) = 35.6 ms: L t + 6,367.6 D (1 - e^(-t/D)) =
  // 20.34; at the leader, so less the round trip's share 1 ms / D: 160.3.
  const double busiest = k.busiest_server_mean_in_flight(Time::seconds(80));
  EXPECT_NEAR(busiest, kCalm / 3 + (808.06 + 160.3 / 3) / 80, 0.002);
}

TEST(KeeperSessions, AServerWithoutASessionCountsNothing) {
  // Server 0's session ends at 10 s: its threads leave, and the other two
  // share the rest (two thirds of the threads, a third each); a reading at
  // 15 s sees 0 at server 0.
  Keeper k(constant_service(), 1);
  k.set_servers(3);
  k.set_sessions(Time::seconds(10), {false, true, true});
  EXPECT_NEAR(k.session_share(), 2.0 / 3, 1e-12);
  const Keeper::Readings& r = k.server_readings(Time::seconds(15));
  EXPECT_EQ(r.count, 3);
  EXPECT_DOUBLE_EQ(r.min, 0.0);
  // 1,152 threads away 0.172767 s: 6,668/s at 1 ms, so 6.67 on their way
  // and ~0.2 at the leader, a third each of the two left... 3.4 each.
  EXPECT_NEAR(r.max, (kCalm * 2 / 3) / 2, 0.2);
  EXPECT_NEAR(r.sum, kCalm * 2 / 3, 0.4);
}

}  // namespace
}  // namespace pipesim::keeper
