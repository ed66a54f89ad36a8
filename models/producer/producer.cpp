#include "models/producer/producer.h"

#include <algorithm>

namespace pipesim::producer {

using broker::ProduceError;

sim::Time Producer::Request::next_hw() const {
  sim::Time t = sim::Time::max();
  for (const auto& wb : batches) {
    if (wb.hw_pending) t = std::min(t, wb.hw_at);
  }
  return t;
}

Producer::Producer(sim::Simulation& sim, const ProducerOptions& options, bool idempotent, int partitions,
                   std::int64_t record_bytes, broker::KafkaCluster& cluster, sim::Time round_trip,
                   std::uint64_t seed)
    : sim_(sim),
      options_(options),
      idempotent_(idempotent),
      cluster_(cluster),
      one_way_{round_trip.us / 2},
      round_trip_(round_trip),
      records_per_batch_(records_per_batch(options.batch_size, record_bytes)),
      acks_(options.acks == "0" ? 0 : options.acks == "1" ? 1 : -1),
      id_(sim.add_component(this)),
      answers_(seed, "faults/response_loss/answers"),
      tm_(idempotent, partitions, cluster.new_producer_id(), sim::Time{}),
      queues_(static_cast<std::size_t>(partitions)) {
  next_id_.assign(static_cast<std::size_t>(partitions), 0);
  for (int b = 0; b < cluster.brokers(); ++b) {
    connections_.emplace_back();
    connections_.back().broker = b;
  }
  // bootstrap.servers: the first metadata names every leader.
  for (int p = 0; p < partitions; ++p) queues_[static_cast<std::size_t>(p)].known_leader = cluster.leader(p);
}

std::int64_t Producer::records_per_batch(std::int64_t batch_size, std::int64_t record_bytes) {
  // DefaultRecordBatch.RECORD_BATCH_OVERHEAD (61 bytes) and ~18 bytes of
  // per-record framing (length, attributes, deltas, key) per DefaultRecord;
  // a batch always takes its first record (MemoryRecordsBuilder.hasRoomFor).
  constexpr std::int64_t kBatchHeader = 61;
  constexpr std::int64_t kRecordOverhead = 18;
  return std::max<std::int64_t>(1, (batch_size - kBatchHeader) / (record_bytes + kRecordOverhead));
}

void Producer::send(int partition, std::int64_t first_id, std::int64_t count, ledger::CopyCause cause,
                    int resends) {
  // The application's send() of each record, all now: full batches, the last
  // one partly filled (it takes no arrivals: they have another cause).
  auto& q = queues_[static_cast<std::size_t>(partition)];
  for (std::int64_t done = 0; done < count;) {
    ProducerBatch b;
    b.partition = partition;
    b.first_id = first_id + done;
    b.records = std::min(records_per_batch_, count - done);
    b.cause = cause;
    b.resends = resends;
    b.created = sim_.now();
    q.batches.push_back(pool_.add(b));
    done += b.records;
  }
  counters_.records_sent += std::max<std::int64_t>(0, count);
}

void Producer::start_taking(const std::vector<std::int64_t>& next_ids) {
  taking_ = true;
  next_id_ = next_ids;
}

bool Producer::open_batch(const PartitionQueue& q) const {
  // RecordAccumulator.tryAppend: only the deque's last batch takes records,
  // while it has room and has not been drained (drain closes it).
  if (q.batches.empty()) return false;
  const ProducerBatch& b = pool_[q.batches.back()];
  return !b.in_request && !b.has_sequence() && !b.in_retry && !b.done &&
         b.cause == ledger::CopyCause::ORIGINAL && b.resends == 0 && b.records < records_per_batch_;
}

void Producer::append_arrivals(int partition, std::int64_t first, std::int64_t end) {
  auto& q = queues_[static_cast<std::size_t>(partition)];
  counters_.records_sent += end - first;
  while (first < end) {
    if (open_batch(q) && pool_[q.batches.back()].end_id() == first) {
      ProducerBatch& b = pool_[q.batches.back()];
      const std::int64_t take = std::min(end - first, records_per_batch_ - b.records);
      b.records += take;
      first += take;
      continue;
    }
    // The record that finds no open batch creates one (createdMs: its arrival).
    ProducerBatch b;
    b.partition = partition;
    b.first_id = first;
    b.records = std::min(records_per_batch_, end - first);
    b.cause = ledger::CopyCause::ORIGINAL;
    b.created = source_->arrival_of(partition, first);
    q.batches.push_back(pool_.add(b));
    first += b.records;
  }
}

void Producer::take_arrivals(sim::Time now) {
  if (!taking_ || source_ == nullptr) return;
  for (std::size_t p = 0; p < queues_.size(); ++p) {
    const int partition = static_cast<int>(p);
    // Most rounds find nothing new: the next record's instant tells at once.
    if (source_->arrival_of(partition, next_id_[p]) > now) continue;
    const std::int64_t end = source_->arrived_before(partition, now + sim::Time::micros(1));
    if (end <= next_id_[p]) continue;
    append_arrivals(partition, next_id_[p], end);
    next_id_[p] = end;
    source_->taken(partition, end);
  }
}

void Producer::handle(const sim::Event& event) {
  if (event.type != kWake) return;
  // Wake-ups fire in time order and the earliest pending one is the last.
  if (!wakes_.empty() && wakes_.back() == sim_.now()) wakes_.pop_back();
  run_sender();
}

void Producer::run_sender() {
  const sim::Time now = sim_.now();
  take_arrivals(now);
  settle(now);
  drain_and_send(now);
  schedule_wake(next_wake(now));
  if (observer_ && !taking_) observer_->sender_ran();
}

void Producer::settle(sim::Time now) {
  for (auto& c : connections_) advance_connection(c, now);
  if (metadata_due_ <= now) {
    for (std::size_t p = 0; p < queues_.size(); ++p) queues_[p].known_leader = cluster_.leader(static_cast<int>(p));
    metadata_due_ = sim::Time::max();
  }
  check_request_timeouts(now);
  expire_batches(now);
  tm_.resolve_and_bump(pool_);
}

// ---------------------------------------------------------------- the wire

void Producer::advance_connection(Connection& c, sim::Time now) {
  sim::Time prev_leave{};
  bool blocked = false;
  for (auto& r : c.requests) {
    const bool current = r.generation == c.generation;
    if (current && !r.processed && !r.dropped && !blocked) {
      // The broker reads a connection's next request once it has answered the previous one.
      const sim::Time at = std::max(r.sent + one_way_, prev_leave);
      if (at <= now) {
        process(c, r, at);
      } else {
        blocked = true;
      }
    }
    if (current && r.processed) prev_leave = r.leave_at;
    if (r.processed) {
      for (auto& wb : r.batches) {
        if (!wb.hw_pending || wb.hw_at > now) continue;
        wb.hw_pending = false;
        cluster_.replicated(wb.data.partition, wb.result.base_offset + wb.data.records, wb.result.leader_epoch);
      }
    }
    if (current && r.processed && !r.answered && r.expects_response && !r.lost && !r.hangs &&
        r.leave_at < c.answers_until() && r.leave_at != sim::Time::max() && r.leave_at + one_way_ <= now) {
      answer(c, r);
    }
  }
  while (!c.requests.empty()) {
    const Request& r = c.requests.front();
    const bool broker_done = r.dropped || (r.processed && r.next_hw() == sim::Time::max() &&
                                           std::none_of(r.batches.begin(), r.batches.end(),
                                                        [](const WireBatch& wb) { return wb.hw_pending; }));
    if (!broker_done || (!r.answered && r.expects_response)) break;
    spare_.push_back(std::move(c.requests.front().batches));  // keeps its capacity
    c.requests.pop_front();
  }
}

void Producer::process(Connection& c, Request& r, sim::Time at) {
  r.processed_at = at;
  if (at >= c.dead_from || !cluster_.alive(c.broker)) {
    // A dead broker or a broken connection: the request is never read.
    r.dropped = true;
    c.dead_from = std::min(c.dead_from, at);
    if (!r.expects_response) {
      for (const auto& wb : r.batches) lose_silently(wb);
      c.closed_at = std::min(c.closed_at, at + one_way_);  // the client sees the reset
    }
    return;
  }
  r.processed = true;
  sim::Time leave = at;
  for (auto& wb : r.batches) {
    wb.result = cluster_.produce(c.broker, wb.data, at);
    wb.done_at = at;
    switch (wb.result.error) {
      case ProduceError::NONE:
        note_written(wb);
        wb.hw_at = wb.result.replication == sim::Time::max() ? sim::Time::max() : at + wb.result.replication;
        wb.hw_pending = true;
        // acks=all: DelayedProduce answers once the ISR has the append.
        if (acks_ == -1) wb.done_at = wb.hw_at;
        break;
      case ProduceError::DUPLICATE_SEQUENCE:
        // Answered with the original's offsets once the high watermark has
        // them (the original's own request moves the high watermark). The log
        // holds an attempt with these very numbers.
        note_written(wb);
        if (acks_ == -1) {
          wb.done_at = wb.result.replication == sim::Time::max() ? sim::Time::max() : at + wb.result.replication;
        }
        break;
      case ProduceError::NO_ANSWER:
        r.hangs = true;
        break;
      default:
        break;
    }
    leave = std::max(leave, wb.done_at);
  }
  r.leave_at = leave;
  if (!r.expects_response) {
    // acks=0: a failed partition is not answered; the broker closes the
    // connection instead, so that the client refreshes its metadata.
    bool failed = false;
    for (const auto& wb : r.batches) {
      if (wb.result.error == ProduceError::NONE) continue;
      lose_silently(wb);
      failed = true;
    }
    if (failed) c.closed_at = std::min(c.closed_at, at + one_way_);
    return;
  }
  if (r.hangs) {
    c.dead_from = std::min(c.dead_from, at);  // the broker stays on this request
  } else if (r.expects_response && at < c.stalled_from && response_loss_ > 0 &&
             answers_.bernoulli(response_loss_)) {
    // The answer is lost after the broker handled the request.
    r.lost = true;
    ++counters_.lost_answers;
    if (response_loss_resets_) {
      // Reset: the connection is gone (nothing more is read from it) and the
      // client sees the RST one way later.
      c.dead_from = std::min(c.dead_from, at);
      c.closed_at = std::min(c.closed_at, at + one_way_);
    } else {
      // Stall: the way back is black-holed. The broker goes on reading and
      // handling the connection's requests (it mutes a connection only until
      // an answer is written to its socket), but no answer reaches the
      // client, this one and every later one (one TCP stream), until the
      // client gives up on the oldest at request.timeout.ms.
      c.stalled_from = std::min(c.stalled_from, at);
    }
  }
}

void Producer::note_written(const WireBatch& wb) {
  if (wb.batch == kNoBatch) return;
  ProducerBatch& b = pool_[wb.batch];
  b.appended = true;
  b.appended_epoch = wb.data.epoch;
  b.appended_sequence = wb.data.base_sequence;
}

void Producer::lose_silently(const WireBatch& wb) {
  if (handler_) {
    handler_->send_failed(FailedSend{wb.data.partition, ledger::IdRange{wb.data.first_id, wb.data.records},
                                     wb.data.cause, 0, false, true});
  }
}

void Producer::answer(Connection& c, Request& r) {
  r.answered = true;
  --c.unanswered;
  for (const auto& wb : r.batches) {
    if (wb.batch == kNoBatch) continue;
    const std::uint32_t id = wb.batch;
    ProducerBatch& b = pool_[id];
    b.in_request = false;
    --queues_[static_cast<std::size_t>(b.partition)].in_flight;
    if (b.done) {  // failed by delivery.timeout.ms while in flight: a late answer
      late_answer(id, wb.result.error);
      pool_.release(id);
      continue;
    }
    switch (wb.result.error) {
      case ProduceError::NONE:
      case ProduceError::DUPLICATE_SEQUENCE:
        complete(id);
        break;
      case ProduceError::NOT_LEADER_OR_FOLLOWER:
        metadata_wanted_ = true;  // InvalidMetadataException: metadata.requestUpdate()
        retry_or_fail(id, false);
        break;
      case ProduceError::NOT_ENOUGH_REPLICAS:
      case ProduceError::NOT_ENOUGH_REPLICAS_AFTER_APPEND:  // written, yet retried
        retry_or_fail(id, false);
        break;
      case ProduceError::OUT_OF_ORDER_SEQUENCE_NUMBER:
        tm_.on_out_of_order(b);
        retry_or_fail(id, true);
        break;
      case ProduceError::INVALID_PRODUCER_EPOCH:
        fail(id, false, b.attempts < options_.retries, false);
        break;
      case ProduceError::NO_ANSWER:
      case ProduceError::NETWORK_EXCEPTION:
        PIPESIM_INVARIANT(false, "an answer from a hung leader");
    }
  }
}

void Producer::close_connection(Connection& c) {
  // NetworkClient: the connection is closed and every request on it fails
  // as disconnected (retriable); the next request opens a new connection.
  for (auto& r : c.requests) {
    if (r.generation != c.generation || r.answered) continue;
    r.answered = true;
    if (!r.processed && !r.dropped) {
      r.dropped = true;
      if (!r.expects_response) {
        for (const auto& wb : r.batches) lose_silently(wb);
      }
    }
    if (!r.expects_response) continue;
    for (const auto& wb : r.batches) {
      if (wb.batch == kNoBatch) continue;
      ProducerBatch& b = pool_[wb.batch];
      b.in_request = false;
      --queues_[static_cast<std::size_t>(b.partition)].in_flight;
      if (b.done) {
        late_answer(wb.batch, ProduceError::NETWORK_EXCEPTION);
        pool_.release(wb.batch);
      } else {
        retry_or_fail(wb.batch, false);
      }
    }
  }
  ++c.generation;
  c.dead_from = sim::Time::max();
  c.stalled_from = sim::Time::max();
  c.closed_at = sim::Time::max();
  c.unanswered = 0;
  metadata_wanted_ = true;  // handleServerDisconnect
}

void Producer::check_request_timeouts(sim::Time now) {
  for (auto& c : connections_) {
    if (c.closed_at <= now) {
      close_connection(c);
      continue;
    }
    for (const auto& r : c.requests) {
      if (r.generation != c.generation || r.answered || !r.expects_response) continue;
      // The oldest unanswered request decides (handleTimedOutRequests).
      if (r.sent + options_.request_timeout <= now) {
        ++counters_.request_timeouts;
        close_connection(c);
      }
      break;
    }
  }
}

// ------------------------------------------------------------- the batches

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
  const bool can_retry = sim_.now() < b.created + options_.delivery_timeout && b.attempts < options_.retries;
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
    while (pos != q.end() && pool_[*pos].has_sequence() && pool_[*pos].base_sequence < b.base_sequence) ++pos;
  }
  q.insert(pos, id);
}

