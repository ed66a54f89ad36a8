// The Connect and sink cases of configs/lab/, each with its outcome computed
// by hand from SPEC §4.3/§4.4 and the real v1.3.9 decision logic.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "models/pipeline/config.h"
#include "models/pipeline/scenario.h"
#include "tests/lab_run.h"

namespace pipesim::pipeline {
namespace {

// 1 record/s in 5 s quanta: [0,4] at 0 s and [5,9] at 5 s are inserted; no
// commit yet (the first is due at 60 s). The worker dies at 7 s; [10,14]
// arrives at 10 s while it is down (the workload stops at 11 s). After the
// eviction (52 s) the replay from offset 0 is one batch [0,14].

TEST(ConnectLab, CrashAfterInsertWithExactlyOnceCutsTheOverlap) {
  // Stored AFTER_PROCESSING [5,9]; [0,14] is OVER_LAPPING: only [10,14] is inserted.
  const Lab m("crash_after_insert_exactly_once.json");
  EXPECT_EQ(m["records_produced"], 15);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["classifications.AFTER_PROCESSING.OVER_LAPPING"], 1);
  EXPECT_EQ(m["clickhouse_rows"], 15);
}

TEST(ConnectLab, CrashAfterInsertWithExactlyOnceOffWritesTheReplayTwice) {
  // The in-memory state died with the task: [0,14] is inserted whole, so
  // offsets 0..9 are in ClickHouse twice.
  const Lab m("crash_after_insert_at_least_once.json");
  EXPECT_EQ(m["duplicate_rows"], 10);
  EXPECT_EQ(m["duplicate_rows_by_entry.task_restart_replay"], 10);
}

// 100 records/s, the worker dies at 90.5 s: 9100 records inserted, commit at
// offset 6000, stored AFTER_PROCESSING [9000, 9099]; replay in batches of 500.

TEST(ConnectLab, MismatchWithToleranceAllAndADlqSendsRecordsAlreadyInClickHouse) {
  // [6000..6499] .. [8500..8999]: six State MISMATCH throws, swallowed; the
  // 3000 records go to the DLQ after each put, and all are in ClickHouse.
  const Lab m("crash_exactly_once_dlq.json");
  EXPECT_EQ(m["state_mismatch_throws"], 6);
  EXPECT_EQ(m["task_failures"], 0);
  EXPECT_EQ(m["dlq_records_in_clickhouse"], 3000);
  EXPECT_EQ(m["dlq_records_missing"], 0);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ConnectLab, CrashDuringAnInsertLeavesBeforeProcessingAndErrorStateThatToleranceDoesNotCover) {
  // Killed at 90.012 s while tick 90's insert is in flight: stored
  // BEFORE_PROCESSING [9000, 9099]; the server still commits it. The replay
  // [6000..6499] starts below the stored min and ends below the stored max:
  // ERROR (tolerateStateMismatch=true only covers PREVIOUS). The task fails
  // at ~136.0 s, ~1936.5 s and ~3737.0 s (operator restarts after 30 min).
  const Lab m("crash_during_insert_error_state.json");
  EXPECT_EQ(m["classifications.BEFORE_PROCESSING.ERROR"], 3);
  EXPECT_EQ(m["error_state_throws"], 3);
  EXPECT_EQ(m["task_failures"], 3);
  EXPECT_EQ(m["clickhouse_rows"], 9100);
  EXPECT_EQ(m["duplicate_rows"], 0);
}

// 50 records/s in 10 s quanta (batches of 500). At 60 s the commit stores
// offset 3000 and [3000,3499] is inserted into a stalled server that will
// not commit it (insert_timeout, server_commits 0): stored BEFORE_PROCESSING
// [3000,3499]. At 75 s a config change (max.poll.records 200) restarts the
// task; its put outlives task.shutdown.graceful.timeout.ms, so it is
// abandoned at 80 s without a commit. The new instance reads [3000,3199] and
// [3200,3399]: State CONTAINS, swallowed (errors.tolerance=all) and sent to
// the reporter; [3400,3599] overlaps: [3400,3499] go to the reporter as
// DuplicateException, [3500,3599] is inserted (once the stall is over, by
// the redelivery at 140 s: SAME). [3000,3499] never reaches ClickHouse.

TEST(ConnectLab, UnknownInsertThenSmallerPollsEndsOnlyInTheDlq) {
  const Lab m("unknown_insert_then_smaller_polls_with_dlq.json");
  EXPECT_EQ(m["state_contains_throws"], 2);
  EXPECT_EQ(m["classifications.BEFORE_PROCESSING.CONTAINS"], 2);
  EXPECT_EQ(m["classifications.BEFORE_PROCESSING.OVER_LAPPING"], 1);
  EXPECT_EQ(m["classifications.BEFORE_PROCESSING.SAME"], 1);
  EXPECT_EQ(m["dlq_records_missing"], 500);
  EXPECT_EQ(m["lost_records_by_cause.dlq_only"], 500);
  EXPECT_EQ(m["lost_records"], 500);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ConnectLab, UnknownInsertThenSmallerPollsWithoutDlqIsLostWithOffsetsCommitted) {
  const Lab m("unknown_insert_then_smaller_polls_without_dlq.json");
  EXPECT_EQ(m["lost_records_by_cause.dropped_no_dlq"], 500);
  EXPECT_EQ(m["dlq_records_missing"], 0);
  EXPECT_EQ(m["pending_records"], 0);  // the offsets moved on
}

// The runbooks on the State MISMATCH lab (first failure at ~136.0 s, the
// operator's restart after 30 min fails again at ~1936.5 s).

TEST(ConnectLab, RunbookDeleteStateRowReinsertsTheReplayAsStateReset) {
  // 5 min after the second failure the partition's state row is deleted: the
  // replay from offset 6000 is inserted again, so 6000..9099 are duplicated.
  const Lab m("runbook_delete_state_row.json");
  EXPECT_EQ(m["state_mismatch_throws"], 2);
  EXPECT_EQ(m["task_failures"], 2);
  EXPECT_EQ(m["duplicate_rows"], 3100);
  EXPECT_EQ(m["duplicate_rows_by_entry.state_reset"], 3100);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ConnectLab, RunbookTolerateThenRevertSkipsTheReplayWithoutDuplicates) {
  // With tolerateStateMismatch=true the six PREVIOUS batches are skipped,
  // [9000..9499] inserts [9100..9499]; once caught up the setting is reverted.
  const Lab m("runbook_tolerate_then_revert.json");
  EXPECT_EQ(m["state_mismatch_throws"], 2);
  EXPECT_EQ(m["classifications.AFTER_PROCESSING.PREVIOUS"], 2 + 6);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ConnectLab, StateWipeWhileTheTaskIsDownMakesTheReplayStateResetCopies) {
  // Killed at 90.5 s (committed 6000, inserted 9100); at 100 s the KeeperMap
  // table is recreated empty. The replay from 6000 finds NONE and inserts
  // again: 6000..9099 are duplicated, attributed to state_reset.
  const Lab m("state_wipe_then_replay.json");
  EXPECT_EQ(m["duplicate_rows"], 3100);
  EXPECT_EQ(m["duplicate_rows_by_entry.state_reset"], 3100);
  EXPECT_EQ(m["state_mismatch_throws"], 0);
}

// Two workers, two tasks, two partitions at 100 records/s each; task-0 (on
// worker-0) owns p0, task-1 (worker-1) owns p1. worker-0 dies at 90.5 s and
// stays away 10 min. At 135.5 s its consumer's session expires: task-1
// commits p1, and from 136.0 s owns p0 and p1; it re-reads p0 from the last
// commit (6000) although 9100 records of p0 were inserted. At 400.5 s (10 s
// worker session + 300 s scheduled rebalance delay) task-0 starts on
// worker-1 and gets p0 back from task-1's commit.

TEST(ConnectLab, SurvivingTaskTakesOverAndReplaysWithExactlyOnceOff) {
  const Lab m("two_workers_takeover_at_least_once.json");
  EXPECT_EQ(m["records_produced"], 2 * 100 * 420);
  EXPECT_EQ(m["duplicate_rows"], 3100);
  EXPECT_EQ(m["duplicate_rows_by_entry.task_restart_replay"], 3100);
  EXPECT_EQ(m["task_downtime_s"], 310);  // task-0 down from 90.5 s to 400.5 s
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ConnectLab, StateMismatchCascadesToTheSurvivingTaskWithExactlyOnce) {
  // task-1 meets p0's stored AFTER_PROCESSING [9000, 9099] with [6000..6499]:
  // State MISMATCH at 136.0 s; FAILED, it leaves the group and nobody reads
  // anything. task-0 starts at 400.5 s, gets both partitions, fails the same
  // way at ~401.0 s. ClickHouse holds p0's 9100 and p1's ticks 0..135 (13600).
  const Lab m("two_workers_takeover_exactly_once.json");
  EXPECT_EQ(m["state_mismatch_throws"], 2);
  EXPECT_EQ(m["task_failures"], 2);
  EXPECT_EQ(m["clickhouse_rows"], 9100 + 13600);
  EXPECT_EQ(m["duplicate_rows"], 0);
  // task-0 down 90.5-400.5 s, task-1 FAILED 136.0-420 s, task-0 FAILED ~401.0-420 s.
  EXPECT_NEAR(m["task_downtime_s"], 310 + 284 + 19, 0.1);
}

// A put() longer than max.poll.interval.ms (KIP-62). 1 record/s in 5 s
// quanta, every insert takes 2 s, max.poll.interval.ms = 1.5 s, one task.
// The task joins at 0.5 s and puts [0,4] (state NONE: inserted); at 2.0 s
// its poll timeout expires and its consumer leaves the group (nothing is
// committed: the first commit would be due at 60 s). The put returns at
// ~2.5 s, the consumer joins again and reads p0 from the committed offset 0:
// [0,4] is SAME as the in-memory state AFTER_PROCESSING [0,4] (the task
// instance lives on), skipped. [5,9] at 5 s is NEW, inserted, and its put
// outlives the interval too; the re-read [0,9] is SAME as [5,9]: skipped.
// So 2 poll timeouts, 2 inserts, 2 SAME, 1 NEW, no duplicate.
TEST(ConnectLab, PutOutlivingMaxPollIntervalLeavesTheGroupAndRereadsFromTheCommit) {
  const Lab m("put_outlives_max_poll_interval.json");
  EXPECT_EQ(m["poll_timeouts"], 2);
  EXPECT_EQ(m["inserts"], 2);
  EXPECT_EQ(m["classifications.AFTER_PROCESSING.SAME"], 2);
  EXPECT_EQ(m["classifications.AFTER_PROCESSING.NEW"], 1);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["clickhouse_rows"], 10);
  EXPECT_EQ(m["pending_records"], 0);
}

