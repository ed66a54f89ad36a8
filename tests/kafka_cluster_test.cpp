// KafkaCluster: the KRaft controller's elections (fencing, ISR, clean and
// unclean), truncation on failover, produce answers, the high watermark.
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "models/broker/kafka_cluster.h"

namespace pipesim::broker {
namespace {

struct Recorder final : ClusterListener {
  std::vector<std::string> calls;
  std::int64_t truncated = 0;
  void before_change() override {}
  void leadership_moved(int p, int old) override {
    calls.push_back("moved " + std::to_string(p) + " from " + std::to_string(old));
  }
  void broker_died(int b) override { calls.push_back("died " + std::to_string(b)); }
  void isr_shrunk(int p) override { calls.push_back("isr " + std::to_string(p)); }
  void records_visible(int) override {}
  void leader_elected(int) override {}
  void change_planned(sim::Time) override {}
  void log_truncated(int p, std::int64_t end, const std::vector<IdPiece>& removed) override {
    calls.push_back("truncated " + std::to_string(p) + " at " + std::to_string(end));
    for (const auto& r : removed) truncated += r.ids.count;
  }
};

class ClusterTest : public ::testing::Test {
 protected:
  ClusterTest() { options_.auto_leader_rebalance_enable = false; }
  // Other options are set on options_ before.
  void build(std::int64_t brokers, std::int64_t rf, sim::Time replication = sim::Time::millis(2),
             std::int64_t records_per_segment_file = std::numeric_limits<std::int64_t>::max()) {
    options_.brokers = brokers;
    options_.num_partitions = 1;
    options_.replication_factor = rf;
    options_.replication_latency = replication;
    logs_.assign(1, PartitionLog(records_per_segment_file));
    cluster_ = std::make_unique<KafkaCluster>(sim_, options_, logs_, ledger_);
    cluster_->set_listener(&recorder_);
    cluster_->start(sim::Time::days(1));
  }
  // Appends `n` records (non-idempotent) at now through `broker`.
  ProduceResult produce(int broker, std::int64_t n, bool acks_all = true) {
    const std::int64_t first = ledger_.emit(0, n);
    ProduceBatch b;
    b.first_id = first;
    b.records = n;
    b.acks_all = acks_all;
    b.created = sim_.now();
    return cluster_->produce(broker, b, sim_.now());
  }
  // A batch of an idempotent producer: `n` records with sequences from `seq`
  // (ids `first_id` on, so a retry can name the same records).
  ProduceResult produce_idempotent(int broker, std::int64_t pid, std::int64_t seq, std::int64_t n,
                                   std::int64_t first_id, bool acks_all = true) {
    if (first_id + n > ledger_.produced(0)) ledger_.emit(0, first_id + n - ledger_.produced(0));
    ProduceBatch b;
    b.first_id = first_id;
    b.records = n;
    b.producer_id = pid;
    b.base_sequence = seq;
    b.acks_all = acks_all;
    b.created = sim_.now();
    return cluster_->produce(broker, b, sim_.now());
  }
  void run_until(sim::Time t) { sim_.run_until(t); }

