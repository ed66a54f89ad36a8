// The Connect and sink cases of configs/lab/, each with its outcome computed
// by hand from docs/model.md §4.3/§4.4 and the real v1.3.9 decision logic.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "models/pipeline/config.h"
#include "models/pipeline/scenario.h"
#include "tests/lab_run.h"

namespace pipesim::pipeline {
namespace {

// Common ground of these labs: 1 partition, "fixed" arrivals (record k of a
// partition arrives at k / rate), produced in 1 ms, visible to consumers
// 2 ms later (replication_latency): record k is readable at its arrival +
// 3 ms. An insert takes 5 ms + 20 us per row at the server plus two Keeper
// requests (allocateBlockNumber, the commit) of 0.125 ms each
// (keeper.latency 100 us + 25 us service); with exactlyOnce a put also reads
// the state (1 request) and writes BEFORE and AFTER (2 each). A caught-up
// task's fetch waits at the broker for the next record, answers the instant
// it is readable, and the response arrives 2 ms later (fetch_latency).

// 1 record/s (record k at k s), 11 s of records. Each record is put alone:
// readable at k.003 s, polled at k.005 s, inserted by k.013 s. The worker
// dies at 7 s: records 0..6 are inserted, nothing committed (the first
// commit is due at 60 s). It is back at 37 s; its dead consumer is evicted
// at 52 s and the new task reads from offset 0 at 52.5 s: one batch [0,10].

TEST(ConnectLab, CrashAfterInsertWithExactlyOnceCutsTheOverlap) {
  // Stored AFTER_PROCESSING [6,6]; [0,10] is OVER_LAPPING: only [7,10] is inserted.
  const Lab m("crash_after_insert_exactly_once.json");
  EXPECT_EQ(m["records_produced"], 11);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["classifications.AFTER_PROCESSING.OVER_LAPPING"], 1);
  EXPECT_EQ(m["clickhouse_rows"], 11);
}

TEST(ConnectLab, CrashAfterInsertWithExactlyOnceOffWritesTheReplayTwice) {
  // The in-memory state died with the task: [0,10] is inserted whole, so
  // offsets 0..6 are in ClickHouse twice.
  const Lab m("crash_after_insert_at_least_once.json");
  EXPECT_EQ(m["duplicate_rows"], 7);
  EXPECT_EQ(m["duplicate_rows_by_entry.task_restart_replay"], 7);
}

// 100 records/s. Caught up, record k is readable at 10k + 3 ms, polled at
// 10k + 5 ms and put alone: an exactlyOnce put takes 0.125 + 0.25 + (5.02 +
// 0.25) + 0.25 = 5.895 ms, so it returns at 10k + 10.895 ms (and the next
// poll waits for record k+1's response at 10k + 15 ms). The first commit is
// due at 60 s: record 5999's put returns at 60.0009 s and that iteration
// commits offset 6000. The worker dies at 90.512 s, between the puts of
// records 9050 (returned at 90.5109 s) and 9051: 9051 records inserted,
// stored AFTER_PROCESSING [9050, 9050]. The worker is back at 120.512 s,
// its dead consumer evicted at 135.512 s, and at 136.012 s the new task
// reads from 6000. It lags: a fetch returns max.partition.fetch.bytes
// (1 MiB / 1042 bytes = 1006 records) and a poll max.poll.records (500),
// then the fetch's rest: [6000,6499], [6500,6999], [7000,7005], [7006,7505],
// [7506,8005], [8006,8011], [8012,8511], [8512,9011], [9012,9017], and
// [9018,9517] reaches past the stored range.

TEST(ConnectLab, MismatchWithToleranceAllAndADlqSendsRecordsAlreadyInClickHouse) {
  // The nine batches before 9050 each throw State MISMATCH, swallowed; their
  // 3018 records go to the DLQ after each put, and all are in ClickHouse.
  // [9018,9517] is OVER_LAPPING: [9051,9517] is inserted.
  const Lab m("crash_exactly_once_dlq.json");
  EXPECT_EQ(m["state_mismatch_throws"], 9);
  EXPECT_EQ(m["task_failures"], 0);
  EXPECT_EQ(m["dlq_records_in_clickhouse"], 9018 - 6000);
  EXPECT_EQ(m["dlq_records_missing"], 0);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ConnectLab, CrashDuringAnInsertLeavesBeforeProcessingAndErrorStateThatToleranceDoesNotCover) {
  // Killed at 90.498 s while record 9049's insert is in flight (its put began
  // at 90.495 s; BEFORE_PROCESSING [9049, 9049] was written at 90.4954 s, the
  // server commits the insert at 90.5006 s). The replay [6000..6499] starts
  // below the stored min and ends below the stored max: ERROR
  // (tolerateStateMismatch=true only covers PREVIOUS). The task fails at
  // ~136.0 s, ~1936.5 s and ~3737.0 s (the operator restarts after 30 min).
  const Lab m("crash_during_insert_error_state.json");
  EXPECT_EQ(m["classifications.BEFORE_PROCESSING.ERROR"], 3);
  EXPECT_EQ(m["error_state_throws"], 3);
  EXPECT_EQ(m["task_failures"], 3);
  EXPECT_EQ(m["clickhouse_rows"], 9050);
  EXPECT_EQ(m["duplicate_rows"], 0);
}

// 50 records/s; fetch.min.bytes 521000 (500 records of 1042 bytes) with
// fetch.max.wait.ms 60 s: the broker answers a fetch once 500 records are
// readable, so the task puts [500j, 500j+499] at 10j + 9.985 s. The put of
// [2500,2999] returns at ~60.002 s and that iteration commits offset 3000.
// [3000,3499] is put at 69.985 s into a stalled server that will not commit
// it (insert_timeout from 60 s for 60 s, server_commits 0): stored
// BEFORE_PROCESSING [3000,3499], its insert sent at 69.988 s. At 75 s a
// config change (max.poll.records 200) restarts the task; its put outlives
// task.shutdown.graceful.timeout.ms, so at 80 s the worker cancels it
// (WorkerTask.cancel): the orphan's put goes on until the insert's client
// timeout (socket_timeout 30 s, 99.988 s), its consumer stays in the group
// until then and leaves without a commit. The new instance's rebalance is
// done at 100.488 s; it reads from 3000: [3000,3199] and [3200,3399] are
// State CONTAINS, swallowed (errors.tolerance=all) and sent to the reporter;
// [3400,3599] overlaps: [3400,3499] go to the reporter as
// DuplicateException, [3500,3599] is written BEFORE and inserted (into the
// stall: a client timeout at 130.493 s, so a RetriableException; the
// redelivery at the next commit tick, 99.988 + 60 = 159.988 s, is SAME and
// commits). [3000,3499] never reaches ClickHouse.

TEST(ConnectLab, UnknownInsertThenSmallerPollsEndsOnlyInTheDlq) {
  const Lab m("unknown_insert_then_smaller_polls_with_dlq.json");
  EXPECT_EQ(m["state_contains_throws"], 2);
  EXPECT_EQ(m["classifications.BEFORE_PROCESSING.CONTAINS"], 2);
  EXPECT_EQ(m["classifications.BEFORE_PROCESSING.OVER_LAPPING"], 1);
  EXPECT_EQ(m["classifications.BEFORE_PROCESSING.SAME"], 1);
  EXPECT_EQ(m["redeliveries"], 1);
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

// The same State CONTAINS with errors.tolerance=none (the default), the
// operator restarting a FAILED task after exactly 5 min, runs of 30 min +
// 10 min drain. The new instance's first put ([3000,3199], CONTAINS) fails
// at 100.4903 s (the cancelled put ended at 99.988 s, the rebalance is done
// 0.5 s later, the state read 2.3 ms after that: its Keeper read is a round
// trip of 0.3 ms and (1/3 + 1) x 25 us at the leader, and a wait of up to
// 1.4 ms for its node's last write to commit, a draw).

TEST(ConnectLab, StateContainsWithoutToleranceFailsTheTaskAtEveryRestart) {
  // Every restart reads from the committed 3000 with max.poll.records 200
  // and fails 0.5023 s later: failures at 100.4903 + 300.5023 k s for k = 0..7
  // (k = 8 would be past 2400 s). Nothing is lost: the records wait in Kafka.
  const Lab m("state_contains_fails_the_task.json");
  EXPECT_EQ(m["task_failures"], 8);
  EXPECT_EQ(m["state_contains_throws"], 8);
  EXPECT_EQ(m["clickhouse_rows"], 3000);
  EXPECT_EQ(m["pending_records"], 90000 - 3000);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["duplicate_rows"], 0);
  // FAILED from 100.4903 s to the end, but for the 0.5023 s of each of the 7
  // restarts, each of the 8 state reads up to 1.4 ms later. (Had the worker
  // ended the orphan at its cancel, 80 s, the first failure would have been
  // at 80.5023 s: 19.988 s more downtime.)
  EXPECT_LE(m["task_downtime_s"], (2400 - 100.4903) - 7 * 0.5023 + 1e-3);
  EXPECT_GE(m["task_downtime_s"], (2400 - 100.4903 - 0.0014) - 7 * (0.5023 + 0.0014) - 1e-3);
}

TEST(ConnectLab, TolerateStateMismatchDoesNotCoverStateContains) {
  // tolerateStateMismatch skips PREVIOUS batches of an AFTER_PROCESSING range
  // only; BEFORE_PROCESSING CONTAINS throws whatever the setting (v1.3.9
  // Processing.doLogic l.191-193). Same outcome as above.
  const Lab m("state_contains_tolerate_does_not_help.json");
  EXPECT_EQ(m["task_failures"], 8);
  EXPECT_EQ(m["state_contains_throws"], 8);
  EXPECT_EQ(m["pending_records"], 90000 - 3000);
  EXPECT_EQ(m["lost_records"], 0);
}

TEST(ConnectLab, DeletingTheStateRowAfterStateContainsRewritesTheSegment) {
  // The restart at 380.503 s fails again at 381.006 s; 5 min later the row is
  // deleted and the restart finds NONE: [3000, ...] is inserted afresh. The
  // stalled insert of [3000,3499] never committed (server_commits 0), so
  // nothing is duplicated and nothing lost.
  const Lab m("state_contains_delete_state_row_rewrites.json");
  EXPECT_EQ(m["task_failures"], 2);
  EXPECT_EQ(m["state_contains_throws"], 2);
  EXPECT_EQ(m["clickhouse_rows"], 90000);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
  EXPECT_NEAR(m["task_downtime_s"], 300 + 300, 1e-3);
}

// The runbooks on the State MISMATCH lab (first failure at ~136.014 s, the
// operator's restart after 30 min fails again at ~1936.516 s).

TEST(ConnectLab, RunbookDeleteStateRowReinsertsTheReplayAsStateReset) {
  // 5 min after the second failure the partition's state row is deleted: the
  // replay from offset 6000 is inserted again, so 6000..9050 are duplicated.
  const Lab m("runbook_delete_state_row.json");
  EXPECT_EQ(m["state_mismatch_throws"], 2);
  EXPECT_EQ(m["task_failures"], 2);
  EXPECT_EQ(m["duplicate_rows"], 9051 - 6000);
  EXPECT_EQ(m["duplicate_rows_by_entry.state_reset"], 9051 - 6000);
  // Down 90.512-120.512 s (killed), FAILED 136.014-1936.014 s and
  // 1936.516-2236.516 s (until the remediation's restart).
  EXPECT_NEAR(m["task_downtime_s"], 30 + 1800 + 300, 1e-3);
  EXPECT_EQ(m["pending_records"], 0);
}

// (A cleanup_delay_period of a day keeps the cleanup thread out of this lab: its Keeper bursts
// would move the put times the hand calculation follows.)
TEST(ConnectLab, FailedTaskCommitsItsReturnedPutsSoTheRunbookRecovers) {
  // One task, p0 and p1 at 100 records/s each, exactlyOnce, killed at
  // 90.512 s: the commit of the first iteration after 60 s (60.007 s) holds
  // 5999 on both; the state rows say BEFORE_PROCESSING [9049,9049] on p0 (the
  // kill came between its state write and its insert's answer) and
  // AFTER_PROCESSING [9048,9048] on p1.
  //  136.014 s  ERROR State on p0 (failure 1); the restart at +5 min fails
  //             the same way (failure 2): the remediation deletes p0's row
  //             5 min later.
  //  737.056 s  p0 re-inserts [5999,6498] and on in puts that return; a
  //             put reaches p1: State MISMATCH (failure 3).
  //             WorkerSinkTask.execute's closeAllPartitions commits p0 where
  //             its returned puts got (6999) before the consumer closes, so
  //             the next restart resumes p0 there instead of replaying 5999.
  //  +5 min     p0 goes on to 7999, p1 fails the same way again (failure 4):
  //             the remediation deletes p1's row; everything recovers.
  // Without that commit every restart replays p0 from 5999 and the pipeline
  // never catches up (701,901 records pending at the end,
  // SinkOptionsLab.ReportInsertedOffsetsMakesAFailingTaskCommitNothing).
  const Lab m("task_failure_commits_returned_puts.json");
  EXPECT_EQ(m["task_failures"], 4);
  EXPECT_EQ(m["state_mismatch_throws"], 2);
  // p0's [5999, 9049] and p1's [5999, 9048] inserted a second time, once.
  EXPECT_EQ(m["duplicate_rows"], (9049 - 5999 + 1) + (9048 - 5999 + 1));
  EXPECT_EQ(m["duplicate_rows_by_entry.state_reset"], (9049 - 5999 + 1) + (9048 - 5999 + 1));
  // Killed 90.512-120.512 s, then four FAILED stretches of 5 min each.
  EXPECT_NEAR(m["task_downtime_s"], 30 + 4 * 300, 1e-3);
  EXPECT_EQ(m["pending_records"], 0);
  EXPECT_EQ(m["lost_records"], 0);
}

TEST(ConnectLab, RunbookTolerateThenRevertSkipsTheReplayWithoutDuplicates) {
  // With tolerateStateMismatch=true the nine PREVIOUS batches before 9050 are
  // skipped, [9018,9517] inserts [9051,9517]; once caught up (lag 0) the
  // setting is reverted, which restarts the task.
  const Lab m("runbook_tolerate_then_revert.json");
  EXPECT_EQ(m["state_mismatch_throws"], 2);
  EXPECT_EQ(m["classifications.AFTER_PROCESSING.PREVIOUS"], 2 + 9);
  EXPECT_EQ(m["classifications.AFTER_PROCESSING.OVER_LAPPING"], 1);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

// The two-worker exactly-once takeover (below) run for 1 h with the
// tolerate_then_revert runbook: every restart of either task fails 0.54 s
// later on p1's State MISMATCH (the rebalance is done 0.5 s after the join,
// the first batch's state read follows). task-1 is killed 90.512-400.512 s,
// FAILED from 401.051 s; the operator restarts it at 2201.051 s and it
// fails again at 2201.591 s. task-0 is FAILED from 136.021 s, restarted at
// 1936.021 s, fails again at 1936.561 s: 5 min later the operator sets
// tolerateStateMismatch=true. That is a PUT of the connector's config, and
// the herder restarts every task of the connector with its new config: the
// FAILED task-1 starts at 2236.561 s too, not at its own remediation restart
// (2201.591 + 300 s). Both catch up, the revert restarts both again, and
// nothing is duplicated (the PREVIOUS batches are skipped).
TEST(ConnectLab, SwitchingTolerateStateMismatchRestartsEveryTask) {
  const Lab m("runbook_tolerate_switch_restarts_every_task.json");
  EXPECT_EQ(m["task_failures"], 4);
  EXPECT_EQ(m["state_mismatch_throws"], 4);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["pending_records"], 0);
  const double switch_at = 1936.560868 + 300;
  const double task1 = 310 + 1800 + (switch_at - 2201.591095);
  const double task0 = 1800 + 300;
  EXPECT_NEAR(m["task_downtime_s"], task0 + task1, 1e-3);
  // Had only the operator's task restarted, task-1 would have waited for
  // its own restart: 265.03 s more.
  EXPECT_LT(m["task_downtime_s"], task0 + 310 + 1800 + 300 - 1);
}

TEST(ConnectLab, StateWipeWhileTheTaskIsDownMakesTheReplayStateResetCopies) {
  // Killed at 90.512 s (committed 6000, inserted 9051); at 100 s the
  // KeeperMap table is recreated empty. The replay from 6000 finds NONE and
  // inserts again: 6000..9050 are duplicated, attributed to state_reset.
  const Lab m("state_wipe_then_replay.json");
  EXPECT_EQ(m["duplicate_rows"], 3051);
  EXPECT_EQ(m["duplicate_rows_by_entry.state_reset"], 3051);
  EXPECT_EQ(m["state_mismatch_throws"], 0);
}

// Two workers, two tasks, two partitions at 100 records/s each (records k of
// both at 10k ms); task-0 (on worker-0, the worker group's leader: it joined
// first) owns p0, task-1 (worker-1) owns p1. worker-1 dies and stays away
// 10 min. Its consumer's session expires 45 s later: task-0 commits p0 and
// then owns p0 and p1, re-reading p1 from the last commit (6000). 310 s
// after the crash (10 s worker session + 300 s scheduled rebalance delay,
// IncrementalCooperativeAssignor.handleLostAssignments) task-1 starts on
// worker-0 and gets p1 back.

TEST(ConnectLab, SurvivingTaskTakesOverAndReplaysWithExactlyOnceOff) {
  // Killed at 90.5 s, during record 9049's insert (put from 90.495 s,
  // committed by the server at 90.5003 s): 9050 records of p1 inserted. The
  // replay from 6000 has new batch boundaries, so no dedup hit: 3050 twice.
  const Lab m("two_workers_takeover_at_least_once.json");
  EXPECT_EQ(m["records_produced"], 2 * 100 * 420);
  EXPECT_EQ(m["duplicate_rows"], 3050);
  EXPECT_EQ(m["duplicate_rows_by_entry.task_restart_replay"], 3050);
  EXPECT_EQ(m["task_downtime_s"], 310);  // task-1 down from 90.5 s to 400.5 s
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ConnectLab, AFollowerBackBeforeTheDelayStillWaitsForTheDelayedRebalance) {
  // The same with worker-1 back after 1 min (150.5 s): the leader keeps its
  // lost task unassigned until the scheduled rebalance at 400.5 s, then
  // gives it to worker-1 (the candidate with no assignment). The old model
  // restarted it at 150.5 s (60 s down).
  const Lab m("two_workers_follower_back_early_waits_for_the_delay.json");
  EXPECT_EQ(m["task_downtime_s"], 310);
  EXPECT_EQ(m["duplicate_rows"], 3050);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ConnectLab, WhenTheLeaderDiesItsTasksMoveAtOnce) {
  // worker-0, the leader, dies instead. The new leader (worker-1) has no
  // view of the previous assignment (previousGenerationId differs from the
  // last completed generation, so it is cleared): task-0 is not "lost" but
  // unassigned, and starts on worker-1 at the worker group's rebalance 10 s
  // later (100.5 s). It waits in the consumer group until the dead consumer
  // is evicted (135.5 s), then reads p0 from 6000: 3050 twice, as above, but
  // task-0 was down for 10 s, not 310.
  const Lab m("two_workers_leader_dies_tasks_move_at_once.json");
  EXPECT_EQ(m["task_downtime_s"], 10);
  EXPECT_EQ(m["duplicate_rows"], 3050);
  EXPECT_EQ(m["duplicate_rows_by_entry.task_restart_replay"], 3050);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ConnectLab, StateMismatchCascadesToTheSurvivingTaskWithExactlyOnce) {
  // Killed at 90.512 s, between puts: p1's stored AFTER_PROCESSING [9050,
  // 9050]. At 135.512 s task-0 revokes p0 at 13551 (record 13550's put
  // returned); at 136.012 s it reads p0 from 13551 and p1 from 6000. Its
  // puts insert p0 up to 14556 (put() visits events-0, HashMap bucket 8,
  // before events-1, bucket 9) until p1's [6000,6449] is State MISMATCH at
  // 136.021 s; FAILED, task-0 leaves the group and nobody reads anything.
  // task-1 starts at 400.512 s, gets both partitions, and fails on p1 the
  // same way at 401.051 s after p0's overlap with its stored range.
  // ClickHouse holds p1's 9051 and p0's 14557.
  const Lab m("two_workers_takeover_exactly_once.json");
  EXPECT_EQ(m["state_mismatch_throws"], 2);
  EXPECT_EQ(m["task_failures"], 2);
  EXPECT_EQ(m["clickhouse_rows"], 9051 + 14557);
  EXPECT_EQ(m["duplicate_rows"], 0);
  // task-1 down 90.512-400.512 s, task-0 FAILED 136.021-420 s, task-1
  // FAILED 401.051-420 s.
  EXPECT_NEAR(m["task_downtime_s"], 310 + 283.979 + 18.949, 0.01);
}

// A put() longer than max.poll.interval.ms (KIP-62). 1 record/s (record k
// at k s, 10 s of records), every insert takes 2 s, max.poll.interval.ms
// 1.5 s, one task; fetch.min.bytes 5210 (5 records) with fetch.max.wait.ms
// 60 s, so the broker answers a fetch once 5 records are readable. The
// fetch sent at the assignment (0.5 s) is answered at 4.003 s: the task
// puts [0,4] at 4.005 s (state NONE: inserted). At 5.505 s its poll timeout
// expires and its consumer leaves the group; the put returns at ~6.007 s,
// the consumer joins again and at 6.507 s reads p0 from the committed
// offset 0 (the first commit would be due at 60 s): [0,6], OVER_LAPPING the
// in-memory AFTER_PROCESSING [0,4] (the task instance lives on): [5,6] is
// inserted, and that put outlives the interval too (8.009 s). At 9.011 s the
// re-read [0,9] overlaps [5,6]: [7,9] inserted, third timeout at 10.513 s;
// at 11.515 s [0,9] is SAME as [7,9]: skipped. No duplicate.
TEST(ConnectLab, PutOutlivingMaxPollIntervalLeavesTheGroupAndRereadsFromTheCommit) {
  const Lab m("put_outlives_max_poll_interval.json");
  EXPECT_EQ(m["poll_timeouts"], 3);
  EXPECT_EQ(m["inserts"], 3);
  EXPECT_EQ(m["classifications.AFTER_PROCESSING.OVER_LAPPING"], 2);
  EXPECT_EQ(m["classifications.AFTER_PROCESSING.SAME"], 1);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["clickhouse_rows"], 10);
  EXPECT_EQ(m["pending_records"], 0);
}

