// The broker cases of configs/lab/broker_*.json, each with its outcome
// computed by hand from the Kafka 3.7 KRaft controller (fencing after
// broker.session.timeout.ms, elections from the ISR, unclean elections),
// the leader's high watermark, and retention by segment file.
//
// Common ground: 1 partition with replicas broker-0 (preferred leader),
// broker-1, broker-2 (replication.factor 3 unless the lab says 2), 100
// records/s, "fixed" arrivals (record k at 10k ms), 1 ms each way to the
// brokers, replication_latency 2 ms. Each record goes alone in a request:
// appended by the leader at 10k + 1 ms, on the followers at +2 ms (half the
// replication latency), in the high watermark (and answered, with acks=all)
// at +3 ms. A broker reads a connection's next request only after answering
// the previous one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "models/pipeline/config.h"
#include "models/pipeline/scenario.h"
#include "tests/lab_run.h"

namespace pipesim::pipeline {
namespace {

// broker-0 (the leader) crashes at 10.1715 s for 1 min: record 1017 was
// appended at 10.171 s and would be on the followers at 10.172 s. The
// controller fences broker-0 at 19.1715 s and elects broker-1, which lacks
// record 1017: the log is truncated to 1017. Meanwhile the client sends
// 1018..1022 into the dead connection (five unanswered requests); the first
// times out at 40.18 s and all five are retried to broker-1 and written.

TEST(BrokerLab, CrashWithAcksOneLosesTheAcknowledgedUnreplicatedTail) {
  // acks=1 answered record 1017 at its append: the application considers it
  // written. 1 record lost, kafka_truncated.
  const Lab m("broker_crash_acks_1_truncates.json");
  EXPECT_EQ(m["records_produced"], 60000);
  EXPECT_EQ(m["leader_elections"], 1);
  EXPECT_EQ(m["kafka_truncated_records"], 1);
  EXPECT_EQ(m["lost_records"], 1);
  EXPECT_EQ(m["lost_records_by_cause.kafka_truncated"], 1);
  EXPECT_EQ(m["producer_retried_records"], 5);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(BrokerLab, PreferredLeaderElectionWithAcksOneLosesTheTailToo) {
  // With auto.leader.rebalance.enable, the partition moves back to broker-0
  // 300 s after the election, at 319.1715 s: record 31917 (appended by
  // broker-1 at 319.171 s, on broker-0 as a follower only at 319.172 s) is
  // cut as well: 2 lost. Record 31918 still goes to broker-1, is refused
  // (NOT_LEADER_OR_FOLLOWER, which makes the client refresh its metadata)
  // and retried: 6 retried.
  const Lab m("broker_crash_acks_1_truncates.json", {"kafka.auto.leader.rebalance.enable=true"});
  EXPECT_EQ(m["leader_elections"], 2);
  EXPECT_EQ(m["lost_records_by_cause.kafka_truncated"], 2);
  EXPECT_EQ(m["producer_retried_records"], 6);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(BrokerLab, CrashWithAcksAllAndMinInsyncTwoLosesNothing) {
  // acks=all: record 1017 would have been answered at 10.173 s, after the
  // crash. The truncated tail is unacknowledged: the producer still owns it
  // and retries it, with 1018..1021, to broker-1 (ISR {1,2}, enough for
  // min.insync.replicas=2), whose producer state ends at 1016, so the retry
  // is the next sequence. Retried: the five requests in the dead connection.
  const Lab m("broker_crash_acks_all_min_insync_2.json");
  EXPECT_EQ(m["kafka_truncated_records"], 1);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["producer_retried_records"], 5);
  EXPECT_EQ(m["clickhouse_rows"], 60000);
  EXPECT_EQ(m["pending_records"], 0);
}

// replication.factor 2, min.insync.replicas 2: broker-1, the only follower,
// crashes at 10.2 s for 300 s. Until the fence at 19.2 s it stays in the ISR,
// so record 1020's append (10.201 s) waits for it, and the broker reads
// nothing else from the connection (1021..1024 in flight behind it). At
// 19.2 s the ISR shrinks to {0}: the high watermark has 1020, but the ISR is
// below min.insync.replicas as the DelayedProduce completes, so 1020 is
// answered NOT_ENOUGH_REPLICAS_AFTER_APPEND (Kafka 3.7
// Partition.checkEnoughReplicasReachOffset) although it is in the log; the
// others are read and refused with NOT_ENOUGH_REPLICAS, as is everything
// after, and 1020's retries too (that check comes before the sequence
// check), every 100 ms until broker-1 is back at 310.2 s. Expired meanwhile
// (created by 190.2 s): 1020..1024 and the 1200 batches of 15 created every
// 150 ms from 10.25 s (1025..19024): 5 + 18000. Lost: all of them but 1020.

TEST(BrokerLab, MinInsyncReplicasRefusesAcksAllWritesUntilTheFollowerIsBack) {
  const Lab m("broker_min_insync_refuses_writes.json");
  EXPECT_EQ(m["producer_not_enough_replicas_after_append"], 1);
  EXPECT_EQ(m["producer_expired_records"], 5 + 1200 * 15);
  EXPECT_EQ(m["lost_records_by_cause.send_failed_not_resent"], 18004);  // on_send_failure=drop
  EXPECT_EQ(m["lost_records"], 18004);
  EXPECT_EQ(m["kafka_records"], 60000 - 18004);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(BrokerLab, AWrittenButRefusedAppendIsDuplicatedByAnApplicationResend) {
  // The same with on_send_failure=retry: every expired record is sent
  // again once broker-1 is back, 1020 too, although Kafka has it: one
  // duplicate row (producer_retry), nothing lost.
  const Lab m("broker_min_insync_refuses_writes.json", {"app.on_send_failure=retry"});
  EXPECT_EQ(m["duplicate_rows"], 1);
  EXPECT_EQ(m["duplicate_rows_by_entry.producer_retry"], 1);
  EXPECT_EQ(m["producer_retry_by_path.application_resend"], 1);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["clickhouse_rows"], 60000 + 1);
}

// The same with broker-1 back after 60 s (70.2 s), before record 1020's
// delivery timeout (130.2 s), and on_send_failure=retry. 1020 was written
// and answered NOT_ENOUGH_REPLICAS_AFTER_APPEND at 19.2 s; its retries are
// refused until the ISR has broker-1 again. With idempotence the next retry
// is a DUPLICATE_SEQUENCE of what the leader's producer state holds:
// answered with the original offset, nothing written twice. Without it the
// retry is appended again: record 1020 twice.
TEST(BrokerLab, ARetryOfAWrittenButRefusedAppendIsDedupedOnlyWithIdempotence) {
  const Lab idempotent("broker_min_insync_written_then_refused.json");
  EXPECT_EQ(idempotent["producer_not_enough_replicas_after_append"], 1);
  EXPECT_EQ(idempotent["producer_expired_records"], 0);
  EXPECT_EQ(idempotent["duplicate_rows"], 0);
  EXPECT_EQ(idempotent["clickhouse_rows"], 60000);
  const Lab plain("broker_min_insync_written_then_refused.json", {"producer.enable.idempotence=false"});
  EXPECT_EQ(plain["producer_not_enough_replicas_after_append"], 1);
  EXPECT_EQ(plain["producer_expired_records"], 0);
  EXPECT_EQ(plain["duplicate_rows"], 1);
  EXPECT_EQ(plain["duplicate_rows_by_entry.producer_retry"], 1);
  EXPECT_EQ(plain["producer_retry_by_path.not_idempotent"], 1);
  EXPECT_EQ(plain["lost_records"], 0);
}

TEST(BrokerLab, WithMinInsyncOneTheLeaderAloneTakesTheWrites) {
  const Lab m("broker_min_insync_refuses_writes.json", {"kafka.min.insync.replicas=1"});
  EXPECT_EQ(m["producer_expired_records"], 0);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["clickhouse_rows"], 60000);
}

// replication.factor 2 and unclean.leader.election.enable: broker-1 (the
// follower) crashes at 10.2 s for 100 s and leaves the ISR at 19.2 s; it
// ends at offset 1020 (record 1019 reached it at 10.192 s). broker-0 then
// takes acks=all writes alone (ISR {0}, min.insync.replicas 1): 1020..5019
// are acknowledged. broker-0 crashes at 50.2 s for 10 min: at 59.2 s the
// partition has no live ISR member and goes offline. broker-1 returns at
// 110.2 s and is elected uncleanly: the log is cut to its 1020 records,
// 1020..5019 (4000 acknowledged records) are gone. The sink saw none of them:
// the only worker died at 0.5 s, before its first assignment, and is back at
// 180.5 s. The records sent while the partition was offline wait and are
// written to broker-1.

TEST(BrokerLab, UncleanElectionLosesAcknowledgedRecordsTheSinkHadNotRead) {
  const Lab m("broker_unclean_election_truncates.json");
  EXPECT_EQ(m["records_produced"], 30000);
  EXPECT_EQ(m["kafka_truncated_records"], 4000);
  EXPECT_EQ(m["lost_records_by_cause.kafka_truncated"], 4000);
  EXPECT_EQ(m["lost_records"], 4000);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

// leader_flapping from 10.0725 s for 5 s, every 1 s. Each move catches the
// record that arrived 2.5 ms before it: appended (k.071 s) and on the
// followers (k.072 s) but not yet answered (k.073 s): NOT_LEADER_OR_FOLLOWER.
// The client refreshes its metadata (k.0755 s, before the next record) and
// retries it to the new leader. Five moves, five records retried.

TEST(BrokerLab, LeaderFlappingWithoutIdempotenceWritesEveryCaughtBatchTwice) {
  const Lab m("broker_leader_flapping_not_idempotent.json");
  EXPECT_EQ(m["leader_elections"], 5);
  EXPECT_EQ(m["producer_retried_records"], 5);
  EXPECT_EQ(m["duplicate_rows"], 5);
  EXPECT_EQ(m["duplicate_rows_by_entry.producer_retry"], 5);
  EXPECT_EQ(m["lost_records"], 0);
}

TEST(BrokerLab, LeaderFlappingWithIdempotenceWritesNothingTwice) {
  // The new leader has the producer's state for the batch (replicated with
  // it): the retry is a DUPLICATE_SEQUENCE.
  const Lab m("broker_leader_flapping_not_idempotent.json", {"producer.enable.idempotence=true"});
  EXPECT_EQ(m["producer_retried_records"], 5);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["kafka_records"], 30000);
}

// retention.ms 60 s, segment files of 100 records (102400 bytes / 1024), a
// retention check every 10 s. The only worker dies at 90.5 s, during record
// 9049's insert (committed by the server): 9050 records inserted, the last
// commit at 60 s (offset 6000). It is back at 390.5 s; its task is assigned
// at 391.0 s. File j (offsets 100j..100j+99) was last appended at (100j +
// 99) x 10 ms + 1 ms; the check at 390 s deletes the files older than 330 s:
// j <= 329, so the log starts at 33000. The committed 6000 is below it:
// auto.offset.reset=earliest moves the task to 33000. 9050..32999 were never
// read.

TEST(BrokerLab, RetentionDeletesWhatTheSinkHadNotReadAndTheConsumerResetsToTheLogStart) {
  const Lab m("broker_retention_before_the_sink_reads.json");
  EXPECT_EQ(m["lost_records_by_cause.retention_expired"], 33000 - 9050);
  EXPECT_EQ(m["lost_records"], 23950);
  EXPECT_EQ(m["duplicate_rows"], 0);  // no replay from 6000: the reset skips it
  EXPECT_EQ(m["clickhouse_rows"], 60000 - 23950);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(BrokerLab, RetentionWithExactlyOnceResumesAsNewBatches) {
  // Stored BEFORE_PROCESSING [9049, 9049] (the crash came during its
  // insert); the first batch after the reset, [33000, 33499], is NEW (not
  // ZERO: that needs a batch starting at offset 0).
  const Lab m("broker_retention_before_the_sink_reads.json", {"connector.exactlyOnce=true"});
  EXPECT_EQ(m["lost_records_by_cause.retention_expired"], 23950);
  EXPECT_EQ(m["classifications.AFTER_PROCESSING.ZERO"], 0);
  EXPECT_EQ(m["classifications.BEFORE_PROCESSING.NEW"], 1);
  EXPECT_EQ(m["state_mismatch_throws"], 0);
  EXPECT_EQ(m["duplicate_rows"], 0);
}

}  // namespace
}  // namespace pipesim::pipeline
