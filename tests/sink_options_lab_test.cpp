// Labs of the sink properties that change what a put inserts and what a
// commit covers (ClickHouseSinkTask / ProxySinkTask v1.3.9): bufferCount with
// bufferFlushTime, ignorePartitionsWhenBatching, reportInsertedOffsets. Each
// outcome is computed by hand from the real code, in the comments.
#include <gtest/gtest.h>

#include "models/sink/put_buffer.h"
#include "tests/lab_run.h"

namespace pipesim::pipeline {
namespace {

using sink::OffsetRange;
using sink::PartitionBatch;

TEST(PutBuffer, AppendsWhatItIsGivenAndHoldsARePutBatchTwice) {
  sink::PutBuffer b;
  b.reset(sim::Time::seconds(10));
  b.add({PartitionBatch{0, OffsetRange{0, 9}, ledger::InsertTag::NORMAL, {}},
         PartitionBatch{1, OffsetRange{0, 4}, ledger::InsertTag::NORMAL, {}}});
  EXPECT_EQ(b.size(), 15);
  EXPECT_FALSE(b.flush_due(16, sim::Time{}, sim::Time::seconds(1000)));  // by size only
  EXPECT_TRUE(b.flush_due(15, sim::Time{}, sim::Time::seconds(10)));
  EXPECT_FALSE(b.flush_due(100, sim::Time::seconds(5), sim::Time::seconds(14)));
  EXPECT_TRUE(b.flush_due(100, sim::Time::seconds(5), sim::Time::seconds(15)));
  // The same p1 batch again (a redelivery), then new p0 records.
  b.add({PartitionBatch{1, OffsetRange{0, 4}, ledger::InsertTag::REDELIVERY, {}}});
  b.add({PartitionBatch{0, OffsetRange{10, 12}, ledger::InsertTag::NORMAL, {}}});
  EXPECT_EQ(b.size(), 10 + 5 + 5 + 3);
  ASSERT_EQ(b.contents().size(), 2u);
  EXPECT_EQ(b.contents()[0].offsets, (OffsetRange{0, 12}));
  EXPECT_TRUE(b.contents()[0].again.empty());
  EXPECT_EQ(b.contents()[1].offsets, (OffsetRange{0, 4}));
  ASSERT_EQ(b.contents()[1].again.size(), 1u);
  EXPECT_EQ(b.contents()[1].again[0], (OffsetRange{0, 4}));
  EXPECT_EQ(b.contents()[1].tag, ledger::InsertTag::REDELIVERY);
  EXPECT_EQ(b.contents()[1].records(), 10);
  // Flushed: preCommit may report one past each partition's last record.
  EXPECT_EQ(b.flushed_offset(0), -1);
  b.flushed(sim::Time::seconds(20));
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.flushed_offset(0), 13);
  EXPECT_EQ(b.flushed_offset(1), 5);
  EXPECT_FALSE(b.flush_due(1, sim::Time::seconds(5), sim::Time::seconds(30)));  // empty
  b.add({PartitionBatch{0, OffsetRange{13, 13}, ledger::InsertTag::NORMAL, {}}});
  b.close();
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.flushed_offset(0), -1);
}