void Producer::fail(std::uint32_t id, bool out_of_order, bool adjust_sequences, bool expired) {
  ProducerBatch& b = pool_[id];
  tm_.on_failed(b, id, out_of_order, adjust_sequences);
  b.done = true;
  counters_.failed_records += b.records;
  if (expired) counters_.expired_records += b.records;
  const FailedSend failed{b.partition, ledger::IdRange{b.first_id, b.records}, b.cause, b.resends, expired, false};
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
        if (b.in_retry) tm_.mark_unresolved(b);
        fail(wb.batch, false, false, true);  // getExpiredInflightBatches
      }
    }
  }
}

// ------------------------------------------------------------ the drain

bool Producer::sendable(const ProducerBatch& head, const PartitionQueue& q, sim::Time now) const {
  // RecordAccumulator.batchReady: full (another batch behind it, or no room
  // left) or waited linger.ms (retry.backoff.ms for a retry), not backing off.
  if (head.attempts > 0) return now >= head.retry_at;
  const bool full = q.batches.size() > 1 || head.records >= records_per_batch_ || head.has_sequence();
  return full || now >= head.created + options_.linger;
}

bool Producer::can_send(const Connection& c) const {
  // InFlightRequests.canSendMore; acks=0 requests are done once written.
  return acks_ == 0 || c.unanswered < options_.max_in_flight_requests_per_connection;
}

