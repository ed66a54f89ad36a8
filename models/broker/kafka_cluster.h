// The Kafka 3.7 brokers of the topic in KRaft mode (docs/model.md §4.2): brokers,
// partitions with their replicas, leader, leader epoch and ISR, the leaders'
// logs (PartitionLog) and idempotence state (ProducerStateManager).
//
// Replication (model): a follower in the ISR has a leader append
// replication_latency/2 after it, and the leader learns it (high watermark,
// acks=all answer) replication_latency after it. Consumers read up to the
// high watermark. A leader that fails over to a follower which lacks the tail
// loses that tail: the log is truncated to the new leader's end (acks=1, or an
// unclean election, lose acknowledged records this way).
//
// Elections (KRaft controller, PartitionChangeBuilder): the new leader is the
// first live ISR replica in assignment order; with none and
// unclean.leader.election.enable, the first live replica (the ISR becomes that
// replica alone); else the partition is offline until an ISR member returns.
//   - broker crash: the broker stops at once (its unsent answers are lost);
//     the controller fences it after broker.session.timeout.ms (a silent
//     follower leaves the ISR after min(that, replica.lag.time.max.ms)),
//     moves its leaderships and removes it from the ISRs (the last member
//     stays); it comes back after the fault's duration and rejoins the ISRs.
//   - controlled leader change: the leader gives the partition up at once
//     (answers NOT_LEADER_OR_FOLLOWER); the next ISR replica takes over after
//     the election window (milliseconds: 0 by default).
//   - auto.leader.rebalance.enable: a partition off its preferred replica
//     (the first of its assignment) is moved back by a preferred election
//     leader.imbalance.check.interval.seconds later (QuorumController).
// Retention: every log.retention.check.interval.ms, segment files whose newest
// record is older than retention.ms are deleted (ledger: RETENTION_EXPIRED).
//
// Replica assignment (model): partition p has replicas p, p+1, ... mod brokers.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "models/broker/kafka_options.h"
#include "models/broker/partition_log.h"
#include "models/broker/producer_state.h"
#include "models/ledger/ledger.h"
#include "sim/engine/simulation.h"

namespace pipesim::broker {

enum class ProduceError : std::uint8_t {
  NONE,                          // appended
  DUPLICATE_SEQUENCE,            // a retry of a retained batch: success with the original offset
  NOT_LEADER_OR_FOLLOWER,        // this broker does not lead the partition (any more)
  NOT_ENOUGH_REPLICAS,           // acks=all and the ISR is smaller than min.insync.replicas
  // An acks=all append waited for its replication and the ISR shrank below
  // min.insync.replicas meanwhile: appended, in the log, but answered with
  // this retriable error (Partition.checkEnoughReplicasReachOffset).
  NOT_ENOUGH_REPLICAS_AFTER_APPEND,
  OUT_OF_ORDER_SEQUENCE_NUMBER,  // a gap in the producer's sequences
  INVALID_PRODUCER_EPOCH,        // an older epoch than the broker has seen
  NO_ANSWER,                     // the leader hangs on the partition (uncontrolled leader change)
  // Never from a broker: what the client makes of a request on a connection
  // that closed before its answer (NetworkClient: a disconnect).
  NETWORK_EXCEPTION,
};

// One partition's part of a produce request.
struct ProduceBatch {
  int partition = 0;
  std::int64_t first_id = 0;
  std::int64_t records = 0;
  ledger::CopyCause cause = ledger::CopyCause::ORIGINAL;
  std::int64_t producer_id = -1;  // -1: not an idempotent producer
  int epoch = 0;
  std::int64_t base_sequence = -1;
  sim::Time created{};  // record timestamps (CreateTime)
  bool acks_all = true;
  // Ground truth for the ledger, not on the wire: an epoch bump re-numbered
  // this batch after an attempt of it was written (KAFKA-14034).
  bool resequenced = false;
};

struct ProduceResult {
  ProduceError error = ProduceError::NONE;
  std::int64_t base_offset = -1;
  // Until the ISR has the append (high watermark); 0 if the leader is the
  // whole ISR; sim::Time::max() while a dead broker is still in the ISR.
  sim::Time replication{};
  std::uint32_t leader_epoch = 0;
};

// What the cluster tells the rest of the pipeline. Every change first calls
// before_change() so that work due before now (answers, appends) is settled.
class ClusterListener {
 public:
  virtual ~ClusterListener() = default;
  virtual void before_change() = 0;
  // `old_leader` gave up the partition (controlled): its waiting acks=all
  // answers become NOT_LEADER_OR_FOLLOWER now.
  virtual void leadership_moved(int partition, int old_leader) = 0;
  // The broker process died: its connections are gone.
  virtual void broker_died(int broker) = 0;
  // The ISR shrank: appends waiting for a dead follower are answered now.
  virtual void isr_shrunk(int partition) = 0;
  // The high watermark moved: consumers may read more.
  virtual void records_visible(int partition) = 0;
  // A (new) leader leads the partition: consumers fetch from it.
  virtual void leader_elected(int partition) = 0;
  // The controller will change leaderships at `at` by itself (a preferred
  // election, a fence, an election window's end).
  virtual void change_planned(sim::Time at) = 0;
  // Offsets >= new_end were removed by a failover (`removed`: what they held).
  virtual void log_truncated(int partition, std::int64_t new_end, const std::vector<IdPiece>& removed) = 0;
};

struct ClusterCounters {
  std::int64_t appended_records = 0;   // every append, duplicates included
  std::int64_t truncated_records = 0;  // removed by failovers
  std::int64_t retention_deleted_records = 0;
  std::int64_t leader_elections = 0;
  std::int64_t unclean_elections = 0;
};

class KafkaCluster final : public sim::Component {
 public:
  KafkaCluster(sim::Simulation& sim, const KafkaOptions& options, std::vector<PartitionLog>& logs,
               ledger::Ledger& ledger);
  void set_listener(ClusterListener* listener) { listener_ = listener; }
  // Schedules the retention checks up to `horizon` (none if nothing can expire).
  void start(sim::Time horizon);

