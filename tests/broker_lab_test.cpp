// The broker cases of configs/lab/broker_*.json, each with its outcome
// computed by hand from the Kafka 3.7 KRaft controller (fencing after
// broker.session.timeout.ms, elections from the ISR, unclean elections),
// the leader's high watermark, and retention by segment file.
//
// Common ground: 1 partition with replicas broker-0 (preferred leader),
// broker-1, broker-2 (replication.factor 3 unless the lab says 2), 100
// records/s in 1 s quanta ("fixed": tick k carries ids 100k..100k+99), 16
// records per batch, 1 ms each way to the brokers. A record is on the
// followers replication_latency/2 after the leader appended it; the high
// watermark (and an acks=all answer) follows replication_latency after it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "models/pipeline/config.h"
#include "models/pipeline/scenario.h"
#include "tests/lab_run.h"

namespace pipesim::pipeline {
namespace {

// broker-0 (the leader) crashes at 10.2 s for 1 min; replication_latency
// 500 ms. Tick 10 was appended at 10.001 s and would be on the followers at
// 10.251 s: at the crash they end at offset 1000. The controller fences
// broker-0 at 19.2 s and elects broker-1, which lacks tick 10: the log is
// truncated to 1000. Meanwhile the client sends into the dead connection
// (the crash opens a fault window: tick 11 goes batch by batch, 5 requests =
// 80 records), which times out at 41 s; everything is then retried to
// broker-1 and written.

TEST(BrokerLab, CrashWithAcksOneLosesTheAcknowledgedUnreplicatedTail) {
  // acks=1 answered tick 10 at 10.001 s: the application considers it
  // written. 100 records lost, kafka_truncated.
  const Lab m("broker_crash_acks_1_truncates.json");
  EXPECT_EQ(m["records_produced"], 60000);
  EXPECT_EQ(m["leader_elections"], 1);
  EXPECT_EQ(m["kafka_truncated_records"], 100);
  EXPECT_EQ(m["lost_records"], 100);
  EXPECT_EQ(m["lost_records_by_cause.kafka_truncated"], 100);
  EXPECT_EQ(m["producer_retried_records"], 80);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(BrokerLab, PreferredLeaderElectionWithAcksOneLosesTheTailToo) {
  // With auto.leader.rebalance.enable, the partition moves back to broker-0
  // 300 s after the election, at 319.2 s: tick 319 (appended at 319.001 s,
  // on broker-0 as a follower only at 319.251 s) is cut as well: 200 lost.
  const Lab m("broker_crash_acks_1_truncates.json", {"kafka.auto.leader.rebalance.enable=true"});
  EXPECT_EQ(m["leader_elections"], 2);
  EXPECT_EQ(m["lost_records_by_cause.kafka_truncated"], 200);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(BrokerLab, CrashWithAcksAllAndMinInsyncTwoLosesNothing) {
  // acks=all: tick 10 would have been answered at 10.501 s, after the crash.
  // The truncated tail is unacknowledged: the producer still owns it and
  // retries it to broker-1 (ISR {1,2}, enough for min.insync.replicas=2),
  // whose producer state ends at tick 9, so the retry is the next sequence.
  // Retried: tick 10's run (sent before the window opened) and the 4
  // batches of tick 11 that fit in the in-flight limit: 164 records.
  const Lab m("broker_crash_acks_all_min_insync_2.json");
  EXPECT_EQ(m["kafka_truncated_records"], 100);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["producer_retried_records"], 100 + 4 * 16);
  EXPECT_EQ(m["clickhouse_rows"], 60000);
  EXPECT_EQ(m["pending_records"], 0);
}

// replication.factor 2, min.insync.replicas 2: broker-1, the only follower,
// crashes at 10.2 s for 300 s. Until the fence at 19.2 s it stays in the ISR,
// so tick 11's first batch (appended at 11.001 s) waits for it, and the
// broker reads nothing else from the connection (4 more batches of tick 11
// in flight). At 19.2 s the ISR shrinks to {0}: that batch is answered
// (written), the others are read and refused with NOT_ENOUGH_REPLICAS, as is
// everything after, retried every 100 ms until broker-1 is back at 310.2 s.
// Expired meanwhile: tick 11's other 84 records (at 131 s) and ticks
// 12..190 (tick 190 at 310 s): 84 + 179 x 100 = 17984.

TEST(BrokerLab, MinInsyncReplicasRefusesAcksAllWritesUntilTheFollowerIsBack) {
  const Lab m("broker_min_insync_refuses_writes.json");
  EXPECT_EQ(m["producer_expired_records"], 84 + 179 * 100);
  EXPECT_EQ(m["lost_records_by_cause.send_failed_not_resent"], 17984);  // on_send_failure=drop
  EXPECT_EQ(m["lost_records"], 17984);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(BrokerLab, WithMinInsyncOneTheLeaderAloneTakesTheWrites) {
  const Lab m("broker_min_insync_refuses_writes.json", {"kafka.min.insync.replicas=1"});
  EXPECT_EQ(m["producer_expired_records"], 0);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["clickhouse_rows"], 60000);
}

// replication.factor 2 and unclean.leader.election.enable: broker-1 (the
// follower) crashes at 10.2 s for 100 s and leaves the ISR at 19.2 s, when it
// ends at offset 1100 (tick 10 reached it at 10.002 s). broker-0 then takes
// acks=all writes alone (ISR {0}, min.insync.replicas 1): ticks 11..50 are
// acknowledged. broker-0 crashes at 50.2 s for 10 min: at 59.2 s the
// partition has no live ISR member and goes offline. broker-1 returns at
// 110.2 s and is elected uncleanly: the log is cut to its 1100 records, ticks
// 11..50 (4000 acknowledged records) are gone. The sink saw none of them: the
// only worker died at 0.5 s and is back at 180.5 s (exactlyOnce keeps it
// from inserting tick 0 twice: AFTER_PROCESSING [0,99], replay [0,499] is
// OVER_LAPPING). The records sent while the partition was offline wait and
// are written to broker-1.

TEST(BrokerLab, UncleanElectionLosesAcknowledgedRecordsTheSinkHadNotRead) {
  const Lab m("broker_unclean_election_truncates.json");
  EXPECT_EQ(m["records_produced"], 30000);
  EXPECT_EQ(m["kafka_truncated_records"], 4000);
  EXPECT_EQ(m["lost_records_by_cause.kafka_truncated"], 4000);
  EXPECT_EQ(m["lost_records"], 4000);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

// leader_flapping from 10.075 s for 5 s, every 1 s, replication_latency
// 100 ms, batch.size 1 MiB (a quantum is one batch). Each move catches that
// second's batch appended (k.001 s), on the followers (k.051 s) but not yet
// answered (k.101 s): NOT_LEADER_OR_FOLLOWER. The client refreshes metadata
// (k.078 s) and retries at k.176 s to the new leader, answered at k.278 s,
// before the next move. Five moves, five batches of 100 retried.

TEST(BrokerLab, LeaderFlappingWithoutIdempotenceWritesEveryCaughtBatchTwice) {
  const Lab m("broker_leader_flapping_not_idempotent.json");
  EXPECT_EQ(m["leader_elections"], 5);
  EXPECT_EQ(m["producer_retried_records"], 500);
  EXPECT_EQ(m["duplicate_rows"], 500);
  EXPECT_EQ(m["duplicate_rows_by_entry.producer_retry"], 500);
  EXPECT_EQ(m["lost_records"], 0);
}

TEST(BrokerLab, LeaderFlappingWithIdempotenceWritesNothingTwice) {
  // The new leader has the producer's state for the batch (replicated with
  // it): the retry is a DUPLICATE_SEQUENCE.
  const Lab m("broker_leader_flapping_not_idempotent.json", {"producer.enable.idempotence=true"});
  EXPECT_EQ(m["producer_retried_records"], 500);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["kafka_records"], 30000);
}

// retention.ms 60 s, segment files of 100 records (102400 bytes / 1024: one
// quantum each), a retention check every 10 s. The only worker dies at
// 90.5 s (last commit at 60 s: offset 6000; ticks 0..90 inserted) and is back
// at 390.5 s; its task is assigned at 391.0 s. The check at 390 s deleted
// the files whose newest record is older than 330 s: ticks 0..329, so the
// log starts at 33000. The committed 6000 is below it: auto.offset.reset=
// earliest moves the task to 33000. Ticks 91..329 were never read.

TEST(BrokerLab, RetentionDeletesWhatTheSinkHadNotReadAndTheConsumerResetsToTheLogStart) {
  const Lab m("broker_retention_before_the_sink_reads.json");
  EXPECT_EQ(m["lost_records_by_cause.retention_expired"], 33000 - 9100);
  EXPECT_EQ(m["lost_records"], 23900);
  EXPECT_EQ(m["duplicate_rows"], 0);  // no replay from 6000: the reset skips it
  EXPECT_EQ(m["clickhouse_rows"], 60000 - 23900);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(BrokerLab, RetentionWithExactlyOnceResumesAsNewBatches) {
  // Stored AFTER_PROCESSING [9000, 9099]; the first batch after the reset,
  // [33000, 33499], is NEW (not ZERO: that needs a batch starting at offset 0).
  const Lab m("broker_retention_before_the_sink_reads.json", {"connector.exactlyOnce=true"});
  EXPECT_EQ(m["lost_records_by_cause.retention_expired"], 23900);
  EXPECT_EQ(m["classifications.AFTER_PROCESSING.ZERO"], 0);
  EXPECT_EQ(m["state_mismatch_throws"], 0);
  EXPECT_EQ(m["duplicate_rows"], 0);
}

}  // namespace
}  // namespace pipesim::pipeline
