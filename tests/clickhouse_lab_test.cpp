// The ClickHouse cases of configs/lab/ (clickhouse_*.json), each with its
// outcome computed by hand from docs/model.md §4.5 (the Keeper ones:
// tests/keeper_lab_test.cpp, on the same timeline),
// ClickHouse's rules (block ids, cleanup thread, Keeper retries) and the sink's
// v1.3.9 logic.
//
// Common timeline: one partition (or four) read by one task each, 50
// records/s with "fixed" arrivals (record k at k/50 s), readable 3 ms after
// its arrival. fetch.min.bytes 521000 (500 records of 1042 bytes) with
// fetch.max.wait.ms 60 s: the broker answers once 500 records are readable,
// so batch j = [500j, 500j+499] is put at 10j + 9.985 s. An insert takes
// 5 ms + 20 us per row (15 ms for 500) at the server before its two Keeper
// requests (allocateBlockNumber, the commit; 0.125 ms each when healthy).
// The first offset commit runs at ~60.001 s, in the iteration after the put
// of [2500, 2999] returned; it stores 3000 and the next one is due 60 s
// later. The faults hit batch 6, [3000, 3499], put at 69.985 s. A put that
// throws a RetriableException is put again (same batch, same token) when
// the paused poll times out, at that next commit time, ~120.001 s.
//
// Catching up after the redelivery: the fetch buffered while the task waited
// holds [3500, 3999]; the next fetch reads what is readable up to
// max.partition.fetch.bytes (1 MiB = 1006 records), [4000, 5005], polled as
// 500 + 500 + 6; then [5006, 5505] and [5506, 6003] (all that is readable at
// ~120.086 s); from 6004 on 500 at a time again (the fetch waits for 500
// more): 17 batches up to 14503, and the last 496 records [14504, 14999]
// come when fetch.max.wait.ms runs out. 6 + 1 + 6 + 18 = 31 batches, and
// the redelivery makes 32 inserts. 5 minutes of workload: 15000 records per
// partition.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "models/pipeline/config.h"
#include "models/pipeline/scenario.h"
#include "tests/lab_run.h"
#include "tests/under_sanitizer.h"

namespace pipesim::pipeline {
namespace {

// insert_timeout at 65 s for 40 s (server_commits 1): the insert of
// [3000, 3499] at 69.985 s hangs until 105 s and then commits; the client
// gave up at 99.985 s (socket timeout 30 s, retriable). The redelivery at
// ~120.001 s carries the same token "events-0-3000-3499".

TEST(ClickHouseLab, ARedeliveryInsideTheWindowIsADedupHit) {
  // The default window (1000 blocks, 7 days) holds the 7 ids written so far.
  const Lab m("clickhouse_redelivery_inside_window.json");
  EXPECT_EQ(m["records_produced"], 15000);
  EXPECT_EQ(m["clickhouse_rows"], 15000);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["insert_answers.client_timeout"], 1);
  EXPECT_EQ(m["redeliveries"], 1);
  EXPECT_EQ(m["dedup_hits"], 1);
  EXPECT_EQ(m["insert_answers.deduplicated"], 1);
  // 31 batches + 1 redelivery reached the server; the dedup hit wrote no part.
  EXPECT_EQ(m["inserts"], 32);
  EXPECT_EQ(m["insert_answers.ok"], 30);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ClickHouseLab, WithAWindowOfZeroTheRedeliveryIsADuplicateWithExactlyOnceOff) {
  // replicated_deduplication_window = 0 disables deduplication: the 500
  // records of the redelivered batch are written twice. The in-memory state
  // says BEFORE_PROCESSING [3000, 3499] for the redelivery: SAME, insert.
  const Lab m("clickhouse_window_zero_at_least_once.json");
  EXPECT_EQ(m["duplicate_rows"], 500);
  EXPECT_EQ(m["duplicate_rows_by_entry.insert_timeout_redelivery"], 500);
  EXPECT_EQ(m["classifications.BEFORE_PROCESSING.SAME"], 1);
  EXPECT_EQ(m["dedup_hits"], 0);
  // ReplacingMergeTree partitioned by event day: FINAL folds both copies.
  EXPECT_EQ(m["final_duplicate_rows"], 0);
}

TEST(ClickHouseLab, WithoutInsertDeduplicateTheRedeliveryIsWrittenAgain) {
  // The inside-the-window lab with insert_deduplicate=0 (ClickHouse 25.3: no
  // block id is written or checked): the redelivered [3000, 3499] is a new
  // part, 500 rows twice, as with a window of 0.
  const Lab m("clickhouse_redelivery_inside_window.json", {"clickhouse.insert_deduplicate=false"});
  EXPECT_EQ(m["redeliveries"], 1);
  EXPECT_EQ(m["dedup_hits"], 0);
  EXPECT_EQ(m["duplicate_rows"], 500);
  EXPECT_EQ(m["duplicate_rows_by_entry.insert_timeout_redelivery"], 500);
}

TEST(ClickHouseLab, ASocketTimeoutLongerThanTheHangWaitsForTheAnswer) {
  // The window-zero lab with jdbcConnectionProperties
  // "?socket_timeout=60000" (and timeoutSeconds 10, the ping's only): the
  // insert sent at 69.985 s is answered when the hang ends at 105 s, 35 s
  // later, inside the client's 60 s. No client timeout, no redelivery, no
  // duplicate (with the default 30 s the same run writes 500 twice).
  const Lab m("clickhouse_socket_timeout_outlasts_the_hang.json");
  EXPECT_EQ(m["insert_answers.client_timeout"], 0);
  EXPECT_EQ(m["redeliveries"], 0);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["clickhouse_rows"], 15000);
  // The slow insert is the p99 of 31: 105 s - 69.985 s = 35.015 s, past the
  // default 30 s (the histogram's buckets are a few per cent wide).
  EXPECT_GT(m["insert_latency_p99_ms"], 30000);
  EXPECT_LT(m["insert_latency_p99_ms"], 36000);
  EXPECT_EQ(m["pending_records"], 0);
  const Lab default_timeout("clickhouse_socket_timeout_outlasts_the_hang.json",
                            {"connector.jdbcConnectionProperties=compress=0"});
  EXPECT_EQ(default_timeout["insert_answers.client_timeout"], 1);
  EXPECT_EQ(default_timeout["duplicate_rows"], 500);
}