  // The leader a MetadataResponse names (-1: none). A crashed broker stays
  // the leader until the controller fences it.
  [[nodiscard]] int leader(int partition) const { return partitions_[static_cast<std::size_t>(partition)].leader; }
  [[nodiscard]] bool alive(int broker) const { return alive_[static_cast<std::size_t>(broker)]; }
  // Whether the group coordinator of __consumer_offsets partition
  // `offsets_partition` answers (OffsetCommit, JoinGroup).
  [[nodiscard]] bool group_coordinator_available(int offsets_partition) const;
  // The partition's ISR is smaller than min.insync.replicas.
  [[nodiscard]] bool below_min_insync(int partition) const {
    return below_min_insync(partitions_[static_cast<std::size_t>(partition)]);
  }
  [[nodiscard]] int brokers() const { return static_cast<int>(alive_.size()); }
  [[nodiscard]] int partition_count() const { return static_cast<int>(partitions_.size()); }
  [[nodiscard]] std::uint32_t leader_epoch(int partition) const {
    return partitions_[static_cast<std::size_t>(partition)].leader_epoch;
  }
  // InitProducerId: a new producer id.
  std::int64_t new_producer_id() { return next_producer_id_++; }

  // The live broker `broker` handles one partition of a produce request at `at`.
  ProduceResult produce(int broker, const ProduceBatch& batch, sim::Time at);
  // The ISR reported an append up to `end_offset` (epoch unchanged): the
  // high watermark moves.
  void replicated(int partition, std::int64_t end_offset, std::uint32_t leader_epoch);

  // The healthy producer's direct feed (direct_feed.h): records appended by
  // the leader at `at` without a request, and registered in its producer
  // state (producer_id -1: not idempotent). Returns the base offset.
  // `append_time(offset)`: when the record at that offset was appended.
  std::int64_t append_direct(int partition, std::int64_t first_id, std::int64_t count,
                             std::int64_t producer_id, int epoch, std::int64_t base_sequence,
                             sim::Time created, sim::Time at,
                             const std::function<sim::Time(std::int64_t)>& append_time);
  // ... and the ISR reported them up to `end_offset`.
  void expose_direct(int partition, std::int64_t end_offset);
  // Every broker up, every partition led by a live broker with its whole
  // replica set in the ISR, no election window.
  [[nodiscard]] bool healthy() const;
  // The earliest leadership change the controller has planned (Time::max(): none).
  [[nodiscard]] sim::Time next_planned_change() const;
  // How long the ISR takes to have an append of the partition (0: the leader alone).
  [[nodiscard]] sim::Time replication_time(int partition) const;