// buffer_count_*: 1 partition at 50 records/s ("fixed": record k arrives at
// k x 20 ms, readable 3 ms later), default fetch settings, so every put
// carries the one record that just arrived. bufferCount 1000: the put of
// record 1000j - 1 (at ~20j s) flushes [1000(j-1), 1000j - 1]. Commits at
// 60 s intervals from the start. An insert_timeout fault holds every insert
// from 65 s to 165 s; the client gives up after the 30 s socket timeout.
//
// The flush at 79.985 s ([3000, 3999], put of record 3999) times out at
// 109.985 s: a RetriableException. WorkerSinkTask puts the same batch
// (record 3999) again at the next commit time, 120.01 s; buffer.addAll
// appends it a second time (flushBuffer clears the buffer only once
// putDirect returned), so the buffer holds 1001 records and flushes again:
// timed out at 150.01 s (the fault lasts to 165 s). The third put, at the
// commit time after that (210.01 s), holds 1002 records and succeeds.
TEST(SinkOptionsLab, BufferCountFailedFlushHoldsTheRedeliveredBatchTwice) {
  // server_commits 0: the two timed-out inserts wrote nothing; the third
  // writes [3000, 3999] and record 3999 twice more.
  const Lab m("buffer_count_failed_flush_holds_a_batch_twice.json");
  EXPECT_EQ(m["redeliveries"], 2);
  EXPECT_EQ(m["duplicate_rows"], 2);
  EXPECT_EQ(m["duplicate_rows_by_entry.insert_timeout_redelivery"], 2);
  EXPECT_EQ(m["clickhouse_rows"], 15000 + 2);
  // 15,000 records = 15 flushes of 1000 by size; the last one (records
  // 14031..14999, the buffer's tail once the workload stops) by time.
  EXPECT_EQ(m["pending_records"], 0);
  // Without buffering each put inserts its one record: the failed put's
  // record is deduplicated by its token, no copy.
  const Lab plain("buffer_count_failed_flush_holds_a_batch_twice.json", {"connector.bufferCount=0"});
  EXPECT_EQ(plain["duplicate_rows"], 0);
}

TEST(SinkOptionsLab, BufferWithoutFlushTimeKeepsItsTailUntilMoreRecordsCome) {
  // bufferFlushTime 0: only the size flushes. After the workload stops at
  // 300 s, the buffer holds 14031..14999 (969 records, < 1000) for ever,
  // and preCommit never reports them: they stay in Kafka, uncommitted.
  const Lab m("buffer_count_failed_flush_holds_a_batch_twice.json", {"connector.bufferFlushTime=0"});
  EXPECT_EQ(m["pending_records"], 15000 - 14031);
  EXPECT_EQ(m["duplicate_rows"], 2);
}

TEST(SinkOptionsLab, TopicWideInsertHasNoTokenSoEveryAttemptIsWritten) {
  // As above with ignorePartitionsWhenBatching (exactlyOnce off) and
  // server_commits 1: the two timed-out inserts are committed by the server
  // when the fault ends. Processing.doLogic inserts without state and with
  // QueryIdentifier(topic, queryId), whose deduplication token is null:
  // ClickHouse deduplicates by the data's hash, and the three attempts hold
  // different data (1000, 1001, 1002 records). All three are written:
  // [3000, 3999] three times, record 3999 twice more: 2000 + 3 duplicates.
  const Lab m("buffer_count_topic_wide_insert_has_no_token.json");
  EXPECT_EQ(m["redeliveries"], 2);
  EXPECT_EQ(m["duplicate_rows"], 2 * 1000 + 1 + 2);
  EXPECT_EQ(m["dedup_hits"], 0);
  EXPECT_EQ(m["pending_records"], 0);
  // Per-partition inserts carry the token [3000, 3999] each time: the first
  // attempt is written at 165 s, the other two are deduplicated whole
  // (their extra copies of record 3999 with them).
  const Lab tokens("buffer_count_topic_wide_insert_has_no_token.json",
                   {"connector.ignorePartitionsWhenBatching=false"});
  EXPECT_EQ(tokens["duplicate_rows"], 0);
  EXPECT_EQ(tokens["dedup_hits"], 2);
}

TEST(SinkOptionsLab, TopicWideRetryOfTheSameBatchIsDeduplicatedByItsData) {
  // Without the buffer the redelivered put holds the same one record as the
  // timed-out one: the same data, the same hash, deduplicated.
  const Lab m("buffer_count_topic_wide_insert_has_no_token.json", {"connector.bufferCount=0"});
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_GE(m["dedup_hits"], 1);
}

