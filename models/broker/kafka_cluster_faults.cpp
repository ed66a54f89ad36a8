// The brokers under faults: a broker crash (its partitions' leaders move, the
// ISR shrinks after replica.lag.time.max.ms), fencing by the controller, a
// restart that catches up, and a leader change (controlled or not).
#include "models/broker/kafka_cluster.h"

#include <algorithm>

#include "sim/engine/invariant.h"

namespace pipesim::broker {

void KafkaCluster::crash_broker(int broker, sim::Time down_for) {
  const auto b = static_cast<std::size_t>(broker);
  if (!alive_[b]) return;  // already down: the running outage goes on
  if (listener_) listener_->before_change();
  for (std::size_t i = 0; i < partitions_.size(); ++i) {
    if (slot_of(partitions_[i], broker) < partitions_[i].replicas.size()) freeze_ends(i);
  }
  alive_[b] = false;
  if (listener_) listener_->broker_died(broker);
  const sim::Time now = sim_.now();
  // The controller fences the silent broker after broker.session.timeout.ms;
  // a leader drops a silent follower from its ISR after replica.lag.time.max.ms.
  // A broker back sooner registers again: its old incarnation is fenced then.
  const sim::Time fence_in = std::min(options_.broker_session_timeout, down_for);
  const sim::Time shrink_in = std::min(fence_in, options_.replica_lag_time_max);
  if (shrink_in < fence_in) {
    shrink_due_[b] = now + shrink_in;
    sim_.schedule(shrink_due_[b], id_, kIsrShrink, static_cast<std::uint32_t>(broker));
  }
  fence_due_[b] = now + fence_in;
  sim_.schedule(fence_due_[b], id_, kFence, static_cast<std::uint32_t>(broker));
  restart_due_[b] = now + down_for;
  sim_.schedule(restart_due_[b], id_, kRestart, static_cast<std::uint32_t>(broker));
  if (listener_) listener_->change_planned(std::min(fence_due_[b], shrink_due_[b]));
}

void KafkaCluster::shrink_isr(int broker) {
  for (std::size_t i = 0; i < partitions_.size(); ++i) {
    Partition& p = partitions_[i];
    const std::size_t s = slot_of(p, broker);
    if (s >= p.replicas.size() || !p.in_isr[s] || p.leader == broker || isr_size(p) <= 1) continue;
    p.in_isr[s] = 0;
    if (listener_) listener_->isr_shrunk(static_cast<int>(i));
    update_high_watermark(i);
  }
}

void KafkaCluster::fence(int broker) {
  if (listener_) listener_->before_change();
  fenced_[static_cast<std::size_t>(broker)] = true;
  shrink_isr(broker);
  for (std::size_t i = 0; i < partitions_.size(); ++i) {
    Partition& p = partitions_[i];
    const std::size_t s = slot_of(p, broker);
    if (s >= p.replicas.size() || p.leader != broker) continue;
    // KRaft handleBrokerFenced: out of the ISR (unless it is the last member)
    // and a new leader, or none.
    if (p.in_isr[s] && isr_size(p) > 1) p.in_isr[s] = 0;
    bool unclean = false;
    const int slot = choose_leader(p, broker, options_.unclean_leader_election_enable, unclean);
    if (slot >= 0) {
      elect(i, slot, unclean);
    } else {
      freeze_ends(i);
      p.leader = -1;
      ++p.leader_epoch;
    }
  }
}

void KafkaCluster::restart(int broker) {
  if (listener_) listener_->before_change();
  alive_[static_cast<std::size_t>(broker)] = true;
  fenced_[static_cast<std::size_t>(broker)] = false;
  for (std::size_t i = 0; i < partitions_.size(); ++i) {
    Partition& p = partitions_[i];
    const std::size_t s = slot_of(p, broker);
    if (s >= p.replicas.size()) continue;
    if (p.leader >= 0) {
      // It truncates to the leader's log, catches up (model: at once) and
      // rejoins the ISR.
      p.in_isr[s] = 1;
      p.stale_end[s] = logs_[i].log_end_offset();
      continue;
    }
    if (p.stepped_down >= 0 || p.hung) continue;  // an election window is running
    bool unclean = false;
    const int slot = choose_leader(p, -1, options_.unclean_leader_election_enable, unclean);
    if (slot >= 0) elect(i, slot, unclean);
  }
  schedule_balance();
}

void KafkaCluster::change_leader(int partition, bool controlled, sim::Time window) {
  const auto index = static_cast<std::size_t>(partition);
  Partition& p = partitions_[index];
  if (p.leader < 0 || !alive(p.leader) || p.stepped_down >= 0 || p.hung) return;  // nothing to move
  if (listener_) listener_->before_change();
  const int old = p.leader;
  if (!controlled) {
    // The leader stops answering produce requests for the partition; the
    // controller moves it after the window (a fenced-like leader).
    p.hung = true;
    p.stepped_down = old;
    p.election_due = sim_.now() + (window.us > 0 ? window : options_.broker_session_timeout);
    sim_.schedule(p.election_due, id_, kElection, static_cast<std::uint32_t>(partition));
    if (listener_) listener_->change_planned(p.election_due);
    return;
  }
  bool unclean = false;
  const int slot = choose_leader(p, old, false, unclean);
  if (window.us == 0) {
    if (slot >= 0) elect(index, slot, false);
    return;
  }
  // The leader gives the partition up now; the new one leads after the window.
  freeze_ends(index);
  p.leader = -1;
  ++p.leader_epoch;
  p.stepped_down = old;
  if (listener_) listener_->leadership_moved(partition, old);
  p.election_due = sim_.now() + window;
  sim_.schedule(p.election_due, id_, kElection, static_cast<std::uint32_t>(partition));
  if (listener_) listener_->change_planned(p.election_due);
}

}  // namespace pipesim::broker