  // broker_crash fault: the broker is down for `down_for`.
  void crash_broker(int broker, sim::Time down_for);
  // leader_change / leader_flapping fault on one partition: controlled (the
  // leader steps down, NOT_LEADER_OR_FOLLOWER) or not (it stops answering);
  // the next ISR replica leads after `window`.
  void change_leader(int partition, bool controlled, sim::Time window);

  void handle(const sim::Event& event) override;
  [[nodiscard]] const ClusterCounters& counters() const { return counters_; }

 private:
  // The copy cause of an append of a batch the client tagged PRODUCER_RETRY.
  static ledger::CopyCause retry_path(const ProduceBatch& batch, SequenceCheck checked,
                                      const ProducerStateManager& producers);
  enum EventType : std::uint32_t { kIsrShrink = 1, kFence = 2, kRestart = 3, kElection = 4,
                                   kRetention = 5, kBalance = 6 };
  struct Partition {
    Partition(sim::Time producer_id_expiration, sim::Time expiration_check_interval)
        : producers(producer_id_expiration, expiration_check_interval) {}
    std::vector<int> replicas;            // replicas[0] is the preferred leader
    std::vector<char> in_isr;             // per replica slot
    std::vector<std::int64_t> stale_end;  // per slot: its log end while it does not follow
    int leader = -1;
    std::uint32_t leader_epoch = 0;
    bool hung = false;       // the leader does not answer produce requests
    int stepped_down = -1;   // the leader that gave it up, during an election window
    sim::Time election_due = sim::Time::max();
    std::deque<std::pair<sim::Time, std::int64_t>> recent;  // appends not yet on the followers: (time, end before)
    ProducerStateManager producers;
  };

  [[nodiscard]] std::size_t slot_of(const Partition& p, int broker) const;
  [[nodiscard]] std::int64_t follower_end(const Partition& p, std::size_t index) const;
  [[nodiscard]] std::int64_t replica_end(const Partition& p, std::size_t index, std::size_t slot) const;
  // Records every replica's current end before the leadership changes.
  void freeze_ends(std::size_t index);
  [[nodiscard]] bool following(const Partition& p, int broker) const;
  [[nodiscard]] int isr_size(const Partition& p) const;
  [[nodiscard]] bool below_min_insync(const Partition& p) const {
    return isr_size(p) < options_.min_insync_replicas;
  }
  [[nodiscard]] bool isr_has_dead_member(const Partition& p) const;
  // The new leader's slot among live replicas, skipping `exclude`; -1: none.
  // Sets `unclean` when it is not an ISR member.
  [[nodiscard]] int choose_leader(const Partition& p, int exclude, bool allow_unclean, bool& unclean) const;
  // `slot` leads from now; the log is truncated to its end if shorter.
  void elect(std::size_t index, int slot, bool unclean);
  void shrink_isr(int broker);
  void fence(int broker);
  void restart(int broker);
  void retention_check();
  void balance_leaders();
  void schedule_balance();
  void update_high_watermark(std::size_t index);

  sim::Simulation& sim_;
  KafkaOptions options_;
  std::vector<PartitionLog>& logs_;
  ledger::Ledger& ledger_;
  ClusterListener* listener_ = nullptr;
  sim::ComponentId id_;
  std::vector<Partition> partitions_;
  std::vector<bool> alive_;
  std::vector<bool> fenced_;
  std::vector<sim::Time> shrink_due_;
  std::vector<sim::Time> fence_due_;
  std::vector<sim::Time> restart_due_;
  std::int64_t next_producer_id_ = 1000;
  sim::Time horizon_{};
  bool balance_scheduled_ = false;
  sim::Time balance_due_ = sim::Time::max();
  ClusterCounters counters_;
  std::vector<IdPiece> scratch_;
};

}  // namespace pipesim::broker
