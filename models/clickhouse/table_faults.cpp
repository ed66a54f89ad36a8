// ReplicatedTable under faults: stalls, replica crashes, Keeper elections.
// Keeper sessions (expiry, read-only replicas, the restarting thread, Keeper
// stalls): table_sessions.cpp; the cleanup threads: table_cleanup.cpp.
#include "models/clickhouse/table.h"

#include <algorithm>
#include <cmath>

#include "models/clickhouse/table_detail.h"
#include "sim/engine/invariant.h"

namespace pipesim::clickhouse {

using namespace table_detail;  // the table's event types and slot packing

void ReplicatedTable::stall(sim::Time until, double server_commits, int replica) {
  if (replica >= 0) {
    replicas_[static_cast<std::size_t>(replica)].stall_until = until;
    replicas_[static_cast<std::size_t>(replica)].stall_server_commits = server_commits;
    return;
  }
  stall_until_ = until;
  stall_server_commits_ = server_commits;
}

void ReplicatedTable::crash_replica(int replica, sim::Time until, bool hang) {
  const sim::Time now = sim_.now();
  Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  if (rep.down) return;
  rep.down = true;
  rep.hang = hang;
  rep.crashed_at = now;
  rep.up_at = until;
  end_read_only(rep, now);  // the restarted server opens a new session
  ++rep.epoch;
  stop_cleanup(replica);
  sessions_changed();
  sim_.schedule(until, id_, kReplicaUp, pack(static_cast<std::uint32_t>(replica), rep.epoch));
  for (std::uint32_t slot = 0; slot < pending_.size(); ++slot) {
    Insert& s = pending_[slot];
    if (!s.in_use || s.replica != replica || s.orphan) continue;
    const QueryStatus seen = hang ? QueryStatus::CLIENT_TIMEOUT : QueryStatus::NETWORK_ERROR;
    // The reset reaches the client half a round trip later (reply adds it).
    const sim::Time seen_at = hang ? std::max(s.deadline, now) : now;
    if (s.phase == Phase::KEEPER && now >= s.commit_sent_at && now >= s.keeper_start &&
        now < s.commit_at) {
      // The commit multi is on its way: Keeper applies it all the same (the
      // part was renamed on disk before the multi, so it is there after restart).
      s.orphan = true;
      reply(s, seen_at, seen);
      continue;
    }
    reply(s, seen_at, seen);
    if (!s.committed) ++counters_.not_committed;
    release(slot);
  }
  replan_quorums_after(replica, until);
}

void ReplicatedTable::replan_quorums_after(int replica, sim::Time available_again) {
  if (quorum_ == 0) return;
  const sim::Time now = sim_.now();
  for (std::uint32_t slot = 0; slot < pending_.size(); ++slot) {
    Insert& s = pending_[slot];
    if (!s.in_use || s.phase != Phase::QUORUM || s.replica == replica) continue;
    sim::Time& at = s.fetched_at[static_cast<std::size_t>(replica)];
    if (at <= now) continue;  // it has the part already
    at = available_again == sim::Time::max()
             ? sim::Time::max()
             : available_again + fetch_keeper_time(now) + options_.replication_fetch_latency;
    ++s.version;
    plan_quorum(slot);
  }
}

void ReplicatedTable::keeper_election(sim::Time until, double commit_applied) {
  const sim::Time now = sim_.now();
  keeper_.set_unavailable(now, until);
  ++election_;
  if (until - now > keeper_.options().session_timeout) {
    sim_.schedule(now + keeper_.options().session_timeout, id_, kSessionsExpire,
                  pack(0, election_));
  }
  sim_.schedule(until, id_, kKeeperBack, pack(0, election_));
  for (std::uint32_t slot = 0; slot < pending_.size(); ++slot) {
    Insert& s = pending_[slot];
    if (!s.in_use) continue;
    if (s.phase == Phase::QUORUM) {
      // The fetching replicas' Keeper requests wait for the new leader too.
      bool moved = false;
      for (std::size_t j = 0; j < s.fetched_at.size(); ++j) {
        if (static_cast<int>(j) == s.replica || s.fetched_at[j] <= now ||
            s.fetched_at[j] == sim::Time::max())
          continue;
        s.fetched_at[j] = s.fetched_at[j] + (until - now);
        moved = true;
      }
      if (moved) {
        ++s.version;
        plan_quorum(slot);
      }
      continue;
    }
    if (s.phase != Phase::KEEPER || now >= s.commit_at) continue;
    if (now < s.keeper_start) {
      if (s.keeper_start < until) {
        ++s.version;
        s.phase = Phase::RETRY;
        schedule_slot(slot, s.keeper_start, kAttempt);  // its first request will find no leader
      }
      continue;
    }
    ++s.version;
    if (now >= s.commit_sent_at) {
      // The commit multi reached the old leader: committed by the Raft quorum or not.
      const bool applied = unknown_commit_stream_.bernoulli(commit_applied);
      if (s.orphan) {
        if (applied) apply_commit(s);
        release(slot);
        continue;
      }
      s.commit_unknown = true;
      if (applied) apply_commit(s);
    }
    fail_attempt(slot, now, QueryStatus::KEEPER_EXCEPTION);
  }
}

}  // namespace pipesim::clickhouse
