// The producer cases of configs/lab/producer_*.json, each with its outcome
// computed by hand from kafka-clients 3.4 (Sender, TransactionManager) and
// the broker's ProducerStateManager.
//
// Common ground of these labs: 1 partition (leader broker-0, replicas 0,1,2),
// 100 records/s in 1 s quanta ("fixed" arrivals: tick k carries ids
// 100k..100k+99, created at k s), record_bytes 1024 and batch.size 16384, so
// a batch holds 16 records and a quantum is 7 batches (6 x 16 + 4). Produce
// round trip 2 ms (1 ms each way), replication_latency 2 ms unless the lab
// says otherwise, request.timeout.ms 30 s, retry.backoff.ms 100 ms,
// delivery.timeout.ms 120 s, max.in.flight 5. Outside fault windows a quantum
// travels as one run; inside a window, one batch per request.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "models/pipeline/config.h"
#include "models/pipeline/scenario.h"
#include "tests/lab_run.h"

namespace pipesim::pipeline {
namespace {

// response_loss p=1 from 10 s to 10.5 s. Tick 10 goes batch by batch: five
// requests (batches [1000,1015] .. [1064,1079]) leave at 10.000 s. The broker
// appends the first at 10.001 s, its answer is lost and the connection breaks,
// so requests 2-5 are never read. The in-flight limit (5) holds ticks 11..39
// back. At 40.000 s the first request passes request.timeout.ms: the client
// closes the connection and all five fail (80 records re-enqueued), retried
// from 40.1 s, now outside the window.

TEST(ProducerLab, IdempotentRetryOfALostAnswerIsADuplicateSequence) {
  // The retry of [1000,1015] (sequence 1000..1015) is one of the producer's
  // last 5 batches on the broker: DUPLICATE_SEQUENCE, answered with offset
  // 1000, nothing appended. Batches 2-5 are the next sequences: appended.
  const Lab m("producer_response_loss_idempotent.json");
  EXPECT_EQ(m["records_produced"], 30000);  // 100/s for 300 s
  EXPECT_EQ(m["producer_retried_records"], 5 * 16);
  EXPECT_EQ(m["kafka_records"], 30000);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ProducerLab, WithoutIdempotenceTheRetryOfTheAppendedBatchIsWrittenTwice) {
  // Same timeline; of the five retried batches only [1000,1015] had been
  // appended, so exactly its 16 records are in Kafka twice, and in ClickHouse
  // twice (the sink inserts both offset ranges), attributed to producer_retry.
  const Lab m("producer_response_loss_not_idempotent.json");
  EXPECT_EQ(m["producer_retried_records"], 5 * 16);
  EXPECT_EQ(m["kafka_records"], 30000 + 16);
  EXPECT_EQ(m["duplicate_rows"], 16);
  EXPECT_EQ(m["duplicate_rows_by_entry.producer_retry"], 16);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ProducerLab, RetryAfterTheBrokerExpiredTheProducerIdIsWrittenAgain) {
  // producer.id.expiration.ms 5 s, checked every 10 s: the producer's last
  // batch was created at 10 s, so the check at 20 s drops its state. The
  // retry at 40.1 s finds no state and is accepted with any sequence: the
  // 16 records of [1000,1015] land twice although idempotence is on.
  const Lab m("producer_id_expired_before_retry.json");
  EXPECT_EQ(m["kafka_records"], 30000 + 16);
  EXPECT_EQ(m["duplicate_rows_by_entry.producer_retry"], 16);
  EXPECT_EQ(m["duplicate_rows"], 16);
}

// leader_change at 10.075 s with a 200 s window, replication_latency 100 ms.
// Tick 10 (100 records, one run) is appended at 10.001 s; the followers have
// it at 10.051 s, the high watermark would move at 10.101 s. At 10.075 s the
// leader steps down: the waiting acks=all answer becomes NOT_LEADER_OR_FOLLOWER
// although the records are on every follower. The client refreshes metadata
// (no leader) and retries, in vain: no leader until 210.075 s, and the
// client only learns it with the refresh at 210.076 s (every retry.backoff.ms
// from 10.076 s). Every batch created at k s expires at k + 120 s: ticks
// 10..90 (tick 90 at 210.000 s; tick 91 would at 211 s) = 8100 records fail
// to the application, of which only tick 10 had been written. The new
// leader has tick 10 (it was on the followers), so it reaches ClickHouse.
// Tick 10 had been retried, so its expiry leaves an unresolved sequence:
// epoch bump (KIP-360), sequences restart at 0.

TEST(ProducerLab, NotLeaderLongerThanDeliveryTimeoutAppRetryDuplicatesExactlyTheWrittenBatches) {
  // on_send_failure=retry sends the 8100 records again; tick 10's 100 are now
  // in Kafka twice. auto.leader.rebalance moves the partition back to broker-0
  // at 510.075 s (300 s after the election), which catches tick 510 the same
  // way: it is retried too (100 more retried records), but idempotence
  // answers that retry with DUPLICATE_SEQUENCE.
  const Lab m("producer_not_leader_longer_than_delivery_timeout.json");
  EXPECT_EQ(m["records_produced"], 60000);
  EXPECT_EQ(m["producer_expired_records"], 81 * 100);
  EXPECT_EQ(m["producer_epoch_bumps"], 1);
  EXPECT_EQ(m["leader_elections"], 2);
  EXPECT_EQ(m["producer_retried_records"], 200);
  EXPECT_EQ(m["duplicate_rows"], 100);
  EXPECT_EQ(m["duplicate_rows_by_entry.producer_retry"], 100);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ProducerLab, RetriesZeroFailsTheBatchAtItsFirstError) {
  // retries=0 (idempotence then off), no rebalance back to broker-0: tick 10
  // fails to the application at 10.076 s with NOT_LEADER_OR_FOLLOWER instead
  // of being retried. The application sends it again at once; the client's
  // metadata (refreshed only at 10.078 s) still names broker-0, and inside
  // the fault window the resend goes batch by batch: 5 batches (80 records)
  // fail with NOT_LEADER_OR_FOLLOWER too and are sent again; the other 20
  // wait for a leader. Both copies of tick 10 (created 10.076 s and
  // 10.078 s) expire at 130.076/130.078 s and are sent a third time after
  // 210.078 s. Failed: 100 + 80 + ticks 11..90 (8000) + 100 expired copies
  // = 8280, of which 8100 by the delivery timeout. Tick 10 is written twice.
  const Lab m("producer_not_leader_longer_than_delivery_timeout.json",
              {"producer.retries=0", "kafka.auto.leader.rebalance.enable=false"});
  EXPECT_EQ(m["producer_retried_records"], 0);
  EXPECT_EQ(m["producer_failed_records"], 8280);
  EXPECT_EQ(m["producer_expired_records"], 8100);
  EXPECT_EQ(m["duplicate_rows_by_entry.producer_retry"], 100);
  EXPECT_EQ(m["lost_records"], 0);
}

TEST(ProducerLab, NotLeaderLongerThanDeliveryTimeoutDropLosesExactlyTheUnwrittenBatches) {
  // Ticks 11..90 were never written: 8000 records lost; tick 10 was written.
  const Lab m("producer_not_leader_longer_than_delivery_timeout.json", {"app.on_send_failure=drop"});
  EXPECT_EQ(m["producer_expired_records"], 8100);
  EXPECT_EQ(m["lost_records"], 8000);
  EXPECT_EQ(m["lost_records_by_cause.send_failed_not_resent"], 8000);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["clickhouse_rows"], 60000 - 8000);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ProducerLab, RetryTableWithABlindManualResendDuplicatesExactlyTheWrittenBatches) {
  // The 8100 expired records are parked; the manual resend at 400 s sends all
  // of them again: tick 10's 100 twice, attributed to manual_resend.
  const Lab m("producer_retry_table_manual_resend.json");
  EXPECT_EQ(m["producer_expired_records"], 8100);
  EXPECT_EQ(m["duplicate_rows"], 100);
  EXPECT_EQ(m["duplicate_rows_by_entry.manual_resend"], 100);
  EXPECT_EQ(m["duplicate_rows_by_entry.producer_retry"], 0);
  EXPECT_EQ(m["retry_table_records"], 0);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ProducerLab, RetryTableWithACheckByKeyResendSendsOnlyWhatClickHouseLacks) {
  // By 400 s tick 10 is in ClickHouse (read from the new leader after
  // 210.075 s): check_by_key sends only ticks 11..90. No duplicate, no loss.
  const Lab m("producer_retry_table_manual_resend.json", {"app.resend_policy=check_by_key"});
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["kafka_records"], 60000);  // tick 10 written once, ticks 11..90 once (resent)
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ProducerLab, RetryTableNeverResentIsLost) {
  // Without the manual resend the parked records stay parked: the 8000
  // unwritten ones are lost (send_failed_not_resent); tick 10 is not.
  const Lab m("producer_retry_table_manual_resend.json",
              {R"(faults=[{"kind": "leader_change", "at": "10075ms", "duration": "200s", "partitions": [0]}])"});
  EXPECT_EQ(m["retry_table_records"], 8100);
  EXPECT_EQ(m["lost_records_by_cause.send_failed_not_resent"], 8000);
  EXPECT_EQ(m["duplicate_rows"], 0);
}