// (A cleanup_delay_period of a day keeps the cleanup thread out of this lab: its Keeper bursts
// would move the put times the hand calculation follows.)
TEST(SinkOptionsLab, ReportInsertedOffsetsMakesAFailingTaskCommitNothing) {
  // task_failure_commits_returned_puts with reportInsertedOffsets=true. The
  // put that fails on p1 (AFTER_PROCESSING State MISMATCH) has inserted p0
  // [5999, 7004] first, so lastInsertedOffsets holds p0 -> 7005, beyond the
  // framework's current offset of p0 (5999: no put has returned).
  // commitOffsets ignores it ("not yet consumed") and p1 has no inserted
  // offset: the closing commit keeps 5999 for both, and every restart
  // replays the same batches. The first rewrite after delete_state_row
  // writes p0 [5999, 7004] again under new tokens (1006 duplicates); later
  // rewrites repeat those tokens (dedup). p0 and p1 stay at 5999 to the end:
  // of 2 x 360,000 records, those past the ones written before the crash
  // (p0 up to 9049, p1 up to 9048) never reach ClickHouse.
  const Lab m("report_inserted_offsets_failing_task_commits_nothing.json");
  EXPECT_EQ(m["duplicate_rows"], 7004 - 5999 + 1);
  EXPECT_EQ(m["pending_records"], (360000 - 9050) + (360000 - 9049));
  EXPECT_GT(m["task_failures"], 4);  // the default (false) recovers after 4
  const Lab current("report_inserted_offsets_failing_task_commits_nothing.json",
                    {"connector.reportInsertedOffsets=false"});
  EXPECT_EQ(current["task_failures"], 4);
  EXPECT_EQ(current["pending_records"], 0);
}

// task_fails_at_start_while_clickhouse_is_down: 1 partition at 50 records/s,
// one replica, down (connections refused) from 61 s for 4 min; the worker
// is killed at 90 s and back at 120 s (worker_restart_delay 30 s). The new
// task instance's SinkTask.start pings the only server: three refused
// attempts (retryCount 3, 1 ms each), so ClickHouseWriter.start returns
// false and ProxySinkTask.start throws "Connection to ClickHouse is not
// active.": FAILED at 120.003 s, before its consumer ever joined. The
// operator restarts it 5 min later (420.003 s); the server is back since
// 301 s. Downtime: 30 s down + 300 s FAILED. The replay from the last commit
// (3000, at 60 s) re-inserts 3000..3049, put in the second before the crash.
TEST(SinkStartLab, TaskFailsAtStartWhileClickHouseIsDown) {
  const Lab m("task_fails_at_start_while_clickhouse_is_down.json");
  EXPECT_EQ(m["task_failures"], 1);
  EXPECT_NEAR(m["task_downtime_s"], 30 + 300, 1e-6);
  EXPECT_EQ(m["duplicate_rows"], 50);
  EXPECT_EQ(m["pending_records"], 0);
  // A dead host instead (the client waits): three pings of timeoutSeconds
  // (30 s) each, FAILED at 210 s; restarted at 510 s. Downtime the same.
  nlohmann::json raw = lab_json("task_fails_at_start_while_clickhouse_is_down.json");
  raw["faults"][0]["hang"] = true;
  const Lab hang(raw);
  EXPECT_EQ(hang["task_failures"], 1);
  EXPECT_NEAR(hang["task_downtime_s"], 30 + 300, 1e-6);
}

TEST(SinkStartLab, ATaskStartedWithTheServerUpDoesNotCheckAgain) {
  // The replica comes back before the worker: the start queries answer and
  // the task runs at once; its inserts would have failed retriably anyway.
  nlohmann::json raw = lab_json("task_fails_at_start_while_clickhouse_is_down.json");
  raw["faults"][0]["duration"] = "50s";
  const Lab m(raw);
  EXPECT_EQ(m["task_failures"], 0);
  EXPECT_NEAR(m["task_downtime_s"], 30, 1e-6);
}

}  // namespace
}  // namespace pipesim::pipeline