TEST(ClickHouseLab, WithAWindowOfZeroTheRedeliveryIsADuplicateWithExactlyOnceOnToo) {
  // KeeperMap says BEFORE_PROCESSING [3000, 3499] (written before the
  // insert): the redelivery is SAME and re-inserts with the same token,
  // relying on block dedup, which is off.
  const Lab m("clickhouse_window_zero_exactly_once.json");
  EXPECT_EQ(m["duplicate_rows"], 500);
  EXPECT_EQ(m["duplicate_rows_by_entry.insert_timeout_redelivery"], 500);
  EXPECT_EQ(m["classifications.BEFORE_PROCESSING.SAME"], 1);
  // KeeperMap queries: 3 per batch (read, BEFORE, AFTER) for the 30 batches
  // that went through at once; the timed-out one made read + BEFORE and its
  // redelivery read + AFTER: 90 + 2 + 2.
  EXPECT_EQ(m["keeper_map_queries"], 94);
}

// Four partitions, four tasks: the four inserts of batch 6 hang in the same
// stall, commit at 105 s in some order and are redelivered at ~120.001 s.
// Window of 3 blocks for the whole table.

TEST(ClickHouseLab, OtherPartitionsInsertsPushAnIdOutOfTheWindowBeforeItsRedelivery) {
  // The cleanup threads run every 10 s exactly (period 10..10 s, no random
  // add): the run at 110 s (no other insert since the four committed: every
  // task waits for its redelivery) keeps the newest 3 ids, so the first of
  // the four stalled inserts to commit loses its id. Its redelivery writes
  // its 500 records again; the three others are hits.
  const Lab m("clickhouse_window_pushed_out_by_other_partitions.json");
  EXPECT_EQ(m["records_produced"], 60000);
  EXPECT_EQ(m["insert_answers.client_timeout"], 4);
  EXPECT_EQ(m["redeliveries"], 4);
  EXPECT_EQ(m["dedup_hits"], 3);
  EXPECT_EQ(m["duplicate_rows"], 500);
  EXPECT_EQ(m["duplicate_rows_by_entry.insert_timeout_redelivery"], 500);
}

TEST(ClickHouseLab, IdsOutliveTheWindowUntilACleanupThreadRuns) {
  // The same with cleanup threads that run at start-up and then a day later:
  // 4 x 31 ids for a window of 3, yet every redelivery is a hit.
  const Lab m("clickhouse_window_outlived_until_cleanup.json");
  EXPECT_EQ(m["dedup_hits"], 4);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["block_ids_removed"], 0);
}