// The same pipeline with the default max.poll.interval.ms (5 min): nobody
// leaves: [0,4] is put at 4.005 s, [5,9] (NEW) at 9.005 s.
TEST(ConnectLab, PutWithinMaxPollIntervalKeepsTheMember) {
  const Lab m("put_outlives_max_poll_interval.json", {"connect.max.poll.interval.ms=300000"});
  EXPECT_EQ(m["poll_timeouts"], 0);
  EXPECT_EQ(m["inserts"], 2);
  EXPECT_EQ(m["classifications.AFTER_PROCESSING.SAME"], 0);
  EXPECT_EQ(m["classifications.AFTER_PROCESSING.NEW"], 1);
  EXPECT_EQ(m["clickhouse_rows"], 10);
}

// Another task takes over after a poll timeout. 3 partitions over 2 tasks
// (RangeAssignor: task-0 reads p0 and p1, task-1 reads p2), a record every
// 3 s on each; every insert takes 2 s and a put() inserts its partitions one
// after the other, so a put of task-0 that carries p0 and p1 lasts ~4 s and
// its poll timeout (3 s) expires. Nothing of p0/p1 was committed (the first
// commit is due at 60 s), so task-1 reads them from offset 0; its in-memory
// state has no record for them and the dedup window is 0, so whatever
// task-0 had inserted is inserted again. task-1's put then covers three
// partitions and outlives the interval in turn: the two tasks take the
// partitions from each other until the records stop.
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
// A stop that outlives task.shutdown.graceful.timeout.ms (Kafka 3.7
// Worker.awaitStopTask -> WorkerTask.cancel). Three partitions at 10
// records/s each (record k of each at 100k ms), one task caught up; the last
// commit before the trouble is at 60.005 s: 600 on every partition. Inserts
// sent from 65.05 s hang until 85.05 s (server_commits 1). The put of record
// 651 of p0, p1, p2 (polled at 65.1 s) inserts p0 first: it hangs. At 70 s a
// task restart asks the task to stop; at 75 s the worker cancels it. The
// orphan's put goes on: p0's insert is answered at 85.05 s, then p1's and
// p2's inserts (5 ms each) are sent and written; the put returns at
// 85.065 s, the commit is skipped, the consumer leaves, and the new instance
// reads every partition from 600. Its batches start at 600 and end past
// what one original put held, so no block id matches: rows 600..651 of each
// partition are written twice, 3 x 52. (Ending the orphan at the cancel,
// 75 s, writes p1's and p2's record 651 only once through the replay:
// 3 x 52 - 2.)
TEST(ConnectLab, CancelledStopFinishesItsPutThenLeavesWithoutACommit) {
  const Lab m("task_restart_cancelled_put_runs_to_its_end.json");
  EXPECT_EQ(m["abandoned_stops"], 1);
  EXPECT_EQ(m["task_failures"], 0);
  EXPECT_EQ(m["records_produced"], 3 * 10 * 120);
  EXPECT_EQ(m["duplicate_rows"], 3 * 52);
  EXPECT_EQ(m["duplicate_rows_by_entry.task_restart_replay"], 3 * 52);
  EXPECT_EQ(m["dedup_hits"], 0);
  EXPECT_EQ(m["redeliveries"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

// Periodic commits are asynchronous and can fail (Kafka 3.7
// WorkerSinkTask.doCommitAsync -> onCommitCompleted). Two partitions at 100
// records/s each (record k at 10k ms), replication factor 2: p0 on brokers
// 0 and 1 (led by 0), p1 on 1 and 2. The group connect-clickhouse-sink
// lives on __consumer_offsets-3 (hash 1493274053 % 50), led by broker 0.
// offset.flush.interval.ms 2 s: the commits drift later by the task's put
// times, and the one of 60.257 s holds 6024 on both.
// Broker 0 dies at 60.5 s and is fenced at 69.5 s: p0 has no leader (its
// last record is 6049), p1 goes on, and the commits at 62.26, 64.26, 66.26
// and 68.26 s find no coordinator. The worker is killed at 68.5 s (p1's
// record 6849 is being inserted, and lands); the restart replays both from
// 6024: p0 [6024,6049] and p1 [6024,6849], 26 + 826 rows twice.
// (A cleanup_delay_period of a day keeps the cleanup thread out of this lab: its Keeper bursts
// would move the put times the hand calculation follows.)
TEST(ConnectLab, CommitsFailWhileTheGroupCoordinatorIsDown) {
  const Lab m("commit_fails_while_the_coordinator_is_down.json");
  EXPECT_EQ(m["commit_failures"], 4);
  EXPECT_EQ(m["duplicate_rows"], 26 + 826);
  EXPECT_EQ(m["duplicate_rows_by_entry.task_restart_replay"], 26 + 826);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
  // With 42 offsets partitions the group is on __consumer_offsets-5, led by
  // broker 2: every commit succeeds, the 68.26 s one at p0 6050 and p1
  // 6826, so only p1 [6826,6849] is replayed.
  const Lab elsewhere("commit_fails_while_the_coordinator_is_down.json",
                      {"kafka.offsets.topic.num.partitions=42"});
  EXPECT_EQ(elsewhere["commit_failures"], 0);
  EXPECT_EQ(elsewhere["duplicate_rows"], 6849 - 6826 + 1);
}

}  // namespace pipesim::pipeline
