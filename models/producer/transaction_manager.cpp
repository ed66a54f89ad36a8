#include "models/producer/transaction_manager.h"

#include <algorithm>

namespace pipesim::producer {

TransactionManager::TransactionManager(bool idempotent, int partitions, std::int64_t producer_id,
                                       sim::Time ready_at)
    : idempotent_(idempotent),
      producer_id_(idempotent ? producer_id : -1),
      ready_at_(ready_at),
      partitions_(static_cast<std::size_t>(partitions)) {}

bool TransactionManager::may_drain(const ProducerBatch& first, sim::Time now) const {
  if (!idempotent_) return true;
  if (now < ready_at_) return false;  // no producer id yet
  const PartitionEntry& e = partitions_[static_cast<std::size_t>(first.partition)];
  if (!first.has_sequence()) {
    // New batches wait while batches of an older epoch are incomplete, and
    // while the partition has an unresolved sequence.
    if (!e.incomplete.empty() && e.epoch != epoch_) return false;
    if (e.unresolved_next >= 0) return false;
  }
  // A retried batch goes only when it is the first incomplete one.
  if (first.has_sequence() && !e.incomplete.empty() && first.base_sequence != e.incomplete.front().first) {
    return false;
  }
  return true;
}

void TransactionManager::assign_sequence(ProducerBatch& batch, std::uint32_t id) {
  if (!idempotent_ || batch.has_sequence()) return;
  PartitionEntry& e = partitions_[static_cast<std::size_t>(batch.partition)];
  if (e.epoch != epoch_ && e.incomplete.empty()) {
    // maybeUpdateProducerIdAndEpoch: the partition moves to the new epoch.
    e.epoch = epoch_;
    e.next_sequence = 0;
    e.last_acked = -1;
  }
  batch.producer_id = producer_id_;
  batch.epoch = e.epoch;
  batch.base_sequence = e.next_sequence;
  e.next_sequence += batch.records;
  e.incomplete.emplace_back(batch.base_sequence, id);
}

std::int64_t TransactionManager::take_acknowledged(int partition, std::int64_t count) {
  if (!idempotent_) return -1;
  PartitionEntry& e = partitions_[static_cast<std::size_t>(partition)];
  if (e.epoch != epoch_ && e.incomplete.empty()) {
    e.epoch = epoch_;
    e.next_sequence = 0;
    e.last_acked = -1;
  }
  const std::int64_t first = e.next_sequence;
  e.next_sequence += count;
  e.last_acked = e.next_sequence - 1;
  return first;
}

bool TransactionManager::settled() const {
  if (!idempotent_) return true;
  if (bump_required_) return false;
  for (const auto& e : partitions_) {
    if (e.unresolved_next >= 0 || e.rewrite) return false;
    if (!e.incomplete.empty() && e.epoch != epoch_) return false;
  }
  return true;
}

void TransactionManager::remove_incomplete(PartitionEntry& e, std::uint32_t id) {
  const auto it = std::find_if(e.incomplete.begin(), e.incomplete.end(),
                               [id](const auto& x) { return x.second == id; });
  if (it != e.incomplete.end()) e.incomplete.erase(it);
}

void TransactionManager::request_epoch_bump(PartitionEntry& e) {
  bump_required_ = true;
  e.rewrite = true;
}

void TransactionManager::on_completed(const ProducerBatch& batch, std::uint32_t id) {
  if (!idempotent_) return;
  PartitionEntry& e = partitions_[static_cast<std::size_t>(batch.partition)];
  if (batch.epoch == e.epoch) e.last_acked = std::max(e.last_acked, batch.last_sequence());
  remove_incomplete(e, id);
}

void TransactionManager::on_failed(const ProducerBatch& batch, std::uint32_t id, bool out_of_order,
                                   bool adjust_sequences) {
  if (!idempotent_) return;
  PartitionEntry& e = partitions_[static_cast<std::size_t>(batch.partition)];
  remove_incomplete(e, id);
  if (batch.has_sequence() && (out_of_order || adjust_sequences)) request_epoch_bump(e);
}

void TransactionManager::mark_unresolved(const ProducerBatch& batch) {
  if (!idempotent_ || !batch.has_sequence()) return;
  PartitionEntry& e = partitions_[static_cast<std::size_t>(batch.partition)];
  e.unresolved_next = std::max(e.unresolved_next, batch.last_sequence() + 1);
}

void TransactionManager::on_out_of_order(const ProducerBatch& batch) {
  if (!idempotent_) return;
  PartitionEntry& e = partitions_[static_cast<std::size_t>(batch.partition)];
  // Not the next batch after the last acknowledged one: retry and wait.
  if (e.unresolved_next < 0 && (batch.sequence_reset || batch.base_sequence != e.last_acked + 1)) return;
  // A real gap (or the batch right after an unresolved one): bump the epoch.
  if (e.unresolved_next < 0 || batch.base_sequence == e.unresolved_next) request_epoch_bump(e);
}

void TransactionManager::resolve_and_bump(BatchPool& pool) {
  if (!idempotent_) return;
  for (auto& e : partitions_) {
    if (e.unresolved_next < 0 || !e.incomplete.empty()) continue;
    // Drained: resolved if the batches after the expired one all succeeded.
    if (e.next_sequence - e.last_acked != 1) request_epoch_bump(e);
    e.unresolved_next = -1;
  }
  if (!bump_required_) return;
  ++epoch_;
  ++epoch_bumps_;
  for (auto& e : partitions_) {
    if (!e.rewrite) continue;
    // startSequencesAtBeginning: incomplete batches get new sequences from 0.
    std::int64_t sequence = 0;
    for (auto& [base, id] : e.incomplete) {
      ProducerBatch& b = pool[id];
      b.epoch = epoch_;
      b.base_sequence = sequence;
      b.sequence_reset = true;
      base = sequence;
      sequence += b.records;
    }
    e.epoch = epoch_;
    e.next_sequence = sequence;
    e.last_acked = -1;
    e.unresolved_next = -1;
    e.rewrite = false;
  }
  bump_required_ = false;
}

}  // namespace pipesim::producer