TEST(ClickHouseLab, ACrashedReplicaRefusesOrHangs) {
  // One replica, down from 65 s to 95 s. A dead server process refuses the
  // insert at 69.985 s (210, retriable); a dead host never answers, so the
  // client's new connection (client_version V1) fails at connect_timeout, at
  // 74.985 s (210 too), and a kept connection (V2) waits for the socket
  // timeout, 99.985 s. Each way the batch is redelivered at ~120.001 s to a
  // live replica and written once.
  const Lab refused("clickhouse_replica_crash_refused.json");
  EXPECT_EQ(refused["insert_answers.network_error_210"], 1);
  EXPECT_EQ(refused["insert_answers.client_timeout"], 0);
  EXPECT_EQ(refused["redeliveries"], 1);
  EXPECT_EQ(refused["duplicate_rows"], 0);
  const Lab hang("clickhouse_replica_crash_hang.json");
  EXPECT_EQ(hang["insert_answers.client_timeout"], 0);
  EXPECT_EQ(hang["insert_answers.network_error_210"], 1);
  EXPECT_EQ(hang["redeliveries"], 1);
  EXPECT_EQ(hang["duplicate_rows"], 0);
  EXPECT_EQ(hang["clickhouse_rows"], 15000);
  const Lab kept("clickhouse_replica_crash_hang.json", {"connector.client_version=V2"});
  EXPECT_EQ(kept["insert_answers.client_timeout"], 1);
  EXPECT_EQ(kept["insert_answers.network_error_210"], 0);
  EXPECT_EQ(kept["redeliveries"], 1);
  EXPECT_EQ(kept["clickhouse_rows"], 15000);
}

TEST(ClickHouseFaults, ConservationHoldsUnderEveryClickHouseAndKeeperFault) {
  // Randomized: elections (some longer than the session timeout), crashes
  // (refused and hanging), session losses, backlogs past the operation
  // timeout, stalls that commit half the time, with a quorum, a small
  // window and a busy Keeper. run_scenario throws if the ledger's
  // conservation or any model invariant breaks; by hand: every produced
  // record is in ClickHouse (once or more), lost, or pending.
  nlohmann::json raw = nlohmann::json::parse(R"({
    "workload": {"records_per_day": 8640000, "profile": "constant"},
    "kafka": {"num.partitions": 4},
    "connect": {"tasks.max": 4},
    "clickhouse": {"insert_quorum": 2, "replicated_deduplication_window": 20,
                   "cleanup_delay_period": 5, "max_cleanup_delay_period": 20},
    "keeper": {"capacity_ops_per_s": 2000, "background_ops_per_s": 1500},
    "faults": [
      {"kind": "keeper_election", "rate_per_day": 96, "duration_mean": "20s"},
      {"kind": "replica_crash", "rate_per_day": 48, "duration_mean": "60s"},
      {"kind": "replica_crash", "rate_per_day": 24, "duration_mean": "60s", "hang": true},
      {"kind": "keeper_session_loss", "rate_per_day": 48, "duration_mean": "40s"},
      {"kind": "keeper_backlog", "rate_per_day": 24, "duration_mean": "2m", "capacity_factor": 0.5},
      {"kind": "insert_timeout", "rate_per_day": 48, "duration": "40s", "server_commits": 0.5},
      {"kind": "worker_crash", "rate_per_day": 24}
    ],
    "run": {"duration": "1h", "drain": "30m"}
  })");
  // 10 seeds each way; 2 under the sanitizers (a run there is ~10x slower).
  const std::uint64_t seeds = testing_support::kUnderSanitizer ? 2 : 10;
  double fired = 0, answers_not_ok = 0;
  for (const bool exactly_once : {false, true}) {
    raw["connector"]["exactlyOnce"] = exactly_once;
    const Config config = load_config(raw);
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
      const sim::Metrics metrics = run_scenario(config, seed);
      const auto get = [&metrics](const std::string& name) {
        for (const auto& m : metrics) {
          if (m.name == name) return m.value;
        }
        return -1.0;
      };
      EXPECT_EQ(get("clickhouse_rows") - get("duplicate_rows") + get("lost_records") +
                    get("pending_records"),
                get("records_produced"))
          << "reproduce: seed " << seed << ", exactlyOnce " << exactly_once;
      fired += get("faults_fired.keeper_election") + get("faults_fired.keeper_session_loss") +
               get("faults_fired.replica_crash");
      answers_not_ok += get("insert_answers.client_timeout") +
                        get("insert_answers.network_error_210") +
                        get("insert_answers.table_is_read_only_242");
    }
  }
  const double runs = 2.0 * static_cast<double>(seeds);
  EXPECT_GT(fired, 5 * runs);          // ~6 per run: the faults really fired
  EXPECT_GT(answers_not_ok, 1 * runs);  // and the sink saw their errors
}

