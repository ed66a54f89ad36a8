// The producer's Sender (org.apache.kafka.clients.producer.internals.Sender):
// draining ready batches into produce requests per broker connection, within
// max.in.flight.requests.per.connection, the broker's answers, lost answers,
// closed connections and request timeouts.
#include "models/producer/producer.h"

#include <algorithm>

namespace pipesim::producer {

using broker::ProduceError;

void Producer::advance_connection(Connection& c, sim::Time now) {
  sim::Time prev_leave{};
  sim::Time prev_arrival{};
  bool blocked = false;
  for (auto& r : c.requests) {
    const bool current = r.generation == c.generation;
    if (current && !r.processed && !r.dropped && !blocked) {
      // The broker reads a connection's next request once it has arrived and
      // the previous one is answered.
      const sim::Time at = std::max(r.arrives, prev_leave);
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
        cluster_.replicated(wb.data.partition, wb.result.base_offset + wb.data.records,
                            wb.result.leader_epoch);
      }
    }
    if (current && r.processed && r.expects_response && !r.back_decided && !r.lost && !r.hangs &&
        r.leave_at <= now && r.leave_at < c.answers_until()) {
      decide_answer(c, r);
    }
    if (!current || !r.processed || !r.expects_response || r.lost || r.hangs ||
        r.leave_at >= c.answers_until() || r.leave_at == sim::Time::max()) {
      continue;
    }
    // Answers arrive in order: a late one holds up every later one.
    const sim::Time arrival = answer_arrival(r, prev_arrival);
    prev_arrival = arrival;
    // An answer after the request's timeout never reaches the Sender: the
    // connection is closed first (check_request_timeouts).
    if (r.answered || arrival > now || arrival > r.sent + options_.request_timeout) continue;
    // Sender.sendProducerData fails in-flight batches whose delivery timeout
    // passed (getExpiredInflightBatches) before client.poll hands it a later
    // answer: that answer is then a late one.
    for (const auto& wb : r.batches) {
      if (wb.batch == kNoBatch || pool_[wb.batch].done) continue;
      if (pool_[wb.batch].created + options_.delivery_timeout < arrival) expire_in_flight(wb.batch);
    }
    answer(c, r, arrival);
  }
  while (!c.requests.empty()) {
    const Request& r = c.requests.front();
    const bool broker_done =
        r.dropped || (r.processed && r.next_hw() == sim::Time::max() &&
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
        wb.hw_at = wb.result.replication == sim::Time::max() ? sim::Time::max()
                                                             : at + wb.result.replication;
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
          wb.done_at = wb.result.replication == sim::Time::max() ? sim::Time::max()
                                                                 : at + wb.result.replication;
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
    return;
  }
  if (at >= c.stalled_from) return;
  // "retransmit" (or a window that opens before the answer leaves): drawn
  // when the answer leaves (decide_answer).
  const ResponseLoss* loss = loss_at(at);
  if (loss == nullptr || loss->mode == LossMode::RETRANSMIT) return;
  r.back_decided = true;
  if (!answers_.bernoulli(loss->probability)) return;
  // The answer is lost after the broker handled the request.
  r.lost = true;
  ++counters_.lost_answers;
  if (loss->mode == LossMode::RESET) {
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

void Producer::note_written(const WireBatch& wb) {
  if (wb.batch == kNoBatch) return;
  ProducerBatch& b = pool_[wb.batch];
  b.appended = true;
  b.appended_epoch = wb.data.epoch;
  b.appended_sequence = wb.data.base_sequence;
}

void Producer::lose_silently(const WireBatch& wb) {
  if (handler_) {
    handler_->send_failed(FailedSend{wb.data.partition,
                                     ledger::IdRange{wb.data.first_id, wb.data.records},
                                     wb.data.cause, 0, false, true});
  }
}

void Producer::answer(Connection& c, Request& r, sim::Time arrival) {
  r.answered = true;
  --c.unanswered;
  // Later than its own way back: retransmitted, or held behind one that was.
  if (arrival > r.leave_at + one_way_) ++counters_.late_answers;
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
  c.last_arrival = sim::Time{};
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

bool Producer::sendable(const ProducerBatch& head, const PartitionQueue& q, sim::Time now) const {
  // RecordAccumulator.batchReady: full (another batch behind it, or no room
  // left) or waited linger.ms (retry.backoff.ms for a retry), not backing off.
  if (head.attempts > 0) return now >= head.retry_at;
  const bool full =
      q.batches.size() > 1 || head.records >= records_per_batch_ || head.has_sequence();
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
  out.data = broker::ProduceBatch{
      partition,       b.first_id,
      b.records,       b.appended ? ledger::CopyCause::PRODUCER_RETRY : b.cause,
      b.producer_id,   b.epoch,
      b.base_sequence, b.created,
      acks_ == -1,     b.resequenced_since_written()};
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
      r.arrives = now + one_way_;
      if (const ResponseLoss* loss = loss_at(now); loss != nullptr && loss->mode == LossMode::RETRANSMIT) {
        // The request's segments can be lost too: retransmitted, in order.
        bool dead = false;
        const sim::Time delay = retransmission_delay(now, dead);
        if (delay > sim::Time{}) ++counters_.late_segments;
        if (dead) {
          // The kernel gives up on the connection: the client sees the error
          // then (its socket fails) and closes it.
          r.arrives = sim::Time::max();
          c.closed_at = std::min(c.closed_at, now + delay);
        } else {
          r.arrives = std::max(now + one_way_ + delay, c.last_arrival);
        }
      }
      if (r.arrives != sim::Time::max()) c.last_arrival = std::max(c.last_arrival, r.arrives);
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

sim::Time Producer::earliest_answer(const Connection& c) const {
  // When an unanswered request of the connection is answered (or, for one
  // the broker has not read yet, when it will be read: the next look).
  sim::Time t = sim::Time::max();
  sim::Time prev_leave{};
  sim::Time prev_arrival{};
  bool first_unprocessed = true;
  for (const auto& r : c.requests) {
    const bool current = r.generation == c.generation;
    if (!current) continue;
    if (!r.processed && !r.dropped && first_unprocessed) {
      t = std::min(t, std::max(r.arrives, prev_leave));
      first_unprocessed = false;
    }
    if (r.processed) prev_leave = r.leave_at;
    if (!r.expects_response || !r.processed || r.lost || r.hangs) continue;
    if (r.leave_at == sim::Time::max() || r.leave_at >= c.answers_until()) continue;
    prev_arrival = answer_arrival(r, prev_arrival);
    if (!r.answered) t = std::min(t, prev_arrival);
  }
  return t;
}

}  // namespace pipesim::producer
