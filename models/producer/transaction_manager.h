// The idempotent producer's bookkeeping (kafka-clients 3.4 TransactionManager,
// non-transactional part): the producer id and epoch, and per partition the
// next sequence, the last acknowledged sequence and the incomplete batches by
// sequence.
//   - A retried batch keeps its sequence; it is sent only when it is the
//     first incomplete one of its partition.
//   - A batch that expires after it was retried leaves its partition with an
//     "unresolved sequence": no new batch is drained there until the
//     incomplete batches settle; if the sequence did not resolve, the epoch
//     is bumped (locally, for the idempotent producer: KIP-360) and the
//     partition's sequences restart at 0 (in-flight batches are rewritten).
//   - Other partitions move to the new epoch, sequence 0, once their
//     batches of the old epoch have completed.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "models/producer/producer_batch.h"
#include "sim/engine/time.h"

namespace pipesim::producer {

class TransactionManager {
 public:
  // `idempotent` false: everything below is a no-op (enable.idempotence=false).
  TransactionManager(bool idempotent, int partitions, std::int64_t producer_id, sim::Time ready_at);

  [[nodiscard]] bool idempotent() const { return idempotent_; }
  [[nodiscard]] std::int64_t producer_id() const { return producer_id_; }
  [[nodiscard]] int epoch() const { return epoch_; }
  // The InitProducerId answer has arrived.
  [[nodiscard]] sim::Time ready_at() const { return ready_at_; }

  // RecordAccumulator.shouldStopDrainBatchesForPartition, negated.
  [[nodiscard]] bool may_drain(const ProducerBatch& first, sim::Time now) const;
  // Gives a batch drained for the first time its producer id, epoch and sequence.
  void assign_sequence(ProducerBatch& batch, std::uint32_t id);
  // handleCompletedBatch.
  void on_completed(const ProducerBatch& batch, std::uint32_t id);
  // handleFailedBatch: the batch is given up; OUT_OF_ORDER_SEQUENCE_NUMBER or
  // `adjust_sequences` ask for an epoch bump.
  void on_failed(const ProducerBatch& batch, std::uint32_t id, bool out_of_order, bool adjust_sequences);
  // markSequenceUnresolved: an expired batch that had been retried.
  void mark_unresolved(const ProducerBatch& batch);
  // canRetry for OUT_OF_ORDER_SEQUENCE_NUMBER (the idempotent producer always
  // retries; it may ask for an epoch bump).
  void on_out_of_order(const ProducerBatch& batch);
  // maybeResolveSequences + bumpIdempotentEpochAndResetIdIfNeeded (runOnce).
  void resolve_and_bump(BatchPool& pool);

  [[nodiscard]] std::int64_t epoch_bumps() const { return epoch_bumps_; }

  // Records written for this producer without requests (the healthy
  // producer's direct feed): they take the next `count` sequences of the
  // partition, acknowledged. Returns the first; -1 when not idempotent.
  std::int64_t take_acknowledged(int partition, std::int64_t count);
  // Nothing unresolved, nothing waiting for an epoch bump, no incomplete
  // batch of an older epoch.
  [[nodiscard]] bool settled() const;

 private:
  struct PartitionEntry {
    int epoch = 0;
    std::int64_t next_sequence = 0;
    std::int64_t last_acked = -1;
    std::vector<std::pair<std::int64_t, std::uint32_t>> incomplete;  // (base sequence, batch id), sorted
    std::int64_t unresolved_next = -1;  // partitionsWithUnresolvedSequences
    bool rewrite = false;               // partitionsToRewriteSequences
  };
  void remove_incomplete(PartitionEntry& e, std::uint32_t id);
  void request_epoch_bump(PartitionEntry& e);

  bool idempotent_;
  std::int64_t producer_id_;
  int epoch_ = 0;
  sim::Time ready_at_;
  bool bump_required_ = false;
  std::int64_t epoch_bumps_ = 0;
  std::vector<PartitionEntry> partitions_;
};

}  // namespace pipesim::producer