  sim::Simulation sim_;
  KafkaOptions options_;
  std::vector<PartitionLog> logs_;
  ledger::Ledger ledger_{1};
  Recorder recorder_;
  std::unique_ptr<KafkaCluster> cluster_;
};

TEST_F(ClusterTest, ADuplicateUnderAcksAllIsAnsweredOnceTheHighWatermarkHasTheOriginal) {
  // Kafka 3.7: a duplicate batch gets the original's offsets, and the
  // DelayedProduce waits for the high watermark to pass them.
  build(3, 3, sim::Time::millis(2));
  const ProduceResult first = produce_idempotent(0, 7, 0, 10, 0);
  ASSERT_EQ(first.error, ProduceError::NONE);
  EXPECT_EQ(first.replication, sim::Time::millis(2));
  run_until(sim::Time::micros(500));
  const ProduceResult early = produce_idempotent(0, 7, 0, 10, 0);
  EXPECT_EQ(early.error, ProduceError::DUPLICATE_SEQUENCE);
  EXPECT_EQ(early.base_offset, 0);
  EXPECT_EQ(early.replication, sim::Time::micros(1500));  // the original's 2 ms wait, 0.5 ms gone
  EXPECT_EQ(produce_idempotent(0, 7, 0, 10, 0, false).replication, sim::Time{});  // acks=1 does not wait
  run_until(sim::Time::millis(2));
  cluster_->replicated(0, 10, first.leader_epoch);  // the followers have it: high watermark 10
  EXPECT_EQ(produce_idempotent(0, 7, 0, 10, 0).replication, sim::Time{});
}

TEST_F(ClusterTest, RetentionDoesNotDropAProducersState) {
  // Segment files of 10 records, retention 60 s checked every 10 s. Producer
  // 7 writes offsets 0..9 at 0 s; producer 8 writes 10..29 at 30 s, so the
  // first two files close. At the check at 70 s the first file (newest
  // record at 0 s) is deleted: producer 7 has nothing left in the log, yet
  // its state stays (3.7 onLogStartOffsetIncremented keeps it; only
  // producer.id.expiration.ms removes it), so its retry is still a duplicate.
  options_.retention = sim::Time::seconds(60);
  options_.log_retention_check_interval = sim::Time::seconds(10);
  build(3, 3, sim::Time::millis(2), 10);
  ASSERT_EQ(produce_idempotent(0, 7, 0, 10, 0).error, ProduceError::NONE);
  run_until(sim::Time::seconds(30));
  ASSERT_EQ(produce_idempotent(0, 8, 0, 10, 10).error, ProduceError::NONE);
  ASSERT_EQ(produce_idempotent(0, 8, 10, 10, 20).error, ProduceError::NONE);
  cluster_->replicated(0, 30, cluster_->leader_epoch(0));  // retention deletes below the high watermark only
  run_until(sim::Time::seconds(75));
  EXPECT_EQ(logs_[0].log_start_offset(), 10);
  EXPECT_EQ(produce_idempotent(0, 7, 0, 10, 0).error, ProduceError::DUPLICATE_SEQUENCE);
}

TEST_F(ClusterTest, ACrashedLeaderIsFencedAfterTheSessionTimeoutAndTheFirstIsrReplicaLeads) {
  build(3, 3);
  EXPECT_EQ(produce(0, 100).error, ProduceError::NONE);
  run_until(sim::Time::millis(10));  // on the followers after 1 ms
  cluster_->crash_broker(0, sim::Time::minutes(1));
  EXPECT_EQ(cluster_->leader(0), 0);  // the metadata still names it
  run_until(sim::Time::millis(10) + sim::Time::millis(8999));
  EXPECT_EQ(cluster_->leader(0), 0);
  run_until(sim::Time::millis(10) + sim::Time::millis(9000));
  EXPECT_EQ(cluster_->leader(0), 1);
  EXPECT_EQ(logs_[0].log_end_offset(), 100);  // nothing lost
  EXPECT_EQ(recorder_.truncated, 0);
  EXPECT_EQ(cluster_->counters().leader_elections, 1);
}

TEST_F(ClusterTest, TheGroupCoordinatorIsGoneFromItsBrokersCrashUntilTheFence) {
  // __consumer_offsets-4 of 3 brokers: replicas 1, 2, 0, led by broker 1.
  build(3, 3);
  EXPECT_TRUE(cluster_->group_coordinator_available(4));
  cluster_->crash_broker(0, sim::Time::minutes(1));
  EXPECT_TRUE(cluster_->group_coordinator_available(4));  // a follower died
  EXPECT_FALSE(cluster_->group_coordinator_available(3));  // led by broker 0
  run_until(sim::Time::millis(8999));
  EXPECT_FALSE(cluster_->group_coordinator_available(3));
  run_until(sim::Time::millis(9000));  // fenced: broker 1 leads it
  EXPECT_TRUE(cluster_->group_coordinator_available(3));
  cluster_->crash_broker(1, sim::Time::minutes(1));
  EXPECT_FALSE(cluster_->group_coordinator_available(3));
  run_until(sim::Time::millis(18000));  // broker 2 leads it
  EXPECT_TRUE(cluster_->group_coordinator_available(3));
}

TEST_F(ClusterTest, WithOneOffsetsReplicaTheCoordinatorWaitsForItsBroker) {
  options_.offsets_topic_replication_factor = 1;
  build(3, 3);
  cluster_->crash_broker(0, sim::Time::seconds(30));
  run_until(sim::Time::seconds(29));
  EXPECT_FALSE(cluster_->group_coordinator_available(3));  // fenced, nobody else
  run_until(sim::Time::seconds(30));
  EXPECT_TRUE(cluster_->group_coordinator_available(3));  // back
}

TEST_F(ClusterTest, AFailoverBeforeTheFollowersFetchedTruncatesTheTail) {
  build(3, 3, sim::Time::millis(100));  // followers have an append 50 ms after it
  produce(0, 100);
  run_until(sim::Time::millis(60));
  produce(0, 30);  // at 60 ms: not on the followers before 110 ms
  run_until(sim::Time::millis(80));
  cluster_->change_leader(0, true, sim::Time{});
  EXPECT_EQ(cluster_->leader(0), 1);
  EXPECT_EQ(logs_[0].log_end_offset(), 100);
  EXPECT_EQ(recorder_.truncated, 30);
  ASSERT_EQ(recorder_.calls.size(), 2u);
  EXPECT_EQ(recorder_.calls[0], "moved 0 from 0");  // the waiting answers fail first
  EXPECT_EQ(recorder_.calls[1], "truncated 0 at 100");
  // The old leader answers NOT_LEADER_OR_FOLLOWER now; the offsets are reused.
  EXPECT_EQ(produce(0, 5).error, ProduceError::NOT_LEADER_OR_FOLLOWER);
  const ProduceResult r = produce(1, 5);
  EXPECT_EQ(r.error, ProduceError::NONE);
  EXPECT_EQ(r.base_offset, 100);
}

TEST_F(ClusterTest, WithoutALiveIsrMemberThePartitionIsOfflineUntilTheLastOneReturns) {
  build(2, 2);
  produce(0, 100);
  run_until(sim::Time::seconds(1));
  cluster_->crash_broker(1, sim::Time::minutes(5));  // the follower
  run_until(sim::Time::seconds(11));                  // fenced: ISR {0}
  produce(0, 50);                                     // acknowledged by broker-0 alone
  cluster_->crash_broker(0, sim::Time::minutes(1));
  run_until(sim::Time::seconds(21));
  EXPECT_EQ(cluster_->leader(0), -1);  // broker-0 was the last ISR member: offline
  run_until(sim::Time::seconds(71));    // broker-0, the last ISR member, returns
  EXPECT_EQ(cluster_->leader(0), 0);
  EXPECT_EQ(logs_[0].log_end_offset(), 150);
  EXPECT_EQ(cluster_->counters().unclean_elections, 0);
}

TEST_F(ClusterTest, AnUncleanElectionCutsTheLogToTheOutOfSyncReplica) {
  options_.unclean_leader_election_enable = true;
  build(2, 2);
  produce(0, 100);
  run_until(sim::Time::seconds(1));
  cluster_->crash_broker(1, sim::Time::seconds(60));  // ends at 100
  run_until(sim::Time::seconds(11));
  produce(0, 50);
  cluster_->crash_broker(0, sim::Time::minutes(10));
  run_until(sim::Time::seconds(21));
  EXPECT_EQ(cluster_->leader(0), -1);
  run_until(sim::Time::seconds(62));  // broker-1 back, out of sync: elected anyway
  EXPECT_EQ(cluster_->leader(0), 1);
  EXPECT_EQ(cluster_->counters().unclean_elections, 1);
  EXPECT_EQ(logs_[0].log_end_offset(), 100);
  EXPECT_EQ(recorder_.truncated, 50);
}

TEST_F(ClusterTest, AcksAllNeedsMinInsyncReplicasInTheIsr) {
  options_.min_insync_replicas = 2;
  build(2, 2);
  cluster_->crash_broker(1, sim::Time::minutes(5));
  // Until the fence the dead follower is still in the ISR: the append waits.
  EXPECT_EQ(produce(0, 10).replication, sim::Time::max());
  run_until(sim::Time::seconds(9));
  EXPECT_EQ(recorder_.calls.back(), "isr 0");
  EXPECT_EQ(produce(0, 10).error, ProduceError::NOT_ENOUGH_REPLICAS);
  EXPECT_EQ(produce(0, 10, false).error, ProduceError::NONE);  // acks=1 does not care
  run_until(sim::Time::seconds(301));
  EXPECT_EQ(produce(0, 10).error, ProduceError::NONE);
}

TEST_F(ClusterTest, AnUncontrolledLeaderChangeLeavesProduceRequestsUnanswered) {
  build(3, 3);
  cluster_->change_leader(0, false, sim::Time::seconds(5));
  EXPECT_EQ(produce(0, 10).error, ProduceError::NO_ANSWER);
  EXPECT_EQ(cluster_->leader(0), 0);
  run_until(sim::Time::seconds(5));
  EXPECT_EQ(cluster_->leader(0), 1);
  EXPECT_EQ(produce(0, 10).error, ProduceError::NOT_LEADER_OR_FOLLOWER);
}

TEST_F(ClusterTest, AControlledChangeWithAWindowHasNoLeaderMeanwhile) {
  build(3, 3);
  cluster_->change_leader(0, true, sim::Time::seconds(5));
  EXPECT_EQ(cluster_->leader(0), -1);
  EXPECT_EQ(produce(0, 10).error, ProduceError::NOT_LEADER_OR_FOLLOWER);
  run_until(sim::Time::seconds(5));
  EXPECT_EQ(cluster_->leader(0), 1);
}

TEST_F(ClusterTest, ThePreferredLeaderReturnsAfterTheImbalanceCheckInterval) {
  options_.auto_leader_rebalance_enable = true;
  build(3, 3);
  cluster_->change_leader(0, true, sim::Time{});
  EXPECT_EQ(cluster_->leader(0), 1);
  run_until(sim::Time::seconds(299));
  EXPECT_EQ(cluster_->leader(0), 1);
  run_until(sim::Time::seconds(300));
  EXPECT_EQ(cluster_->leader(0), 0);
}

}  // namespace
}  // namespace pipesim::broker