TEST(ClickHouseLab, AQuorumWaitTimesOutWith319AndTheRedeliveryIsAHit) {
  // Two replicas, insert_quorum 2, insert_quorum_timeout 5 s; replica-1
  // crashes at 65 s until 125 s (its is_active node lives on for the 30 s
  // session timeout, so the quorum precondition still passes). The insert
  // of [3000, 3499] at 69.985 s is drawn to replica-0: written and committed
  // by ~70.0 s, it waits for replica-1 to fetch the part, which cannot
  // happen before 125 s; the timer runs out at ~75.0 s: 319, the part stays.
  // The sink redelivers at ~120.02 s; that draw picks replica-1, still down:
  // 210. At ~180.02 s the block id is found: a dedup hit. Every record once.
  const Lab m("clickhouse_quorum_timeout.json");
  EXPECT_EQ(m["insert_answers.unknown_status_of_insert_319"], 1);
  EXPECT_EQ(m["insert_answers.network_error_210"], 1);
  EXPECT_EQ(m["insert_answers.deduplicated"], 1);
  EXPECT_EQ(m["dedup_hits"], 1);
  EXPECT_EQ(m["redeliveries"], 2);
  EXPECT_EQ(m["insert_answers.client_timeout"], 0);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["clickhouse_rows"], 15000);
  // With the default 600 s the wait outlasts the client's 30 s socket
  // timeout: a client timeout at ~99.985 s instead of the 319, and the same
  // 210 and dedup hit after it (the quorum is reached when replica-1 is
  // back at 125 s and fetches the part; nobody hears it).
  const Lab patient("clickhouse_quorum_timeout.json", {"clickhouse.insert_quorum_timeout=600000"});
  EXPECT_EQ(patient["insert_answers.unknown_status_of_insert_319"], 0);
  EXPECT_EQ(patient["insert_answers.client_timeout"], 1);
  EXPECT_EQ(patient["insert_answers.network_error_210"], 1);
  EXPECT_EQ(patient["dedup_hits"], 1);
  EXPECT_EQ(patient["duplicate_rows"], 0);
  EXPECT_EQ(patient["clickhouse_rows"], 15000);
}

TEST(ClickHouseLab, TooManyPartsDelaysThenRefusesWith252AndNothingIsLostOrDoubled) {
  // One task inserts 500 records every 10 s; the only merge slot is taken
  // by the first merge (parts 1-5) for an hour, so every committed insert
  // adds an active part. parts_to_delay_insert 20, parts_to_throw_insert 40:
  // insert i meets i - 1 parts, so inserts 21..40 sleep (1 s x (i - 20) / 20,
  // at least 10 ms: 20 delayed, the 40th by 1 s) and insert 41 is refused
  // with 252, retriable: the sink puts the same batch again, refused again
  // until the run ends. 40 parts of 500 rows; the rest stays in Kafka.
  const Lab m("clickhouse_too_many_parts.json");
  EXPECT_EQ(m["active_parts_peak"], 40);
  EXPECT_EQ(m["inserts_delayed"], 20);
  EXPECT_EQ(m["insert_answers.ok"], 40);
  EXPECT_GE(m["too_many_parts_errors"], 1);
  EXPECT_EQ(m["insert_answers.too_many_parts_252"], m["too_many_parts_errors"]);
  // Every refusal but the last (after the end) is followed by a redelivery.
  EXPECT_EQ(m["redeliveries"], m["too_many_parts_errors"] - 1);
  EXPECT_EQ(m["merges"], 1);
  EXPECT_EQ(m["clickhouse_rows"], 40 * 500);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], m["records_produced"] - 40 * 500);
  // With the defaults (1000 / 3000, 32 slots) the same run never comes near.
  const Lab defaults("clickhouse_too_many_parts.json",
                     {"clickhouse.parts_to_delay_insert=1000", "clickhouse.parts_to_throw_insert=3000",
                      "clickhouse.background_pool_size=16",
                      "clickhouse.background_merges_mutations_concurrency_ratio=2",
                      "clickhouse.merge_base_time=20ms"});
  EXPECT_EQ(defaults["inserts_delayed"], 0);
  EXPECT_EQ(defaults["too_many_parts_errors"], 0);
  EXPECT_LE(defaults["active_parts_peak"], 9);  // at most 4 waiting + 5 merging per generation, 1-2 generations
  EXPECT_EQ(defaults["pending_records"], 0);
}

}  // namespace
}  // namespace pipesim::pipeline