// The same pipeline with the default max.poll.interval.ms (5 min): no put
// comes near it, nobody leaves, nothing is re-read.
TEST(ConnectLab, PutWithinMaxPollIntervalKeepsTheMember) {
  const Lab m("put_outlives_max_poll_interval.json", {"connect.max.poll.interval.ms=300000"});
  EXPECT_EQ(m["poll_timeouts"], 0);
  EXPECT_EQ(m["inserts"], 2);
  EXPECT_EQ(m["classifications.AFTER_PROCESSING.SAME"], 0);
  EXPECT_EQ(m["classifications.AFTER_PROCESSING.NEW"], 1);
  EXPECT_EQ(m["clickhouse_rows"], 10);
}

// Another task takes over after a poll timeout. 3 partitions over 2 tasks
// (RangeAssignor: task-0 reads p0 and p1, task-1 reads p2); every insert
// takes 2 s and a put() inserts its partitions one after the other, so
// task-0's first put (p0 then p1, from 0.5 s) lasts ~4 s and its poll
// timeout (3 s) expires at 3.5 s. Nothing of p0/p1 was committed (the first
// commit is due at 60 s), so task-1 reads them from offset 0; its in-memory
// state has no record for them and the dedup window is 0, so whatever
// task-0 had inserted is inserted again. task-1's put now covers three
// partitions (~6 s) and outlives the interval in turn: the two tasks take
// the partitions from each other until the records stop (a rebalance storm).
// Expectations by argument, not by count: at least two poll timeouts;
// duplicates, all of them replays; nothing lost.
TEST(ConnectLab, PutOutlivingMaxPollIntervalLetsAnotherTaskReplayWithoutDedup) {
  const Lab m("put_outlives_max_poll_interval_takeover.json");
  EXPECT_GE(m["poll_timeouts"], 2);
  EXPECT_GT(m["duplicate_rows"], 0);
  EXPECT_EQ(m["duplicate_rows_by_entry.task_restart_replay"], m["duplicate_rows"]);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
  EXPECT_EQ(m["clickhouse_rows"], m["records_produced"] + m["duplicate_rows"]);
  // With the default interval (5 min) nobody leaves and, without faults,
  // nothing is read twice.
  const Lab calm("put_outlives_max_poll_interval_takeover.json",
                 {"connect.max.poll.interval.ms=300000"});
  EXPECT_EQ(calm["poll_timeouts"], 0);
  EXPECT_EQ(calm["duplicate_rows"], 0);
  EXPECT_EQ(calm["clickhouse_rows"], calm["records_produced"]);
}

}  // namespace
}  // namespace pipesim::pipeline
