// A caught-up (and a lagging) task's steady state
// (models/connect/steady_cycle.h) against what follows by hand from the
// fetch-and-put cycle, on evenly spaced arrivals and deterministic inserts.
#include <gtest/gtest.h>

#include <cmath>

#include "models/connect/steady_cycle.h"

namespace pipesim::connect {
namespace {

SteadyInputs one_partition(double rate) {
  SteadyInputs in;
  in.leaders = {0};
  in.rate_per_partition = rate;
  in.evenly_spaced = true;
  in.insert_base = sim::Time::millis(15);
  in.insert_per_row = sim::Time::micros(20);
  in.insert_sigma = 0;
  in.keeper_request = sim::Time::micros(1025);
  in.keeper_requests_per_insert = 2;
  return in;
}

TEST(SteadyCycle, AtALowRateEveryRecordIsPutAlone) {
  // 10 records/s: a put takes 15.02 + 2 x 1.025 = 17.07 ms, far less than
  // the 100 ms between records; each fetch waits at the broker for the next
  // record: one insert per record.
  const SteadyCycle s = steady_cycle(one_partition(10));
  EXPECT_NEAR(s.inserts_per_s, 10.0, 0.01);
  EXPECT_NEAR(s.rows_per_insert, 1.0, 1e-3);
  EXPECT_NEAR(s.cycle_s, 0.1, 1e-4);
  EXPECT_TRUE(s.caught_up);
  // Each insert's time at the server, its two Keeper requests included:
  // 15.02 + 2 x 1.025 ms (sigma 0).
  EXPECT_EQ(s.insert_latency_us[0], 17'070);
  EXPECT_EQ(s.insert_latency_us[SteadyCycle::kLatencyStrata - 1], 17'070);
}

TEST(SteadyCycle, AtAHighRateAPutCarriesWhatArrivedDuringTheLastCycle) {
  // 2000 records/s: data is always there, so the task polls again as soon
  // as put() returns, and the poll finds what the pipelined fetch brought:
  // the records of one cycle c = put(n) with n = rate x c:
  //   c = (15 ms + 2 x 1.025 ms) / (1 - 20 us x 2000/s) = 17.76 ms,
  // 56.3 inserts/s of 35.5 rows.
  const SteadyCycle s = steady_cycle(one_partition(2000));
  const double cycle = (0.015 + 2 * 0.001025) / (1 - 20e-6 * 2000);
  EXPECT_NEAR(s.cycle_s, cycle, cycle * 0.01);
  EXPECT_NEAR(s.inserts_per_s, 1 / cycle, 1 / cycle * 0.01);
  EXPECT_NEAR(s.rows_per_insert, 2000 * cycle, 2000 * cycle * 0.01);
  EXPECT_TRUE(s.caught_up);
  // Keeper: 2 requests per insert.
  EXPECT_NEAR(s.keeper_requests_per_s, 2 * s.inserts_per_s, 1e-6 * s.inserts_per_s);
  // A slower Keeper means longer cycles and fewer inserts.
  EXPECT_LT(s.inserts_per_s_per_keeper_us, 0);
}

TEST(SteadyCycle, ExactlyOnceAddsTheStateQueriesToTheCycle) {
  // Read (1 request), BEFORE and AFTER (2 each): 5 more Keeper requests.
  SteadyInputs in = one_partition(2000);
  in.keeper_map_requests = 5;
  const SteadyCycle s = steady_cycle(in);
  const double cycle = (0.015 + 7 * 0.001025) / (1 - 20e-6 * 2000);
  EXPECT_NEAR(s.cycle_s, cycle, cycle * 0.01);
  EXPECT_NEAR(s.keeper_map_queries_per_s, 3 * s.inserts_per_s, 1e-6 * s.inserts_per_s);
}

TEST(SteadyCycle, ATaskThatCannotKeepUpIsNotCaughtUp) {
  // 60,000 records/s: 20 us a row alone is 1.2 s of insert per second of
  // arrivals: every poll is full.
  const SteadyCycle s = steady_cycle(one_partition(60000));
  EXPECT_FALSE(s.caught_up);
}

TEST(SteadyCycle, ALaggingTaskPutsFullPollsAndEachFetchsTail) {
  // Saturated arrivals (the rate given is ignored): a fetch brings
  // max.partition.fetch.bytes' 1,006 records; polls take 500, 500, then the
  // fetch's last 6 (the next fetch of a partition goes out only once its
  // buffered records are consumed, and comes back within the 6-record
  // put). Cycle of 1,006 records: 2 x (15 + 500 x 0.02 + 2 x 1.025) ms +
  // (15 + 6 x 0.02 + 2 x 1.025) ms = 71.27 ms.
  const SteadyCycle s = lagging_cycle_cached(one_partition(10));
  const double cycle = 2 * (0.015 + 500 * 20e-6 + 2 * 0.001025) + (0.015 + 6 * 20e-6 + 2 * 0.001025);
  ASSERT_EQ(s.rows_per_s.size(), 1U);
  EXPECT_NEAR(s.rows_per_s[0], 1006 / cycle, 1006 / cycle * 0.005);
  EXPECT_NEAR(s.inserts_per_s, 3 / cycle, 3 / cycle * 0.005);
  EXPECT_NEAR(s.rows_per_insert, 1006 / 3.0, 0.5);
  EXPECT_FALSE(s.caught_up);
  // A slower Keeper slows a lagging task down.
  EXPECT_LT(s.inserts_per_s_per_keeper_us, 0);
}

TEST(SteadyCycle, ALaggingTaskWithSmallPollsPutsMaxPollRecordsEachCycle) {
  // max.poll.records 200 divides nothing evenly: 200 x 5 then the last 6.
  SteadyInputs in = one_partition(10);
  in.max_poll_records = 200;
  const SteadyCycle s = lagging_cycle_cached(in);
  const double cycle = 5 * (0.015 + 200 * 20e-6 + 2 * 0.001025) + (0.015 + 6 * 20e-6 + 2 * 0.001025);
  EXPECT_NEAR(s.rows_per_s[0], 1006 / cycle, 1006 / cycle * 0.005);
  EXPECT_NEAR(s.rows_per_insert, 1006 / 6.0, 0.5);
}

TEST(SteadyCycle, InverseNormalMatchesKnownQuantiles) {
  EXPECT_NEAR(inverse_normal(0.5), 0.0, 1e-9);
  EXPECT_NEAR(inverse_normal(0.975), 1.959963985, 1e-8);
  EXPECT_NEAR(inverse_normal(0.01), -2.326347874, 1e-8);
}

}  // namespace
}  // namespace pipesim::connect
