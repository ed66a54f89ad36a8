#include "models/producer/direct_feed.h"

#include <algorithm>

#include "sim/engine/invariant.h"

namespace pipesim::producer {

DirectFeed::DirectFeed(workload::Workload& workload, ledger::Ledger& ledger,
                       broker::KafkaCluster& cluster, std::vector<broker::PartitionLog>& logs,
                       Producer& producer, sim::Time one_way)
    : workload_(workload),
      ledger_(ledger),
      cluster_(cluster),
      logs_(logs),
      producer_(producer),
      one_way_(one_way),
      parts_(logs.size()),
      hold_(logs.size(), 0) {}

void DirectFeed::start(sim::Time now, const std::vector<std::int64_t>& next_ids) {
  active_ = true;
  for (std::size_t p = 0; p < parts_.size(); ++p) {
    Partition& part = parts_[p];
    part.first_id = part.appended = part.exposed = next_ids[p];
    hold_[p] = 1;
    if (producer_.drained(static_cast<int>(p))) release(static_cast<int>(p), now);
  }
}

void DirectFeed::release(int partition, sim::Time now) {
  const auto p = static_cast<std::size_t>(partition);
  hold_[p] = 0;
  Partition& part = parts_[p];
  part.since = now;
  part.base_offset = logs_[p].log_end_offset();
  part.replication = cluster_.replication_time(partition);
  materialize(partition, now);
}

std::vector<int> DirectFeed::release_drained(sim::Time now) {
  std::vector<int> released;
  if (!active_) return released;
  for (std::size_t p = 0; p < parts_.size(); ++p) {
    if (!hold_[p] || !producer_.drained(static_cast<int>(p))) continue;
    release(static_cast<int>(p), now);
    released.push_back(static_cast<int>(p));
  }
  return released;
}

namespace {
// Arrivals before `t`, or (coarse) before the block boundary at or below it.
sim::Time arrival_bound(sim::Time t, bool coarse) {
  if (!coarse) return t;
  return sim::Time{t.us / workload::Workload::kBlock.us * workload::Workload::kBlock.us};
}
}  // namespace

std::int64_t DirectFeed::appended_by(int partition, sim::Time t, bool coarse) const {
  const Partition& part = parts_[static_cast<std::size_t>(partition)];
  if (t < part.since) return 0;
  // Appended one way after its arrival (records that arrived before the
  // release are appended at the release).
  const std::int64_t arrived =
      workload_.count_before(partition, arrival_bound(t - one_way_ + sim::Time::micros(1), coarse));
  return std::max<std::int64_t>(0, arrived - part.first_id);
}

std::int64_t DirectFeed::visible_by(int partition, sim::Time t, bool coarse) const {
  const Partition& part = parts_[static_cast<std::size_t>(partition)];
  if (t < part.since + part.replication) return 0;
  const std::int64_t arrived = workload_.count_before(
      partition, arrival_bound(t - part.replication - one_way_ + sim::Time::micros(1), coarse));
  return std::max<std::int64_t>(0, arrived - part.first_id);
}

void DirectFeed::materialize(sim::Time now) {
  for (std::size_t p = 0; p < parts_.size(); ++p) materialize(static_cast<int>(p), now);
}

void DirectFeed::materialize(int partition, sim::Time now) { write(partition, now, false); }

void DirectFeed::materialize_coarse(int partition, sim::Time now) { write(partition, now, true); }

void DirectFeed::write(int partition, sim::Time now, bool coarse) {
  const auto p = static_cast<std::size_t>(partition);
  if (!active_ || hold_[p]) return;
  Partition& part = parts_[p];
  const std::int64_t append_to = part.first_id + appended_by(partition, now, coarse);
  if (append_to > part.appended) {
    const std::int64_t count = append_to - part.appended;
    // KafkaProducer.send of the records that arrived: the ledger's ids.
    const std::int64_t produced = ledger_.produced(partition);
    if (append_to > produced) ledger_.emit(partition, append_to - produced);
    PIPESIM_INVARIANT(logs_[p].log_end_offset() == part.base_offset + (part.appended - part.first_id),
                      "the direct feed's log has another writer");
    TransactionManager& tm = producer_.transaction_manager();
    const std::int64_t sequence = tm.take_acknowledged(partition, count);
    // The batch timestamp (CreateTime) of its first record; a coarse write
    // draws no instant and takes the write time, a little later.
    const sim::Time created = coarse ? now : workload_.arrival_time(partition, part.appended);
    cluster_.append_direct(partition, part.appended, count, sequence >= 0 ? tm.producer_id() : -1,
                           tm.epoch(), sequence, created, now, append_time(partition));
    part.appended = append_to;
  }
  const std::int64_t expose_to =
      std::min(part.appended, part.first_id + visible_by(partition, now, coarse));
  if (expose_to > part.exposed) {
    cluster_.expose_direct(partition, part.base_offset + (expose_to - part.first_id));
    part.exposed = expose_to;
  }
}

std::function<sim::Time(std::int64_t)> DirectFeed::append_time(int partition) const {
  // The leader appended each record one way after its arrival (retention
  // ages the segment files by it).
  const Partition& part = parts_[static_cast<std::size_t>(partition)];
  return [this, partition, &part](std::int64_t offset) {
    const sim::Time arrival =
        workload_.arrival_time(partition, part.first_id + (offset - part.base_offset));
    return std::max(arrival + one_way_, part.since);
  };
}

std::vector<std::int64_t> DirectFeed::stop(sim::Time now) {
  std::vector<std::int64_t> next(parts_.size());
  for (std::size_t p = 0; p < parts_.size(); ++p) {
    const int partition = static_cast<int>(p);
    Partition& part = parts_[p];
    if (hold_[p]) {
      next[p] = part.first_id;  // nothing written: the exact producer takes them all
      continue;
    }
    materialize(partition, now);
    // Whatever arrived before now is written and visible now.
    const std::int64_t arrived = workload_.count_before(partition, now);
    if (arrived > part.appended) {
      const std::int64_t count = arrived - part.appended;
      const std::int64_t produced = ledger_.produced(partition);
      if (arrived > produced) ledger_.emit(partition, arrived - produced);
      TransactionManager& tm = producer_.transaction_manager();
      const std::int64_t sequence = tm.take_acknowledged(partition, count);
      cluster_.append_direct(partition, part.appended, count, sequence >= 0 ? tm.producer_id() : -1,
                             tm.epoch(), sequence, workload_.arrival_time(partition, part.appended),
                             now, append_time(partition));
      part.appended = arrived;
    }
    if (part.appended > part.exposed) {
      cluster_.expose_direct(partition, part.base_offset + (part.appended - part.first_id));
      part.exposed = part.appended;
    }
    next[p] = part.appended;
  }
  active_ = false;
  std::fill(hold_.begin(), hold_.end(), 0);
  return next;
}

sim::Time DirectFeed::visible_at(int partition, std::int64_t offset) const {
  const auto p = static_cast<std::size_t>(partition);
  if (!active_ || hold_[p]) return sim::Time::max();
  const Partition& part = parts_[p];
  if (offset < part.base_offset) return sim::Time::max();
  const std::int64_t id = part.first_id + (offset - part.base_offset);
  // A record that arrived before the workload's memory (minutes ago, asked
  // by a fetch that waited that long unanswered): visible by then at the
  // latest, which is all such a fetch's answer time needs (it is in the past).
  const sim::Time arrival = id < workload_.forgotten(partition) ? workload_.remembered_from()
                                                                : workload_.arrival_time(partition, id);
  if (arrival == sim::Time::max()) return sim::Time::max();
  return std::max(arrival + one_way_, part.since) + part.replication;
}

std::int64_t DirectFeed::high_watermark_at(int partition, sim::Time t) const {
  const auto p = static_cast<std::size_t>(partition);
  if (!active_ || hold_[p] || t < parts_[p].since) return -1;  // connect::LogView::kUnknown
  return parts_[p].base_offset + visible_by(partition, t);
}

double DirectFeed::expected_high_watermark_at(int partition, sim::Time t) const {
  const auto p = static_cast<std::size_t>(partition);
  const Partition& part = parts_[p];
  if (!active_ || hold_[p] || t < part.since + part.replication) {
    return static_cast<double>(logs_[p].high_watermark());
  }
  const double arrived = workload_.expected_count_before(partition, t - part.replication - one_way_);
  return static_cast<double>(part.base_offset) + std::max(0.0, arrived - static_cast<double>(part.first_id));
}

}  // namespace pipesim::producer
