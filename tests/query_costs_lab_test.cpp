// What a query to ClickHouse costs besides the server's storage work
// (models/clickhouse/query_path.h, issue 34), in labs computed by hand.
//
// The labs' path: a round trip of 2 ms, 4 ms of TLS handshake work, 1 ms of
// server overhead per query. A client that opens a connection per query
// (client_version V1, ssl) spends 2 ms (TCP) + 2 ms + 4 ms (TLS 1.3) = 8 ms
// before its request leaves; the request reaches the server 1 ms later, the
// server's storage work starts 1 ms after that, and the answer is back 1 ms
// after the server sends it: 11 ms on top of the storage work. With a kept
// connection (V2's inserts and state writes) 3 ms. A Keeper request takes
// k ~ 0.125 ms when healthy (keeper.latency 100 us; docs/model.md §4.6).
#include <gtest/gtest.h>

#include "tests/lab_run.h"

namespace pipesim::pipeline {
namespace {

// (A cleanup_delay_period of a day keeps the cleanup thread out of this lab: its Keeper bursts
// would move the put times the hand calculation follows.)
TEST(QueryCostsLab, AConnectionPerInsertSlowsASaturatedTaskAsTheHandshakesSay) {
  // 20,000 records/s offered to one partition (the producer gets ~7,500/s
  // into Kafka), one task, max.poll.records 50, fetches as large as the
  // backlog: the task never waits for records, so it inserts back to back
  // from its first poll, after the group's first rebalance (0.5 s). An
  // insert of 50 rows: 5 ms + 50 x 20 us = 6 ms of part writing and two
  // Keeper requests (2k ~ 0.25 ms) at the server. V1: 11 + 1 + 6 + 0.25 =
  // 18.25 - 1 = 17.25 ms a put, 59.5 s / 17.25 ms = 3,449 inserts (2,899
  // rows/s); V2: 3 + 1 + 6 + 0.25 = 9.25 ms, 6,432 inserts (5,405 rows/s,
  // still below what Kafka gets). The few fetches (each takes the whole
  // backlog) cost a few ms in all: 1% covers them.
  const Lab v1("query_costs_insert_rate.json");
  const Lab v2("query_costs_insert_rate.json", {"connector.client_version=V2"});
  EXPECT_NEAR(v1["inserts"], 59.5 / 0.01725, 0.01 * 59.5 / 0.01725);
  EXPECT_NEAR(v2["inserts"], 59.5 / 0.00925, 0.01 * 59.5 / 0.00925);
  EXPECT_NEAR(v2["inserts"] / v1["inserts"], 17.25 / 9.25, 0.01 * 17.25 / 9.25);
  // Over plain HTTP (ssl=false) V1 saves the TLS round trip and work: 11.25 ms.
  const Lab http("query_costs_insert_rate.json", {"connector.ssl=false", "connector.port=8123"});
  EXPECT_NEAR(http["inserts"], 59.5 / 0.01125, 0.01 * 59.5 / 0.01125);
}

TEST(QueryCostsLab, ACrashWhileTheAfterWriteIsInFlightLeavesItApplied) {
  // 50 records/s, batches of 500: [0, 499] is put at 9.985 s. V1 costs
  // (k ~ 0.125 ms): the read is answered at 9.996 + k; the BEFORE write at
  // 10.007 + 3k; the insert at 10.033 + 5k (5 ms + 500 x 20 us = 15 ms of
  // part writing); the AFTER write leaves at 10.033 + 5k ~ 10.0336 s and is
  // applied in Keeper at 10.043 + 7k ~ 10.0439 s. The worker dies at
  // 10.038 s: the write is on the server, which goes on and applies it.
  // The restarted task reads AFTER_PROCESSING [0, 499] and is given [0, 499]
  // again (nothing was committed: the first commit is due at ~60 s): SAME,
  // already processed, skipped. Nothing is written twice.
  const Lab m("query_costs_crash_while_state_write_in_flight.json");
  EXPECT_EQ(m["classifications.AFTER_PROCESSING.SAME"], 1);
  EXPECT_EQ(m["classifications.BEFORE_PROCESSING.SAME"], 0);
  EXPECT_EQ(m["dedup_hits"], 0);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["pending_records"], 0);
  // Killed at 10.025 s instead, during the insert (sent at ~10.0074 s,
  // committed at ~10.0326 s, the server finishing it): the AFTER write was
  // never sent, the stored state is BEFORE_PROCESSING [0, 499], and the
  // replay inserts the batch again with its token: a dedup hit.
  const Lab during_insert("query_costs_crash_while_state_write_in_flight.json",
                          {R"(faults=[{"kind": "worker_crash", "at": "10025ms", "target": "worker-0"}])"});
  EXPECT_EQ(during_insert["classifications.BEFORE_PROCESSING.SAME"], 1);
  EXPECT_EQ(during_insert["classifications.AFTER_PROCESSING.SAME"], 0);
  EXPECT_EQ(during_insert["dedup_hits"], 1);
  EXPECT_EQ(during_insert["duplicate_rows"], 0);
}

TEST(QueryCostsLab, ASlowKeeperMakesAStateWriteOutliveTheSocketTimeout) {
  // Keeper has no leader from 70 s to 110 s (sessions last 60 s here, so no
  // table goes read-only). Batch 6 is put at 69.985 s; its read is answered
  // at ~69.9961 s; its BEFORE write leaves then and reaches the server's
  // storage work at ~70.0061 s. No leader: the server retries
  // (insert_keeper_*: 100 ms doubling to 10 s, 20 retries) at +0.1, +0.3,
  // +0.7, +1.5, +3.1, +6.3, +12.7, +22.7, +32.7 and +42.7 s, and commits at
  // ~112.706 s. The client gives up at 69.9961 + 0.008 + 30 = ~100.004 s
  // (one failure) and queryV1 sends the write again at once: that execution
  // retries from ~100.014 s and commits at ~112.714 s (its 7th retry), inside
  // its own 30 s, so the put goes on: no redelivery, nothing twice. Both
  // executions apply the same row.
  const Lab m("query_costs_slow_keeper_outlives_socket_timeout.json");
  EXPECT_EQ(m["keeper_map_failures"], 1);
  EXPECT_EQ(m["redeliveries"], 0);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["clickhouse_rows"], 15000);
  EXPECT_EQ(m["pending_records"], 0);
  // A read instead (the election from 69.99 s, before the read reaches the
  // server at 69.995 s): keeper_max_retries 10 with 100 ms doubling to 5 s
  // gives up after 0.1 + 0.2 + 0.4 + 0.8 + 1.6 + 3.2 + 4 x 5 = 26.3 s, inside
  // the client's 30 s: a 999 (one failure), retriable, and the batch is
  // redelivered when the paused poll times out (the next commit, ~120 s).
  const Lab read("query_costs_slow_keeper_outlives_socket_timeout.json",
                 {R"(faults=[{"kind": "keeper_election", "at": "69990ms", "duration": "40s"}])"});
  EXPECT_EQ(read["keeper_map_failures"], 1);
  EXPECT_EQ(read["redeliveries"], 1);
  EXPECT_EQ(read["duplicate_rows"], 0);
  EXPECT_EQ(read["clickhouse_rows"], 15000);
}

}  // namespace
}  // namespace pipesim::pipeline
