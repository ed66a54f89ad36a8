// What the producer does with a batch that did not succeed: retries and their
// re-enqueueing, failures (delivery.timeout.ms expiry, out-of-order sequences
// under idempotence), metadata refreshes after leader moves, broker deaths and
// ISR shrinks, and a restart of the service's producer.
#include "models/producer/producer.h"

#include <algorithm>

namespace pipesim::producer {

using broker::ProduceError;

void Producer::complete(std::uint32_t id) {
  tm_.on_completed(pool_[id], id);
  pool_[id].done = true;
  pool_.release(id);
}

void Producer::late_answer(std::uint32_t id, ProduceError error) {
  const ProducerBatch& b = pool_[id];
  if (error == ProduceError::NONE || error == ProduceError::DUPLICATE_SEQUENCE) {
    // Sender.completeBatch -> handleCompletedBatch: the acknowledged sequence
    // moves (an expired batch that was written resolves its partition).
    tm_.on_completed(b, id);
    return;
  }
  // Sender.completeBatch: canRetry is false for a batch that is already done,
  // so an error answer (a disconnect is NETWORK_EXCEPTION) goes to
  // failBatch(batch, response, attempts < retries): handleFailedBatch asks
  // for an epoch bump of the partition, which re-numbers its other
  // incomplete batches, written or not (KAFKA-14034). completeExceptionally
  // then finds the batch failed already: the application hears nothing new.
  ++counters_.late_failures;
  tm_.on_failed(b, id, false, b.attempts < options_.retries);
}

void Producer::retry_or_fail(std::uint32_t id, bool out_of_order) {
  const ProducerBatch& b = pool_[id];
  // Sender.canRetry: within delivery.timeout.ms and retries.
  const bool can_retry =
      sim_.now() < b.created + options_.delivery_timeout && b.attempts < options_.retries;
  if (can_retry) {
    reenqueue(id);
  } else {
    fail(id, out_of_order, b.attempts < options_.retries, false);
  }
}

void Producer::reenqueue(std::uint32_t id) {
  ProducerBatch& b = pool_[id];
  ++b.attempts;
  b.in_retry = true;
  b.retry_at = sim_.now() + options_.retry_backoff;
  counters_.retried_records += b.records;
  auto& q = queues_[static_cast<std::size_t>(b.partition)].batches;
  // RecordAccumulator.reenqueue: at the front; with idempotence in sequence order.
  auto pos = q.begin();
  if (idempotent_ && b.has_sequence()) {
    while (pos != q.end() && pool_[*pos].has_sequence() &&
           pool_[*pos].base_sequence < b.base_sequence)
      ++pos;
  }
  q.insert(pos, id);
}

void Producer::fail(std::uint32_t id, bool out_of_order, bool adjust_sequences, bool expired) {
  ProducerBatch& b = pool_[id];
  tm_.on_failed(b, id, out_of_order, adjust_sequences);
  b.done = true;
  counters_.failed_records += b.records;
  if (expired) counters_.expired_records += b.records;
  const FailedSend failed{
      b.partition, ledger::IdRange{b.first_id, b.records}, b.cause, b.resends, expired, false};
  if (!b.in_request) pool_.release(id);
  // The callback may send again (and grow the pool): nothing of `b` after this.
  if (handler_) handler_->send_failed(failed);
}

void Producer::expire_batches(sim::Time now) {
  const sim::Time timeout = options_.delivery_timeout;
  for (auto& q : queues_) {
    // Batches wait in creation order (retries, older, first).
    while (!q.batches.empty()) {
      const std::uint32_t id = q.batches.front();
      const ProducerBatch& b = pool_[id];
      if (b.created + timeout > now) break;
      q.batches.pop_front();
      // A retried batch leaves its sequence unresolved (Sender.sendProducerData).
      if (b.in_retry) tm_.mark_unresolved(b);
      fail(id, false, false, true);
    }
  }
  for (auto& c : connections_) {
    for (auto& r : c.requests) {
      if (r.generation != c.generation || r.answered || !r.expects_response) continue;
      for (const auto& wb : r.batches) {
        if (wb.batch == kNoBatch) continue;
        const ProducerBatch& b = pool_[wb.batch];
        if (b.done || b.created + timeout > now) continue;
        expire_in_flight(wb.batch);
      }
    }
  }
}

void Producer::expire_in_flight(std::uint32_t id) {
  // Sender.getExpiredInflightBatches: a TimeoutException to the application;
  // a retried batch leaves its sequence unresolved. Its answer, when it
  // comes, is a late one (late_answer).
  if (pool_[id].in_retry) tm_.mark_unresolved(pool_[id]);
  fail(id, false, false, true);
}

void Producer::refresh_metadata(sim::Time now) {
  // Metadata updates wait retry.backoff.ms after the previous one.
  if (!metadata_wanted_ || metadata_due_ != sim::Time::max()) return;
  if (metadata_requested_once_ && now < last_metadata_request_ + options_.retry_backoff) return;
  metadata_wanted_ = false;
  metadata_requested_once_ = true;
  last_metadata_request_ = now;
  metadata_due_ = now + round_trip_;
}

void Producer::broker_died(int broker) {
  Connection& c = connections_[static_cast<std::size_t>(broker)];
  c.dead_from = std::min(c.dead_from, sim_.now());
}

void Producer::leadership_moved(int partition, int old_leader) {
  // DelayedProduce: a leader that loses the partition while an acks=all
  // append waits for the ISR answers NOT_LEADER_OR_FOLLOWER.
  const sim::Time now = sim_.now();
  Connection& c = connections_[static_cast<std::size_t>(old_leader)];
  for (auto& r : c.requests) {
    if (!r.processed || r.leave_at <= now) continue;
    bool changed = false;
    for (auto& wb : r.batches) {
      if (wb.data.partition != partition || wb.result.error != ProduceError::NONE ||
          wb.done_at <= now)
        continue;
      wb.result.error = ProduceError::NOT_LEADER_OR_FOLLOWER;
      wb.done_at = now;
      wb.hw_pending = false;
      changed = true;
    }
    if (!changed) continue;
    r.leave_at = r.processed_at;
    for (const auto& wb : r.batches) r.leave_at = std::max(r.leave_at, wb.done_at);
  }
}

void Producer::isr_shrunk(int partition) {
  // Appends that waited for a dead follower are answered now. Under acks=all
  // the DelayedProduce checks the ISR as it completes
  // (Partition.checkEnoughReplicasReachOffset, Kafka 3.7): the high
  // watermark has the append, but if the ISR is now smaller than
  // min.insync.replicas the answer is NOT_ENOUGH_REPLICAS_AFTER_APPEND. The
  // records stay in the log (consumers read them); the client retries them.
  const sim::Time now = sim_.now();
  const bool below_min = acks_ == -1 && cluster_.below_min_insync(partition);
  for (auto& c : connections_) {
    for (auto& r : c.requests) {
      if (!r.processed) continue;
      bool changed = false;
      for (auto& wb : r.batches) {
        if (wb.data.partition != partition) continue;
        if (wb.result.error != ProduceError::NONE &&
            wb.result.error != ProduceError::DUPLICATE_SEQUENCE)
          continue;
        if (below_min && wb.done_at > now && !r.answered) {
          wb.result.error = ProduceError::NOT_ENOUGH_REPLICAS_AFTER_APPEND;
          ++counters_.not_enough_replicas_after_append;
        }
        if (wb.hw_pending && wb.hw_at == sim::Time::max()) {
          wb.hw_at = now;
          changed = true;
        }
        if (wb.done_at == sim::Time::max()) {
          wb.done_at = now;
          changed = true;
        }
      }
      if (!changed) continue;
      r.leave_at = r.processed_at;
      for (const auto& wb : r.batches) r.leave_at = std::max(r.leave_at, wb.done_at);
    }
  }
}

void Producer::unowned_ids(int partition, ledger::IdRange ids,
                           std::vector<ledger::IdRange>& rest) const {
  const sim::Time now = sim_.now();
  std::vector<ledger::IdRange> owned;
  for (const std::uint32_t id : queues_[static_cast<std::size_t>(partition)].batches) {
    owned.push_back(ledger::IdRange{pool_[id].first_id, pool_[id].records});
  }
  for (const auto& c : connections_) {
    for (const auto& r : c.requests) {
      if (r.generation != c.generation || r.answered || !r.expects_response) continue;
      for (const auto& wb : r.batches) {
        if (wb.batch == kNoBatch || wb.data.partition != partition || pool_[wb.batch].done)
          continue;
        // A success already on its way to the client counts as acknowledged.
        const bool acked = r.processed && !r.lost && !r.hangs && r.leave_at <= now &&
                           r.leave_at < c.answers_until() &&
                           (wb.result.error == ProduceError::NONE ||
                            wb.result.error == ProduceError::DUPLICATE_SEQUENCE);
        if (!acked) owned.push_back(ledger::IdRange{wb.data.first_id, wb.data.records});
      }
    }
  }
  std::sort(owned.begin(), owned.end(),
            [](const ledger::IdRange& a, const ledger::IdRange& b) { return a.first < b.first; });
  std::int64_t at = ids.first;
  for (const auto& o : owned) {
    if (o.end() <= at || o.first >= ids.end()) continue;
    if (o.first > at) rest.push_back(ledger::IdRange{at, o.first - at});
    at = std::max(at, o.end());
  }
  if (at < ids.end()) rest.push_back(ledger::IdRange{at, ids.end() - at});
}

void Producer::restart() {
  const sim::Time now = sim_.now();
  std::vector<FailedSend> handed;
  const auto hand = [&](std::uint32_t id) {
    const ProducerBatch& b = pool_[id];
    if (!b.done) {
      handed.push_back(FailedSend{b.partition, ledger::IdRange{b.first_id, b.records}, b.cause,
                                  b.resends, false, false});
    }
    pool_.release(id);
  };
  // The old process's connections close: what was not read yet is lost on the wire.
  for (auto& c : connections_) {
    for (auto& r : c.requests) {
      if (r.generation != c.generation || r.answered) continue;
      r.answered = true;
      if (!r.processed && !r.dropped) r.dropped = true;
      for (auto& wb : r.batches) {
        if (wb.batch == kNoBatch) continue;
        pool_[wb.batch].in_request = false;
        hand(wb.batch);
        wb.batch = kNoBatch;
      }
    }
    ++c.generation;
    c.dead_from = sim::Time::max();
    c.stalled_from = sim::Time::max();
    c.closed_at = sim::Time::max();
    c.unanswered = 0;
  }
  for (auto& q : queues_) {
    for (const std::uint32_t id : q.batches) hand(id);
    q.batches.clear();
    q.in_flight = 0;
    q.known_leader = -1;
  }
  // The new instance: InitProducerId (a new producer id) and metadata first.
  epoch_bumps_ += tm_.epoch_bumps();
  tm_ = TransactionManager(idempotent_, static_cast<int>(queues_.size()),
                           cluster_.new_producer_id(), now + round_trip_);
  metadata_wanted_ = true;
  metadata_due_ = sim::Time::max();
  metadata_requested_once_ = false;
  ++counters_.restarts;
  std::sort(handed.begin(), handed.end(), [](const FailedSend& a, const FailedSend& b) {
    return a.partition != b.partition ? a.partition < b.partition : a.ids.first < b.ids.first;
  });
  if (handler_) {
    for (const auto& f : handed) handler_->send_failed(f);
  }
}

}  // namespace pipesim::producer