// response_loss p=1 from 10 s to 10.5 s as above, then the service restarts
// at 20 s. Unacknowledged then: tick 10's five batches in flight (the first
// appended, answer lost), its last 20 records and ticks 11..19 queued: 1000
// records, ids 1000..1999. The new producer (new producer id) gets them from
// the application.

TEST(ProducerLab, RestartedProducerResendsInFlightBatchesUnderANewProducerId) {
  // on_send_failure=retry: all 1000 are sent again; the broker cannot tell
  // that [1000,1015] is a retry (other producer id): 16 duplicates.
  const Lab m("producer_restart_with_in_flight_batches.json");
  EXPECT_EQ(m["faults_fired.producer_restart"], 1);
  EXPECT_EQ(m["kafka_records"], 30000 + 16);
  EXPECT_EQ(m["duplicate_rows"], 16);
  EXPECT_EQ(m["duplicate_rows_by_entry.producer_retry"], 16);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ProducerLab, RestartedProducerThatDropsLosesTheUnwrittenInFlightRecords) {
  const Lab m("producer_restart_with_in_flight_batches.json", {"app.on_send_failure=drop"});
  EXPECT_EQ(m["lost_records_by_cause.send_failed_not_resent"], 1000 - 16);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

}  // namespace
}  // namespace pipesim::pipeline