bool Producer::drain_one(int partition, sim::Time now, WireBatch& out) {
  PartitionQueue& q = queues_[static_cast<std::size_t>(partition)];
  if (q.batches.empty()) return false;
  // max.in.flight.requests.per.connection=1 mutes a partition with a batch in flight.
  if (options_.max_in_flight_requests_per_connection == 1 && q.in_flight > 0) return false;
  const std::uint32_t id = q.batches.front();
  {
    const ProducerBatch& b = pool_[id];
    if (b.retry_at > now || !tm_.may_drain(b, now)) return false;
  }
  q.batches.pop_front();
  tm_.assign_sequence(pool_[id], id);
  ProducerBatch& b = pool_[id];
  b.in_request = true;
  ++q.in_flight;
  out.batch = id;
  // An attempt of this batch was already written: this append would be an extra copy.
  out.data = broker::ProduceBatch{partition,     b.first_id, b.records,
                                  b.appended ? ledger::CopyCause::PRODUCER_RETRY : b.cause,
                                  b.producer_id, b.epoch,    b.base_sequence,
                                  b.created,     acks_ == -1, b.resequenced_since_written()};
  return true;
}

void Producer::drain_and_send(sim::Time now) {
  bool any = false;
  for (auto& q : queues_) {
    if (q.batches.empty()) continue;
    any = true;
    if (q.known_leader < 0) metadata_wanted_ = true;  // unknown leader
  }
  for (auto& c : connections_) {
    if (!any) break;
    while (can_send(c)) {
      // Sender.sendProducerData: the node is ready when one of its
      // partitions' head batches is sendable; the request then carries the
      // head batch of each of its partitions that may be drained.
      bool ready = false;
      for (const auto& q : queues_) {
        if (q.known_leader != c.broker || q.batches.empty()) continue;
        if (sendable(pool_[q.batches.front()], q, now)) {
          ready = true;
          break;
        }
      }
      if (!ready) break;
      drained_.clear();
      for (std::size_t p = 0; p < queues_.size(); ++p) {
        if (queues_[p].known_leader != c.broker) continue;
        WireBatch wb;
        if (drain_one(static_cast<int>(p), now, wb)) drained_.push_back(wb);
      }
      if (drained_.empty()) break;
      Request r;
      r.generation = c.generation;
      r.sent = now;
      r.expects_response = acks_ != 0;
      if (!spare_.empty()) {
        r.batches = std::move(spare_.back());
        spare_.pop_back();
      }
      r.batches.assign(drained_.begin(), drained_.end());
      ++counters_.requests;
      if (acks_ == 0) {
        // No answer expected: the batches complete when the request is sent.
        for (auto& wb : r.batches) {
          ProducerBatch& b = pool_[wb.batch];
          b.in_request = false;
          --queues_[static_cast<std::size_t>(b.partition)].in_flight;
          complete(wb.batch);
          wb.batch = kNoBatch;
        }
      } else {
        ++c.unanswered;
      }
      c.requests.push_back(std::move(r));
    }
  }
  refresh_metadata(now);
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

// ------------------------------------------------------- cluster news

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
      if (wb.data.partition != partition || wb.result.error != ProduceError::NONE || wb.done_at <= now) continue;
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
        if (wb.result.error != ProduceError::NONE && wb.result.error != ProduceError::DUPLICATE_SEQUENCE) continue;
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

void Producer::unowned_ids(int partition, ledger::IdRange ids, std::vector<ledger::IdRange>& rest) const {
  const sim::Time now = sim_.now();
  std::vector<ledger::IdRange> owned;
  for (const std::uint32_t id : queues_[static_cast<std::size_t>(partition)].batches) {
    owned.push_back(ledger::IdRange{pool_[id].first_id, pool_[id].records});
  }
  for (const auto& c : connections_) {
    for (const auto& r : c.requests) {
      if (r.generation != c.generation || r.answered || !r.expects_response) continue;
      for (const auto& wb : r.batches) {
        if (wb.batch == kNoBatch || wb.data.partition != partition || pool_[wb.batch].done) continue;
        // A success already on its way to the client counts as acknowledged.
        const bool acked = r.processed && !r.lost && !r.hangs && r.leave_at <= now && r.leave_at < c.answers_until() &&
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
      handed.push_back(FailedSend{b.partition, ledger::IdRange{b.first_id, b.records}, b.cause, b.resends, false,
                                  false});
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
  tm_ = TransactionManager(idempotent_, static_cast<int>(queues_.size()), cluster_.new_producer_id(),
                           now + round_trip_);
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

// ------------------------------------------------------- steady state

bool Producer::drained(int partition) const {
  const PartitionQueue& q = queues_[static_cast<std::size_t>(partition)];
  if (!q.batches.empty() || q.in_flight > 0) return false;
  for (const auto& c : connections_) {
    for (const auto& r : c.requests) {
      for (const auto& wb : r.batches) {
        if (wb.data.partition == partition && (wb.hw_pending || !r.processed) && !r.dropped) return false;
      }
    }
  }
  return true;
}

bool Producer::quiescent() const {
  if (!tm_.settled() || metadata_wanted_ || metadata_due_ != sim::Time::max()) return false;
  if (response_loss_ > 0 || sim_.now() < tm_.ready_at()) return false;
  for (std::size_t p = 0; p < queues_.size(); ++p) {
    const PartitionQueue& q = queues_[p];
    const int leader = cluster_.leader(static_cast<int>(p));
    if (leader < 0 || q.known_leader != leader || !cluster_.alive(leader)) return false;
    for (const std::uint32_t id : q.batches) {
      const ProducerBatch& b = pool_[id];
      if (b.attempts > 0 || b.in_retry || b.appended || b.cause != ledger::CopyCause::ORIGINAL) return false;
    }
  }
  for (const auto& c : connections_) {
    if (c.answers_until() != sim::Time::max() || c.closed_at != sim::Time::max()) return false;
    for (const auto& r : c.requests) {
      if (r.generation != c.generation || r.answered) continue;
      if (r.lost || r.hangs || r.dropped) return false;
      for (const auto& wb : r.batches) {
        if (wb.batch != kNoBatch && pool_[wb.batch].attempts > 0) return false;
        if (r.processed && wb.result.error != ProduceError::NONE) return false;
      }
      if (r.processed && r.leave_at == sim::Time::max()) return false;
    }
  }
  return true;
}

// ------------------------------------------------------------ wake-ups

sim::Time Producer::next_wake(sim::Time now) const {
  sim::Time t = sim::Time::max();
  const auto consider = [&t, now](sim::Time x) {
    if (x > now) t = std::min(t, x);
  };
  const bool queued = std::any_of(queues_.begin(), queues_.end(), [](const PartitionQueue& q) { return !q.batches.empty(); });
  const sim::Time delivery = options_.delivery_timeout;
  for (const auto& c : connections_) {
    consider(c.closed_at);
    sim::Time prev_leave{};
    bool first_unprocessed = true;
    for (const auto& r : c.requests) {
      const bool current = r.generation == c.generation;
      if (current && !r.processed && !r.dropped && first_unprocessed) {
        consider(std::max(r.sent + one_way_, prev_leave));
        first_unprocessed = false;
      }
      if (current && r.processed) prev_leave = r.leave_at;
      if (r.processed) consider(r.next_hw());
      if (!current || r.answered || !r.expects_response) continue;
      const bool answers = r.processed && !r.lost && !r.hangs && r.leave_at != sim::Time::max() &&
                           r.leave_at < c.answers_until();
      const bool will_answer = !r.processed || answers;  // unknown yet counts as answering
      if (answers) {
        const bool failure = std::any_of(r.batches.begin(), r.batches.end(), [](const WireBatch& wb) {
          return wb.result.error != ProduceError::NONE && wb.result.error != ProduceError::DUPLICATE_SEQUENCE;
        });
        // A plain success with nothing waiting is taken up by the next
        // wake-up (while taking arrivals there is one; handing over to the
        // direct feed, the answer itself must be taken up).
        if (failure || queued || !taking_) consider(r.leave_at + one_way_);
      }
      if (!will_answer || (r.processed && r.leave_at + one_way_ > r.sent + options_.request_timeout)) {
        consider(r.sent + options_.request_timeout);
        for (const auto& wb : r.batches) {
          if (wb.batch != kNoBatch && !pool_[wb.batch].done) consider(pool_[wb.batch].created + delivery);
        }
      }
    }
  }
  if (metadata_due_ != sim::Time::max()) {
    consider(metadata_due_);
  } else if (metadata_wanted_) {
    consider(last_metadata_request_ + options_.retry_backoff);
  }
  for (std::size_t p = 0; p < queues_.size(); ++p) {
    const PartitionQueue& q = queues_[p];
    const int partition = static_cast<int>(p);
    if (!q.batches.empty()) {
      const ProducerBatch& b = pool_[q.batches.front()];
      consider(b.created + delivery);
      consider(b.retry_at);
      if (!sendable(b, q, now)) {
        consider(b.created + options_.linger);
        // The record that finds the batch full creates the next one, and the
        // head is sendable (KafkaProducer.doSend: batchIsFull wakes the Sender).
        if (taking_ && q.batches.size() == 1 && open_batch(q)) {
          consider(source_->arrival_of(partition, b.first_id + records_per_batch_));
        }
      }
      if (idempotent_) consider(tm_.ready_at());
      continue;
    }
    if (!taking_ || source_ == nullptr || q.known_leader < 0) continue;
    // The next record creates a batch and wakes the Sender (newBatchCreated);
    // it goes once its connection has room (or its partition is unmuted).
    sim::Time at = source_->arrival_of(partition, next_id_[p]);
    if (at == sim::Time::max()) continue;
    const Connection& c = connections_[static_cast<std::size_t>(q.known_leader)];
    const bool muted = options_.max_in_flight_requests_per_connection == 1 && q.in_flight > 0;
    if (!can_send(c) || muted) at = std::max(at, earliest_answer(c));
    consider(at);
  }
  return t;
}

sim::Time Producer::earliest_answer(const Connection& c) const {
  // When an unanswered request of the connection is answered (or, for one
  // the broker has not read yet, when it will be read: the next look).
  sim::Time t = sim::Time::max();
  sim::Time prev_leave{};
  bool first_unprocessed = true;
  for (const auto& r : c.requests) {
    const bool current = r.generation == c.generation;
    if (!current) continue;
    if (!r.processed && !r.dropped && first_unprocessed) {
      t = std::min(t, std::max(r.sent + one_way_, prev_leave));
      first_unprocessed = false;
    }
    if (r.processed) prev_leave = r.leave_at;
    if (r.answered || !r.expects_response || !r.processed || r.lost || r.hangs) continue;
    if (r.leave_at == sim::Time::max() || r.leave_at >= c.answers_until()) continue;
    t = std::min(t, r.leave_at + one_way_);
  }
  return t;
}

void Producer::schedule_wake(sim::Time at) {
  if (at == sim::Time::max()) return;
  // An earlier (or equal) pending wake-up will look again.
  if (!wakes_.empty() && wakes_.back() <= at) return;
  wakes_.push_back(at);
  sim_.schedule(at, id_, kWake);
}

}  // namespace pipesim::producer
