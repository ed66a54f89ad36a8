// The producer cases of configs/lab/producer_*.json, each with its outcome
// computed by hand from kafka-clients 3.4 (RecordAccumulator, Sender,
// TransactionManager) and the broker's ProducerStateManager.
//
// Common ground of these labs: 1 partition (leader broker-0, replicas 0,1,2),
// 100 records/s, "fixed" arrivals (record k at 10k ms), record_bytes 1024 and
// batch.size 16384, so a batch holds 15 records (61-byte header, ~1042 bytes
// a record). Produce round trip 2 ms (1 ms each way), replication_latency
// 2 ms, request.timeout.ms 30 s, retry.backoff.ms 100 ms, delivery.timeout.ms
// 120 s, max.in.flight 5, linger.ms 0. Steady, each record finds the
// connection idle: it creates a batch, wakes the Sender and goes alone in a
// request, appended at 10k + 1 ms, on the followers at +2, answered
// (acks=all: the high watermark) at +3 and heard at +4 ms.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "models/pipeline/config.h"
#include "models/pipeline/scenario.h"
#include "tests/lab_run.h"
#include "tests/under_sanitizer.h"

namespace pipesim::pipeline {
namespace {

// response_loss p=1 from 10 s to 10.5 s, connection "stall".
// Record 1000 goes at 10.000 s; the broker appends it at 10.001 s and its
// answer is lost: the way back is black-holed. The broker goes on reading
// the connection: records 1001..1004 (sent 10.010 .. 10.040 s) are appended
// at 10.011 .. 10.041 s, their answers lost behind the first (one TCP
// stream). Five unanswered requests: the in-flight limit holds everything
// after them in the accumulator (batches of 15 from 1005). At 40.000 s the
// first request passes request.timeout.ms: the client closes the connection
// and all five fail, every one of them written; they are retried from
// 40.1 s, now outside the window.

TEST(ProducerLab, IdempotentRetryOfALostAnswerIsADuplicateSequence) {
  // The retries of [1000]..[1004] are the producer's last 5 batches on the
  // broker: each is a DUPLICATE_SEQUENCE, answered with its original
  // offset, nothing appended.
  const Lab m("producer_response_loss_idempotent.json");
  EXPECT_EQ(m["records_produced"], 30000);  // 100/s for 300 s
  EXPECT_EQ(m["producer_retried_records"], 5);
  EXPECT_EQ(m["kafka_records"], 30000);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ProducerLab, WithoutIdempotenceEveryStalledBatchIsWrittenTwice) {
  // Same timeline; all five retried batches had been appended, so records
  // 1000..1004 are in Kafka twice, and in ClickHouse twice (the sink inserts
  // both offsets), attributed to producer_retry, path not_idempotent.
  const Lab m("producer_response_loss_not_idempotent.json");
  EXPECT_EQ(m["producer_retried_records"], 5);
  EXPECT_EQ(m["kafka_records"], 30000 + 5);
  EXPECT_EQ(m["duplicate_rows"], 5);
  EXPECT_EQ(m["duplicate_rows_by_entry.producer_retry"], 5);
  EXPECT_EQ(m["producer_retry_by_path.not_idempotent"], 5);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

// response_loss p=1 from 10 s for 5 ms, connection "reset". Record 1000 is
// appended at 10.001 s and the connection is reset as its answer leaves:
// nothing more is read from it, and the client sees the reset one way
// later, at 10.002 s. It fails the one request in flight at once and
// retries [1000] after retry.backoff.ms, at 10.102 s, outside the window;
// 1001..1010 (10.010 .. 10.100 s) wait behind it in one batch and go next.
// Only [1000] is retried, and only it was written.
TEST(ProducerLab, AResetIsSeenAtOnceAndOnlyTheAnsweredRequestIsRetried) {
  const Lab plain("producer_response_loss_reset_not_idempotent.json");
  EXPECT_EQ(plain["producer_retried_records"], 1);
  EXPECT_EQ(plain["kafka_records"], 30000 + 1);
  EXPECT_EQ(plain["duplicate_rows"], 1);
  EXPECT_EQ(plain["producer_retry_by_path.not_idempotent"], 1);
  EXPECT_EQ(plain["lost_records"], 0);
  EXPECT_EQ(plain["pending_records"], 0);
  const Lab idempotent("producer_response_loss_reset_not_idempotent.json", {"producer.enable.idempotence=true"});
  EXPECT_EQ(idempotent["producer_retried_records"], 1);
  EXPECT_EQ(idempotent["kafka_records"], 30000);  // the retry is a DUPLICATE_SEQUENCE
  EXPECT_EQ(idempotent["duplicate_rows"], 0);
}

// response_loss "retransmit" (the default): a live TCP connection whose lost
// segments are sent again after the retransmission timeout, RTO = the
// round trip + tcp_rto_min = 2 + 200 ms, doubling (Linux tcp_set_rto,
// RFC 6298 §5.5); p = 1 inside the window, nothing lost after it.

TEST(ProducerLab, OneLateAnswerHoldsUpEveryLaterAnswerOnItsConnection) {
  // The window is [10.0025, 10.0035) s: only [1000]'s answer, leaving at
  // 10.003 s, is in it. It is sent again at 10.205 s and heard at 10.206 s.
  // [1001]..[1004] (sent 10.010 .. 10.040 s, answered by the broker at
  // 10.013 .. 10.043 s: the broker is not held up) arrive behind it on the
  // same stream, all at 10.206 s: five late answers, where a lost answer
  // alone would make one. Nothing times out, nothing is retried or written
  // twice; the in-flight limit holds 1005.. in the accumulator meanwhile.
  const Lab m("producer_retransmit_head_of_line.json");
  EXPECT_EQ(m["producer_late_answers"], 5);
  EXPECT_EQ(m["producer_retried_records"], 0);
  EXPECT_EQ(m["kafka_records"], 30000);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ProducerLab, AfterTcpRetries2TheConnectionIsResetAndEveryRequestOnItRetried) {
  // Window [10.0025, 12.5025) s, tcp_retries2 2, idempotence off. [1000]'s
  // request (10.000 s) got through; its answer (10.003 s) and its two
  // retransmissions (10.205, 10.609 s) are lost, and the last one's RTO
  // (0.808 s) ends at 11.417 s: the broker's kernel gives up, the client
  // sees the reset at 11.418 s. The requests of [1001]..[1004] (10.010 ..
  // 10.040 s) were lost as well, so at 11.418 s five requests fail as
  // disconnected: 5 records retried at 11.518 s, still inside the window:
  // lost three times, the client's kernel gives up at 11.518 + 0.202 +
  // 0.404 + 0.808 = 12.932 s and they are retried again at 13.032 s, after
  // the window: 10 retried records. [1000] had been written at 10.001 s:
  // without idempotence it is in Kafka twice.
  const Lab m("producer_retransmit_gives_up_after_tcp_retries2.json");
  EXPECT_EQ(m["producer_retried_records"], 10);
  EXPECT_EQ(m["kafka_records"], 30000 + 1);
  EXPECT_EQ(m["duplicate_rows"], 1);
  EXPECT_EQ(m["producer_retry_by_path.not_idempotent"], 1);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

// A retransmitted answer after its batch's deadline. Only a retry can be
// answered after its deadline: a first attempt's deadline (created +
// delivery.timeout.ms, here 30 s both) is never before its request's
// timeout, which closes the connection first. 1 record/s (record k at k s),
// idempotent, retry.backoff.ms 100. Record 10 goes at 10.000 s and is
// appended by broker-0 at 10.001 s; at 10.0015 s broker-0 gives the
// partition up (controlled) and broker-1 leads from 14.5015 s. The new
// leader's log ends where the followers were at the move: [10] (to be
// replicated at 10.003 s) is cut (kafka_truncated_records 1). [10]'s answer
// is NOT_LEADER_OR_FOLLOWER, heard at 10.0025 s; the client refreshes its
// metadata every retry.backoff.ms (no leader) until the one due at
// 14.5045 s names broker-1. Then [10] (sequence 10) and [11..14] (one batch,
// waiting behind it) go to broker-1: appended at 14.5055 and 14.5075 s,
// answered at 14.5075 and 14.5095 s, both inside the response_loss window
// [14.505, 40.1) s (p = 1). [15], [16], [17] (15..17 s) go too, their
// requests lost in the window; [18].. wait (five in flight). At 40.000 s
// [10]'s delivery timeout passes in flight: TimeoutException to the
// application, though it is in Kafka, its sequence left unresolved. Each
// answer is sent again at RTO 202 ms, doubling: 0.202 x (2^7 - 1) =
// 25.654 s after it first left.

TEST(ProducerLab, ARetransmittedAnswerAfterTheDeadlineResolvesTheSequence) {
  // tcp_retries2 15 (default): [10]'s 7th retransmission leaves at
  // 14.5075 + 25.654 = 40.1615 s, after the window: it arrives at 40.1625 s,
  // a success for a batch already failed (Sender.completeBatch ->
  // handleCompletedBatch): the acknowledged sequence moves to 10 and the
  // partition is resolved, no epoch bump. [11..14]'s answer follows at
  // 40.1645 s (late too: 2 late answers); the requests of [15]..[17] get
  // through at 40.655 .. 42.655 s and are answered in time. Nothing twice.
  const Lab m("producer_retransmit_arrives_after_the_deadline.json");
  EXPECT_EQ(m["records_produced"], 300);
  EXPECT_EQ(m["kafka_truncated_records"], 1);
  EXPECT_EQ(m["producer_expired_records"], 1);
  EXPECT_EQ(m["producer_late_answers"], 2);
  EXPECT_EQ(m["producer_late_failures"], 0);
  EXPECT_EQ(m["producer_epoch_bumps"], 0);
  EXPECT_EQ(m["producer_retried_records"], 1);  // [10] after NOT_LEADER
  EXPECT_EQ(m["kafka_records"], 300);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["lost_records"], 0);  // 10 failed to the application, yet it is in Kafka
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ProducerLab, ARetransmissionGivingUpAfterTheDeadlineBumpsTheEpochAndWrittenBatchesAreAppendedAgain) {
  // tcp_retries2 6: after [10]'s 6th lost retransmission (27.23 s) and its
  // RTO, the broker's kernel gives up at 14.5075 + 25.654 = 40.1615 s; the
  // client sees the reset at 40.1625 s and every request on the connection
  // fails as disconnected. [10]'s is a late failure of a done batch:
  // failBatch with adjustSequenceNumbers -> epoch bump; [11..14] (appended,
  // unanswered), [15], [16], [17] (never arrived) get epoch 1, sequences
  // 0, 1..3 ... 6 (startSequencesAtBeginning) and are retried at 40.2625 s
  // (after the window): broker-1 takes epoch 1 from sequence 0, so 11..14
  // are in Kafka twice (epoch_bump_resend). Retried: [10] once, then 4 + 3.
  const Lab m("producer_retransmit_gives_up_after_the_deadline.json");
  EXPECT_EQ(m["records_produced"], 300);
  EXPECT_EQ(m["producer_expired_records"], 1);
  EXPECT_EQ(m["producer_late_failures"], 1);
  EXPECT_EQ(m["producer_epoch_bumps"], 1);
  EXPECT_EQ(m["producer_retried_records"], 1 + 4 + 3);
  EXPECT_EQ(m["kafka_records"], 300 + 4);
  EXPECT_EQ(m["duplicate_rows"], 4);
  EXPECT_EQ(m["producer_retry_by_path.epoch_bump_resend"], 4);
  EXPECT_EQ(m["producer_duplicates_also_failed.epoch_bump_resend"], 0);  // 11..14 were acknowledged in the end
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

// KAFKA-14034 through a late disconnect (docs/model.md §10 path b). 10 records/s
// (record k at 100k ms), retry.backoff.ms 20, delivery.timeout.ms =
// request.timeout.ms = 30 s, on_send_failure=drop. Record 100 goes at
// 10.000 s, is appended at 10.001 s and on the followers at 10.003 s; the
// leader moves at 10.0015 s (controlled), so its waiting acks=all answer is
// NOT_LEADER_OR_FOLLOWER. The client refreshes its metadata and retries
// [100] to broker-1 at 10.0225 s (sequence 100, the new leader has it): the
// DUPLICATE_SEQUENCE answer is lost in the response_loss stall (10.010 s
// for 40 ms), and the connection's later answers with it. Records 101..104
// (10.1 .. 10.4 s) are appended by broker-1 (sequences 101..104), their
// answers lost; five in flight, the rest waits. At 40.000 s [100]'s delivery
// timeout passes while it is in flight: it fails to the application
// (TimeoutException; it is in Kafka, so not lost) and leaves its sequence
// unresolved. At 40.0225 s the first request passes request.timeout.ms: the
// connection closes and every request on it fails as a disconnect. [100]'s
// is a late failure of a done batch: Sender.completeBatch -> failBatch with
// adjustSequenceNumbers (attempts < retries) -> epoch bump, and
// startSequencesAtBeginning gives [101]..[104] (retried from 40.0425 s,
// before their delivery timeouts at 40.1 .. 40.4 s) epoch 1 and sequences
// 0..3. Broker-1 takes them as a new epoch: 101..104 are in Kafka
// twice. Without the late failure (checked by removing it) the retries of
// [101]..[104] keep their sequences, are DUPLICATE_SEQUENCE, the unresolved
// sequence resolves (104 is the last acknowledged) and nothing is bumped.
TEST(ProducerLab, ALateDisconnectOfAnExpiredBatchBumpsTheEpochAndWrittenBatchesAreAppendedAgain) {
  const Lab m("producer_epoch_bump_after_a_late_disconnect.json");
  EXPECT_EQ(m["records_produced"], 3000);
  EXPECT_EQ(m["producer_expired_records"], 1);
  EXPECT_EQ(m["producer_late_failures"], 1);
  EXPECT_EQ(m["producer_epoch_bumps"], 1);
  EXPECT_EQ(m["producer_retried_records"], 1 + 4);  // [100] after NOT_LEADER, [101]..[104] after the close
  EXPECT_EQ(m["kafka_records"], 3000 + 4);
  EXPECT_EQ(m["duplicate_rows"], 4);
  EXPECT_EQ(m["producer_retry_by_path.epoch_bump_resend"], 4);
  EXPECT_EQ(m["lost_records"], 0);  // 100 failed to the application, yet it is in Kafka
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ProducerLab, RetryAfterTheBrokerExpiredTheProducerIdIsWrittenAgain) {
  // The stall of the first labs, with producer.id.expiration.ms 5 s,
  // checked every 10 s: the producer's last append was record 1004 (created
  // 10.040 s), so the check at 20 s drops its state. The retry of [1000] at
  // 40.1 s finds no state and is accepted with any sequence; it starts a new
  // state, in which [1001]..[1004] are the next sequences: records
  // 1000..1004 land twice although idempotence is on.
  const Lab m("producer_id_expired_before_retry.json");
  EXPECT_EQ(m["kafka_records"], 30000 + 5);
  EXPECT_EQ(m["duplicate_rows_by_entry.producer_retry"], 5);
  EXPECT_EQ(m["producer_retry_by_path.producer_id_expired"], 5);
  EXPECT_EQ(m["duplicate_rows"], 5);
}

// leader_change at 10.0725 s with a 200 s window. Record 1007 went at
// 10.070 s: appended at 10.071 s, on the followers at 10.072 s, its answer
// due at 10.073 s. At 10.0725 s the leader steps down: the waiting acks=all
// answer becomes NOT_LEADER_OR_FOLLOWER although the record is on every
// follower. The client refreshes metadata (no leader) every retry.backoff.ms
// (requests at 10.0735 + k x 0.1 s) and only learns the new leader with the
// one at 210.0735 s (answered 210.0755 s). Meanwhile records from 1008 on
// queue in batches of 15 created every 150 ms from 10.080 s. A batch created
// at c expires at c + 120 s: record 1007's (c = 10.070 s) and the 534
// batches created by 90.0755 s (1008..9017): 1 + 534 x 15 = 8011 records
// fail to the application, of which only 1007 had been written. The new
// leader has 1007 (it was on the followers). 1007 had been retried, so its
// expiry leaves an unresolved sequence: epoch bump (KIP-360).

TEST(ProducerLab, NotLeaderLongerThanDeliveryTimeoutAppRetryDuplicatesExactlyTheWrittenBatches) {
  // on_send_failure=retry sends the 8011 records again (new batches, which
  // wait in turn and are written after 210.0755 s); 1007 is now in Kafka
  // twice. auto.leader.rebalance moves the partition back to broker-0 at
  // 510.0725 s (300 s after the election), which catches record 51007 the
  // same way: it is retried too, but idempotence answers that retry with
  // DUPLICATE_SEQUENCE.
  const Lab m("producer_not_leader_longer_than_delivery_timeout.json");
  EXPECT_EQ(m["records_produced"], 60000);
  EXPECT_EQ(m["producer_expired_records"], 1 + 534 * 15);
  EXPECT_EQ(m["producer_epoch_bumps"], 1);
  EXPECT_EQ(m["leader_elections"], 2);
  EXPECT_EQ(m["producer_retried_records"], 2);
  EXPECT_EQ(m["duplicate_rows"], 1);
  EXPECT_EQ(m["duplicate_rows_by_entry.producer_retry"], 1);
  EXPECT_EQ(m["producer_retry_by_path.application_resend"], 1);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ProducerLab, RetriesZeroFailsTheBatchAtItsFirstError) {
  // retries=0 (idempotence then off), no rebalance back to broker-0: record
  // 1007 fails to the application at 10.0735 s with NOT_LEADER_OR_FOLLOWER
  // instead of being retried. The application sends it again at once; the
  // client's metadata (refreshed only at 10.0755 s) still names broker-0,
  // so the resend fails the same way at 10.0755 s and is sent a third time;
  // that copy waits for a leader and expires at 130.0755 s, and the fourth
  // is written after 210.0755 s. Failed: 1007 three times + the 8010
  // queued records; by the delivery timeout 8011. 1007 is written twice.
  const Lab m("producer_not_leader_longer_than_delivery_timeout.json",
              {"producer.retries=0", "kafka.auto.leader.rebalance.enable=false"});
  EXPECT_EQ(m["producer_retried_records"], 0);
  EXPECT_EQ(m["producer_failed_records"], 3 + 8010);
  EXPECT_EQ(m["producer_expired_records"], 8011);
  EXPECT_EQ(m["duplicate_rows_by_entry.producer_retry"], 1);
  EXPECT_EQ(m["producer_retry_by_path.application_resend"], 1);
  EXPECT_EQ(m["lost_records"], 0);
}

TEST(ProducerLab, NotLeaderLongerThanDeliveryTimeoutDropLosesExactlyTheUnwrittenBatches) {
  // 1008..9017 were never written: 8010 records lost; 1007 was written.
  const Lab m("producer_not_leader_longer_than_delivery_timeout.json", {"app.on_send_failure=drop"});
  EXPECT_EQ(m["producer_expired_records"], 8011);
  EXPECT_EQ(m["lost_records"], 8010);
  EXPECT_EQ(m["lost_records_by_cause.send_failed_not_resent"], 8010);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["clickhouse_rows"], 60000 - 8010);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ProducerLab, RetryTableWithABlindManualResendDuplicatesExactlyTheWrittenBatches) {
  // The 8011 expired records are parked; the manual resend at 400 s sends all
  // of them again: 1007 twice, attributed to manual_resend.
  const Lab m("producer_retry_table_manual_resend.json");
  EXPECT_EQ(m["producer_expired_records"], 8011);
  EXPECT_EQ(m["duplicate_rows"], 1);
  EXPECT_EQ(m["duplicate_rows_by_entry.manual_resend"], 1);
  EXPECT_EQ(m["duplicate_rows_by_entry.producer_retry"], 0);
  EXPECT_EQ(m["retry_table_records"], 0);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ProducerLab, RetryTableWithACheckByKeyResendSendsOnlyWhatClickHouseLacks) {
  // By 400 s record 1007 is in ClickHouse (read from the new leader after
  // 210.0755 s): check_by_key sends only 1008..9017. No duplicate, no loss.
  const Lab m("producer_retry_table_manual_resend.json", {"app.resend_policy=check_by_key"});
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["kafka_records"], 60000);  // 1007 written once, 1008..9017 once (resent)
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ProducerLab, RetryTableNeverResentIsLost) {
  // Without the manual resend the parked records stay parked: the 8010
  // unwritten ones are lost (send_failed_not_resent); 1007 is not.
  const Lab m("producer_retry_table_manual_resend.json",
              {R"(faults=[{"kind": "leader_change", "at": "10072500us", "duration": "200s", "partitions": [0]}])"});
  EXPECT_EQ(m["retry_table_records"], 8011);
  EXPECT_EQ(m["lost_records_by_cause.send_failed_not_resent"], 8010);
  EXPECT_EQ(m["duplicate_rows"], 0);
}

// response_loss p=1 from 10 s to 10.5 s as above (a stall), then the
// service restarts at 20 s. Unacknowledged then: the five requests in
// flight (records 1000..1004, appended, their answers lost) and the queued
// batches of 1005..2000 (record 2000 arrives at 20.000 s and is sent just
// before the restart): 1001 records, ids 1000..2000. The new producer (new
// producer id) gets them from the application.

TEST(ProducerLab, RestartedProducerResendsInFlightBatchesUnderANewProducerId) {
  // on_send_failure=retry: all 1001 are sent again; the broker cannot tell
  // that [1000]..[1004] are re-sends (other producer id): 5 duplicates.
  const Lab m("producer_restart_with_in_flight_batches.json");
  EXPECT_EQ(m["faults_fired.producer_restart"], 1);
  EXPECT_EQ(m["kafka_records"], 30000 + 5);
  EXPECT_EQ(m["duplicate_rows"], 5);
  EXPECT_EQ(m["duplicate_rows_by_entry.producer_retry"], 5);
  EXPECT_EQ(m["producer_retry_by_path.application_resend"], 5);
  EXPECT_EQ(m["lost_records"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(ProducerLab, RestartedProducerThatDropsLosesTheUnwrittenInFlightRecords) {
  const Lab m("producer_restart_with_in_flight_batches.json", {"app.on_send_failure=drop"});
  EXPECT_EQ(m["lost_records_by_cause.send_failed_not_resent"], 1001 - 5);  // 1000..1004 are in Kafka
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["pending_records"], 0);
}

// configs/scenarios/not_leader_churn.json (VALIDATION.md section 2): six
// 150 s leader-less windows on every partition at the production rate, with
// idempotence on. Which paths fire: only the application's re-send of
// written batches (each caught waiting for its followers, or written as it
// expired in flight). NOT_LEADER_OR_FOLLOWER retries are deduplicated by the
// new leader, and the 48 epoch bumps (one per partition and window, each
// from an unresolved sequence, so taken with nothing in flight) re-number
// nothing that was written.
TEST(ProducerLab, LeaderChurnWithIdempotenceDuplicatesOnlyThroughTheApplicationsResend) {
  // Two production days: ~8 s in Release, minutes under the sanitizers, where
  // the labs above already run every code path this scenario takes.
  if (testing_support::kUnderSanitizer) GTEST_SKIP() << "two production days; run in the Release stage";
  const Lab m("../scenarios/not_leader_churn.json");
  EXPECT_EQ(m["producer_epoch_bumps"], 48);
  EXPECT_EQ(m["producer_retry_by_path.epoch_bump_resend"], 0);
  EXPECT_EQ(m["producer_retry_by_path.not_idempotent"], 0);
  EXPECT_GT(m["duplicate_rows"], 0);
  EXPECT_EQ(m["duplicate_rows"], m["producer_retry_by_path.application_resend"]);
  EXPECT_EQ(m["lost_records"], 0);
  // Without the re-send the same churn writes nothing twice.
  const Lab dropping("../scenarios/not_leader_churn.json", {"app.on_send_failure=drop"});
  EXPECT_EQ(dropping["duplicate_rows"], 0);
  EXPECT_EQ(dropping["producer_epoch_bumps"], 48);
}

}  // namespace
}  // namespace pipesim::pipeline
