#include "models/broker/kafka_cluster.h"

#include <algorithm>

#include "sim/engine/invariant.h"

namespace pipesim::broker {

KafkaCluster::KafkaCluster(sim::Simulation& sim, const KafkaOptions& options,
                           std::vector<PartitionLog>& logs, ledger::Ledger& ledger)
    : sim_(sim),
      options_(options),
      logs_(logs),
      ledger_(ledger),
      id_(sim.add_component(this)),
      alive_(static_cast<std::size_t>(options.brokers), true),
      fenced_(static_cast<std::size_t>(options.brokers), false),
      shrink_due_(static_cast<std::size_t>(options.brokers), sim::Time::max()),
      fence_due_(static_cast<std::size_t>(options.brokers), sim::Time::max()),
      restart_due_(static_cast<std::size_t>(options.brokers), sim::Time::max()) {
  const auto rf = static_cast<std::size_t>(options.replication_factor);
  for (std::int64_t p = 0; p < options.num_partitions; ++p) {
    Partition part(options.producer_id_expiration, options.producer_id_expiration_check_interval);
    for (std::size_t i = 0; i < rf; ++i) {
      part.replicas.push_back(
          static_cast<int>((p + static_cast<std::int64_t>(i)) % options.brokers));
    }
    part.in_isr.assign(rf, 1);
    part.stale_end.assign(rf, 0);
    part.leader = part.replicas[0];
    partitions_.push_back(std::move(part));
  }
}

void KafkaCluster::start(sim::Time horizon) {
  horizon_ = horizon;
  // Nothing can expire within the run: no retention checks at all.
  if (options_.retention < horizon && options_.log_retention_check_interval < horizon) {
    sim_.schedule(options_.log_retention_check_interval, id_, kRetention);
  }
}

std::size_t KafkaCluster::slot_of(const Partition& p, int broker) const {
  const auto it = std::find(p.replicas.begin(), p.replicas.end(), broker);
  return static_cast<std::size_t>(it - p.replicas.begin());
}

bool KafkaCluster::following(const Partition& p, int broker) const {
  const std::size_t slot = slot_of(p, broker);
  return slot < p.replicas.size() && p.in_isr[slot] && alive(broker) && p.leader >= 0 &&
         p.leader != broker && alive(p.leader);
}

std::int64_t KafkaCluster::follower_end(const Partition& p, std::size_t index) const {
  // The followers have every append older than half the replication latency.
  const sim::Time half{options_.replication_latency.us / 2};
  for (const auto& [at, end_before] : p.recent) {
    if (at + half > sim_.now()) return end_before;
  }
  return logs_[index].log_end_offset();
}

std::int64_t KafkaCluster::replica_end(const Partition& p, std::size_t index,
                                       std::size_t slot) const {
  const int b = p.replicas[slot];
  if (b == p.leader && alive(b)) return logs_[index].log_end_offset();
  if (following(p, b)) return follower_end(p, index);
  return p.stale_end[slot];
}

void KafkaCluster::freeze_ends(std::size_t index) {
  Partition& p = partitions_[index];
  for (std::size_t s = 0; s < p.replicas.size(); ++s) p.stale_end[s] = replica_end(p, index, s);
}

int KafkaCluster::isr_size(const Partition& p) const {
  return static_cast<int>(std::count(p.in_isr.begin(), p.in_isr.end(), 1));
}

bool KafkaCluster::isr_has_dead_member(const Partition& p) const {
  for (std::size_t s = 0; s < p.replicas.size(); ++s) {
    if (p.in_isr[s] && !alive(p.replicas[s])) return true;
  }
  return false;
}

int KafkaCluster::choose_leader(const Partition& p, int exclude, bool allow_unclean,
                                bool& unclean) const {
  unclean = false;
  const auto usable = [&](std::size_t s) {
    const int b = p.replicas[s];
    return b != exclude && alive(b) && !fenced_[static_cast<std::size_t>(b)];
  };
  for (std::size_t s = 0; s < p.replicas.size(); ++s) {
    if (usable(s) && p.in_isr[s]) return static_cast<int>(s);
  }
  if (allow_unclean) {
    for (std::size_t s = 0; s < p.replicas.size(); ++s) {
      if (usable(s)) {
        unclean = true;
        return static_cast<int>(s);
      }
    }
  }
  return -1;
}

ledger::CopyCause KafkaCluster::retry_path(const ProduceBatch& batch, SequenceCheck checked,
                                           const ProducerStateManager& producers) {
  // An attempt of this batch was written before: how this one got past the
  // producer state (docs/model.md §10's paths).
  if (batch.producer_id < 0) return ledger::CopyCause::RETRY_NOT_IDEMPOTENT;
  // Re-numbered by an epoch bump (TransactionManager.startSequencesAtBeginning):
  // the broker cannot know it holds these records already (KAFKA-14034).
  if (batch.resequenced) return ledger::CopyCause::RETRY_EPOCH_BUMP;
  // The same numbers passed the sequence check: the broker forgot the
  // producer (now, or earlier and the state was rebuilt by the retries
  // before this one), or the written attempt was truncated away with its
  // part of the state.
  if (checked == SequenceCheck::APPEND_EXPIRED_PRODUCER ||
      producers.expired_once(batch.producer_id)) {
    return ledger::CopyCause::RETRY_PRODUCER_ID_EXPIRED;
  }
  return ledger::CopyCause::RETRY_AFTER_TRUNCATION;
}

ProduceResult KafkaCluster::produce(int broker, const ProduceBatch& batch, sim::Time at) {
  const auto index = static_cast<std::size_t>(batch.partition);
  Partition& p = partitions_[index];
  PartitionLog& log = logs_[index];
  ProduceResult r;
  r.leader_epoch = p.leader_epoch;
  if (p.leader != broker) {
    r.error = ProduceError::NOT_LEADER_OR_FOLLOWER;
    return r;
  }
  if (p.hung) {
    r.error = ProduceError::NO_ANSWER;
    return r;
  }
  // Partition.appendRecordsToLeader: acks=all needs min.insync.replicas in the ISR.
  if (batch.acks_all && below_min_insync(p)) {
    r.error = ProduceError::NOT_ENOUGH_REPLICAS;
    return r;
  }
  ledger::CopyCause cause = batch.cause;
  SequenceCheck checked = SequenceCheck::APPEND;
  if (batch.producer_id >= 0) {
    std::int64_t duplicate_offset = -1;
    sim::Time duplicate_appended_at{};
    checked = p.producers.check(batch.producer_id, batch.epoch, batch.base_sequence,
                                batch.base_sequence + batch.records - 1, at, duplicate_offset,
                                duplicate_appended_at);
    switch (checked) {
      case SequenceCheck::DUPLICATE:
        r.error = ProduceError::DUPLICATE_SEQUENCE;
        r.base_offset = duplicate_offset;
        // The answer carries the original's offsets, and with acks=all the
        // DelayedProduce waits for the high watermark to pass them
        // (ReplicaManager.appendRecords: requiredOffset = lastOffset + 1).
        if (!batch.acks_all || duplicate_offset + batch.records <= log.high_watermark()) {
          r.replication = sim::Time{};
        } else if (isr_has_dead_member(p)) {
          r.replication = sim::Time::max();
        } else {
          r.replication =
              std::max(sim::Time{}, duplicate_appended_at + replication_time(batch.partition) - at);
        }
        return r;
      case SequenceCheck::OUT_OF_ORDER:
        r.error = ProduceError::OUT_OF_ORDER_SEQUENCE_NUMBER;
        return r;
      case SequenceCheck::FENCED_EPOCH:
        r.error = ProduceError::INVALID_PRODUCER_EPOCH;
        return r;
      case SequenceCheck::APPEND:
      case SequenceCheck::APPEND_NEW_EPOCH:
      case SequenceCheck::APPEND_UNKNOWN_PRODUCER:
      case SequenceCheck::APPEND_EXPIRED_PRODUCER:
        break;
    }
  }
  if (cause == ledger::CopyCause::PRODUCER_RETRY) cause = retry_path(batch, checked, p.producers);
  const sim::Time half{options_.replication_latency.us / 2};
  while (!p.recent.empty() && p.recent.front().first + half <= at) p.recent.pop_front();
  p.recent.emplace_back(at, log.log_end_offset());
  r.base_offset = log.append(batch.first_id, batch.records, cause, at);
  if (batch.producer_id >= 0) {
    p.producers.on_append(batch.producer_id, batch.epoch, batch.base_sequence,
                          batch.base_sequence + batch.records - 1, r.base_offset, batch.created,
                          at);
  }
  counters_.appended_records += batch.records;
  if (isr_has_dead_member(p)) {
    r.replication =
        sim::Time::max();  // the high watermark waits for the dead follower to leave the ISR
  } else {
    r.replication = isr_size(p) > 1 ? options_.replication_latency : sim::Time{};
  }
  return r;
}

std::int64_t KafkaCluster::append_direct(
    int partition, std::int64_t first_id, std::int64_t count, std::int64_t producer_id, int epoch,
    std::int64_t base_sequence, sim::Time created, sim::Time at,
    const std::function<sim::Time(std::int64_t)>& append_time) {
  const auto index = static_cast<std::size_t>(partition);
  Partition& p = partitions_[index];
  PartitionLog& log = logs_[index];
  PIPESIM_INVARIANT(p.leader >= 0 && alive(p.leader), "a direct append without a live leader");
  const sim::Time half{options_.replication_latency.us / 2};
  while (!p.recent.empty() && p.recent.front().first + half <= at) p.recent.pop_front();
  p.recent.emplace_back(at, log.log_end_offset());
  const std::int64_t base =
      log.append(first_id, count, ledger::CopyCause::ORIGINAL, at, &append_time);
  if (producer_id >= 0) {
    p.producers.on_append(producer_id, epoch, base_sequence, base_sequence + count - 1, base,
                          created, at);
  }
  counters_.appended_records += count;
  return base;
}

void KafkaCluster::expose_direct(int partition, std::int64_t end_offset) {
  logs_[static_cast<std::size_t>(partition)].advance_high_watermark(end_offset);
}

bool KafkaCluster::healthy() const {
  for (std::size_t b = 0; b < alive_.size(); ++b) {
    if (!alive_[b] || fenced_[b]) return false;
  }
  for (const auto& p : partitions_) {
    if (p.leader < 0 || p.hung || p.stepped_down >= 0 || p.election_due != sim::Time::max())
      return false;
    if (std::find(p.in_isr.begin(), p.in_isr.end(), 0) != p.in_isr.end()) return false;
  }
  return true;
}

sim::Time KafkaCluster::next_planned_change() const {
  sim::Time t = balance_scheduled_ ? balance_due_ : sim::Time::max();
  for (const auto& p : partitions_) t = std::min(t, p.election_due);
  for (std::size_t b = 0; b < alive_.size(); ++b) {
    t = std::min({t, shrink_due_[b], fence_due_[b], restart_due_[b]});
  }
  return t;
}

sim::Time KafkaCluster::replication_time(int partition) const {
  const Partition& p = partitions_[static_cast<std::size_t>(partition)];
  return isr_size(p) > 1 ? options_.replication_latency : sim::Time{};
}

void KafkaCluster::replicated(int partition, std::int64_t end_offset, std::uint32_t leader_epoch) {
  const auto index = static_cast<std::size_t>(partition);
  const Partition& p = partitions_[index];
  if (p.leader_epoch != leader_epoch || p.leader < 0 || !alive(p.leader)) return;
  if (logs_[index].advance_high_watermark(end_offset) && listener_)
    listener_->records_visible(partition);
}

void KafkaCluster::update_high_watermark(std::size_t index) {
  const Partition& p = partitions_[index];
  if (p.leader < 0 || !alive(p.leader)) return;
  std::int64_t hw = logs_[index].log_end_offset();
  for (std::size_t s = 0; s < p.replicas.size(); ++s) {
    if (p.in_isr[s]) hw = std::min(hw, replica_end(p, index, s));
  }
  if (logs_[index].advance_high_watermark(hw) && listener_)
    listener_->records_visible(static_cast<int>(index));
}

void KafkaCluster::elect(std::size_t index, int slot, bool unclean) {
  Partition& p = partitions_[index];
  PartitionLog& log = logs_[index];
  const int old = p.leader;
  const int chosen = p.replicas[static_cast<std::size_t>(slot)];
  freeze_ends(index);
  if (old >= 0 && old != chosen && alive(old) && listener_)
    listener_->leadership_moved(static_cast<int>(index), old);
  const std::int64_t new_end = p.stale_end[static_cast<std::size_t>(slot)];
  if (new_end < log.log_end_offset()) {
    // The new leader lacks the tail: every replica truncates to its end.
    scratch_.clear();
    log.truncate(new_end, scratch_);
    p.producers.truncate(new_end);
    for (const auto& piece : scratch_) counters_.truncated_records += piece.ids.count;
    if (listener_) listener_->log_truncated(static_cast<int>(index), new_end, scratch_);
  }
  p.leader = chosen;
  ++p.leader_epoch;
  p.hung = false;
  p.stepped_down = -1;
  p.election_due = sim::Time::max();
  p.recent.clear();
  for (auto& e : p.stale_end) e = std::min(e, new_end);
  if (unclean) {
    // PartitionChangeBuilder: an unclean election sets the ISR to the new leader alone.
    std::fill(p.in_isr.begin(), p.in_isr.end(), 0);
    ++counters_.unclean_elections;
  }
  p.in_isr[static_cast<std::size_t>(slot)] = 1;
  // Live replicas fetch from the new leader, truncate to its log and catch up
  // (model: at once), so they are (again) in the ISR.
  for (std::size_t s = 0; s < p.replicas.size(); ++s) {
    const int b = p.replicas[s];
    if (alive(b) && !fenced_[static_cast<std::size_t>(b)]) p.in_isr[s] = 1;
  }
  ++counters_.leader_elections;
  update_high_watermark(index);
  if (listener_) listener_->leader_elected(static_cast<int>(index));
  schedule_balance();
}

// __consumer_offsets partition k (model: created with its replicas at
// brokers k, k+1, ... mod brokers, the first the leader; the real placement
// starts at a random broker). Its leader is the first replica that is not
// fenced: a crashed leader is named (and answers nothing) until the
// controller fences it, then another replica leads and the coordinator is
// back. A replica back from a restart leads again at once (the real one
// waits for the preferred-leader election): declared, it matters only for
// a second crash within leader.imbalance.check.interval.seconds.
bool KafkaCluster::group_coordinator_available(int offsets_partition) const {
  const std::int64_t replicas =
      std::min(options_.offsets_topic_replication_factor, options_.brokers);
  for (std::int64_t r = 0; r < replicas; ++r) {
    const auto b = static_cast<std::size_t>((offsets_partition + r) % options_.brokers);
    if (!fenced_[b]) return alive_[b];
  }
  return false;  // every replica fenced: the partition is offline
}

void KafkaCluster::retention_check() {
  if (listener_) listener_->before_change();
  const sim::Time cutoff = sim_.now() - options_.retention;
  for (std::size_t i = 0; i < partitions_.size(); ++i) {
    scratch_.clear();
    // The producer states stay: retention does not drop them (3.7
    // onLogStartOffsetIncremented), only producer.id.expiration.ms does.
    logs_[i].delete_segment_files_before(cutoff, scratch_);
    for (const auto& piece : scratch_) {
      ledger_.record_mark(static_cast<int>(i), piece.ids, ledger::LossCause::RETENTION_EXPIRED);
      counters_.retention_deleted_records += piece.ids.count;
    }
  }
  const sim::Time next = sim_.now() + options_.log_retention_check_interval;
  if (next < horizon_) sim_.schedule(next, id_, kRetention);
}

void KafkaCluster::schedule_balance() {
  if (!options_.auto_leader_rebalance_enable || balance_scheduled_) return;
  const bool imbalanced =
      std::any_of(partitions_.begin(), partitions_.end(),
                  [](const Partition& p) { return p.leader >= 0 && p.leader != p.replicas[0]; });
  if (!imbalanced) return;
  balance_scheduled_ = true;
  balance_due_ = sim_.now() + sim::Time::seconds(options_.leader_imbalance_check_interval_seconds);
  sim_.schedule(balance_due_, id_, kBalance);
  if (listener_) listener_->change_planned(balance_due_);
}

void KafkaCluster::balance_leaders() {
  balance_scheduled_ = false;
  balance_due_ = sim::Time::max();
  if (listener_) listener_->before_change();
  // ReplicationControlManager.maybeBalancePartitionLeaders: a PREFERRED
  // election, which succeeds when the preferred replica is live and in the ISR.
  for (std::size_t i = 0; i < partitions_.size(); ++i) {
    Partition& p = partitions_[i];
    const int preferred = p.replicas[0];
    if (p.leader < 0 || p.leader == preferred || p.hung || p.stepped_down >= 0) continue;
    if (!alive(p.leader) || !alive(preferred) || fenced_[static_cast<std::size_t>(preferred)] ||
        !p.in_isr[0])
      continue;
    elect(i, 0, false);
  }
  schedule_balance();
}

void KafkaCluster::handle(const sim::Event& event) {
  const auto b = static_cast<std::size_t>(event.arg);
  const sim::Time now = sim_.now();
  switch (event.type) {
    case kIsrShrink:
      if (shrink_due_[b] != now) return;
      shrink_due_[b] = sim::Time::max();
      if (listener_) listener_->before_change();
      shrink_isr(static_cast<int>(b));
      return;
    case kFence:
      if (fence_due_[b] != now) return;
      fence_due_[b] = sim::Time::max();
      fence(static_cast<int>(b));
      return;
    case kRestart:
      if (restart_due_[b] != now) return;
      restart_due_[b] = sim::Time::max();
      restart(static_cast<int>(b));
      return;
    case kElection: {
      Partition& p = partitions_[b];
      if (p.election_due != now) return;
      if (listener_) listener_->before_change();
      const int old = p.stepped_down;
      bool unclean = false;
      int slot = choose_leader(p, old, false, unclean);
      // Nobody else in the ISR: the old leader takes the partition back.
      if (slot < 0) slot = choose_leader(p, -1, options_.unclean_leader_election_enable, unclean);
      if (slot >= 0) {
        elect(b, slot, unclean);
      } else {
        p.hung = false;
        p.stepped_down = -1;
        p.election_due = sim::Time::max();
        if (p.leader >= 0) {
          freeze_ends(b);
          p.leader = -1;
          ++p.leader_epoch;
        }
      }
      return;
    }
    case kRetention:
      retention_check();
      return;
    case kBalance:
      balance_leaders();
      return;
    default:
      PIPESIM_INVARIANT(false, "unknown cluster event");
  }
}

}  // namespace pipesim::broker
