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

Producer::Producer(sim::Simulation& sim, const ProducerOptions& options, bool idempotent,
                   int partitions, std::int64_t record_bytes, broker::KafkaCluster& cluster,
                   sim::Time round_trip, std::uint64_t seed)
    : sim_(sim),
      options_(options),
      idempotent_(idempotent),
      cluster_(cluster),
      one_way_{round_trip.us / 2},
      round_trip_(round_trip),
      records_per_batch_(records_per_batch(options.batch_size, record_bytes)),
      acks_(options.acks == "0"   ? 0
            : options.acks == "1" ? 1
                                  : -1),
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
  for (int p = 0; p < partitions; ++p)
    queues_[static_cast<std::size_t>(p)].known_leader = cluster.leader(p);
}

std::int64_t Producer::records_per_batch(std::int64_t batch_size, std::int64_t record_bytes) {
  // DefaultRecordBatch.RECORD_BATCH_OVERHEAD (61 bytes) and ~18 bytes of
  // per-record framing (length, attributes, deltas, key) per DefaultRecord;
  // a batch always takes its first record (MemoryRecordsBuilder.hasRoomFor).
  constexpr std::int64_t kBatchHeader = 61;
  constexpr std::int64_t kRecordOverhead = 18;
  return std::max<std::int64_t>(1, (batch_size - kBatchHeader) / (record_bytes + kRecordOverhead));
}

void Producer::send(int partition, std::int64_t first_id, std::int64_t count,
                    ledger::CopyCause cause, int resends) {
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
    for (std::size_t p = 0; p < queues_.size(); ++p)
      queues_[p].known_leader = cluster_.leader(static_cast<int>(p));
    metadata_due_ = sim::Time::max();
  }
  check_request_timeouts(now);
  expire_batches(now);
  tm_.resolve_and_bump(pool_);
}

// ---------------------------------------------------------------- the wire

// ------------------------------------------------------------- the batches

// ------------------------------------------------------------ the drain

// ------------------------------------------------------- cluster news

// ------------------------------------------------------- steady state

bool Producer::drained(int partition) const {
  const PartitionQueue& q = queues_[static_cast<std::size_t>(partition)];
  if (!q.batches.empty() || q.in_flight > 0) return false;
  for (const auto& c : connections_) {
    for (const auto& r : c.requests) {
      for (const auto& wb : r.batches) {
        if (wb.data.partition == partition && (wb.hw_pending || !r.processed) && !r.dropped)
          return false;
      }
    }
  }
  return true;
}

bool Producer::quiescent() const {
  if (!tm_.settled() || metadata_wanted_ || metadata_due_ != sim::Time::max()) return false;
  if (loss_at(sim_.now()) != nullptr || sim_.now() < tm_.ready_at()) return false;
  for (std::size_t p = 0; p < queues_.size(); ++p) {
    const PartitionQueue& q = queues_[p];
    const int leader = cluster_.leader(static_cast<int>(p));
    if (leader < 0 || q.known_leader != leader || !cluster_.alive(leader)) return false;
    for (const std::uint32_t id : q.batches) {
      const ProducerBatch& b = pool_[id];
      if (b.attempts > 0 || b.in_retry || b.appended || b.cause != ledger::CopyCause::ORIGINAL)
        return false;
    }
  }
  for (const auto& c : connections_) {
    if (c.answers_until() != sim::Time::max() || c.closed_at != sim::Time::max()) return false;
    for (const auto& r : c.requests) {
      if (r.generation != c.generation || r.answered) continue;
      if (r.lost || r.hangs || r.dropped || r.back_delay > sim::Time{} ||
          r.arrives > r.sent + one_way_)
        return false;
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
  const bool queued = std::any_of(queues_.begin(), queues_.end(),
                                  [](const PartitionQueue& q) { return !q.batches.empty(); });
  const sim::Time delivery = options_.delivery_timeout;
  for (const auto& c : connections_) {
    consider(c.closed_at);
    sim::Time prev_leave{};
    sim::Time prev_arrival{};
    bool first_unprocessed = true;
    for (const auto& r : c.requests) {
      const bool current = r.generation == c.generation;
      if (current && !r.processed && !r.dropped && first_unprocessed) {
        consider(std::max(r.arrives, prev_leave));
        first_unprocessed = false;
      }
      if (current && r.processed) prev_leave = r.leave_at;
      if (r.processed) consider(r.next_hw());
      const bool answers = current && r.processed && r.expects_response && !r.lost && !r.hangs &&
                           r.leave_at != sim::Time::max() && r.leave_at < c.answers_until();
      sim::Time arrival = sim::Time::max();
      if (answers) {
        arrival = answer_arrival(r, prev_arrival);
        prev_arrival = arrival;
      }
      if (!current || r.answered || !r.expects_response) continue;
      const bool will_answer = !r.processed || answers;  // unknown yet counts as answering
      if (answers) {
        const bool failure =
            std::any_of(r.batches.begin(), r.batches.end(), [](const WireBatch& wb) {
              return wb.result.error != ProduceError::NONE &&
                     wb.result.error != ProduceError::DUPLICATE_SEQUENCE;
            });
        // A plain success with nothing waiting is taken up by the next
        // wake-up (while taking arrivals there is one; handing over to the
        // direct feed, the answer itself must be taken up).
        if (failure || queued || !taking_) consider(arrival);
      }
      if (!will_answer || (r.processed && arrival > r.sent + options_.request_timeout)) {
        consider(r.sent + options_.request_timeout);
      }
      // The Sender wakes for the delivery timeout of a batch in flight
      // (getExpiredInflightBatches), unless its answer comes first.
      for (const auto& wb : r.batches) {
        if (wb.batch == kNoBatch || pool_[wb.batch].done) continue;
        const sim::Time deadline = pool_[wb.batch].created + delivery;
        if (!answers || arrival > deadline) consider(deadline);
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

void Producer::schedule_wake(sim::Time at) {
  if (at == sim::Time::max()) return;
  // An earlier (or equal) pending wake-up will look again.
  if (!wakes_.empty() && wakes_.back() <= at) return;
  wakes_.push_back(at);
  sim_.schedule(at, id_, kWake);
}

}  // namespace pipesim::producer
