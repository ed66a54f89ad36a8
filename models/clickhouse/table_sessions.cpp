// A ClickHouse server's Keeper session as ReplicatedTable sees it: expiry
// (every table of the server read-only), the ReplicatedMergeTreeRestartingThread
// that sets up a new session, and a Keeper that stalls (answers nothing).
#include <algorithm>

#include "models/clickhouse/table.h"
#include "models/clickhouse/table_detail.h"
#include "sim/engine/invariant.h"

namespace pipesim::clickhouse {

using namespace table_detail;  // the table's event types and slot packing

namespace {
// ReplicatedMergeTreeRestartingThread::tryStartup's Keeper requests, one after
// another through the new session (ClickHouse 25.3): removeFailedQuorumParts
// (1 getChildren), activateReplica (deleteEphemeralNodeIfContentMatches' get,
// the is_active + host multi: 2), cloneReplicaIfNeeded (is_lost: 1),
// queue.initialize / load (2), pullLogsToQueue (log_pointer, the log's
// children, the queue multi: 3), fixReplicaMetadataVersionIfNeeded (1),
// updateQuorumIfWeHavePart (quorum/status, quorum/parallel: 2); 12 with an
// empty queue and no quorum parts, more with entries to load. Two are
// writes (the two multis; where they come in the chain does not change its time).
constexpr int kStartupRequests = 12;
constexpr int kStartupWrites = 2;
// ZooKeeper::connect (ZooKeeperImpl.cpp): num_connection_retries + 1 rounds
// over the Keeper nodes, each try's handshake waiting up to
// operation_timeout_ms (the socket's receive timeout); ZooKeeperArgs'
// num_connection_retries is 2 and a Keeper ensemble has 3 nodes, which all
// forward a new session (a Raft write) to the one leader.
constexpr int kConnectTries = 3 * (2 + 1);
// ReplicatedMergeTreeRestartingThread::run: after the n-th consecutive
// failure the next try comes min(10 s, 100 ms x (n + 1)(n + 2) / 2) later.
sim::Time restart_backoff(std::int64_t failures_before) {
  const std::int64_t n = failures_before;
  return std::min(sim::Time::seconds(10), sim::Time::millis(100 * ((n + 1) * (n + 2)) / 2));
}
}  // namespace

void ReplicatedTable::lose_session(int replica, sim::Time until) {
  session_expired(replica, until);
}

void ReplicatedTable::session_expired(int replica, sim::Time until) {
  const sim::Time now = sim_.now();
  Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  if (rep.down) return;
  ++counters_.session_losses;
  if (!rep.read_only) rep.read_only_since = now;
  rep.read_only = true;
  rep.read_only_until = until;
  ++rep.epoch;
  stop_cleanup(replica);  // ZSESSIONEXPIRED: the cleanup thread stops until the restart
  if (until != sim::Time::max()) {
    // keeper_session_loss: the server gets no new session before `until`.
    sim_.schedule(std::max(until, now), id_, kSessionBack,
                  pack(static_cast<std::uint32_t>(replica), rep.epoch));
  } else {
    // The expired session's watches fire, queueUpdatingTask meets
    // ZSESSIONEXPIRED and wakes the restarting thread: it tries at once
    // (zookeeper_session_expiration_check_period is its period while healthy).
    rep.restart_failures = 0;
    sim_.schedule(now, id_, kSessionCheck, pack(static_cast<std::uint32_t>(replica), rep.epoch));
  }
  for (std::uint32_t slot = 0; slot < pending_.size(); ++slot) {
    Insert& s = pending_[slot];
    if (!s.in_use || s.replica != replica || s.orphan) continue;
    if (s.phase == Phase::KEEPER) {
      ++s.version;
      if (now < s.keeper_start) {
        s.phase = Phase::RETRY;
        schedule_slot(slot, s.keeper_start, kAttempt);  // it will find the table read-only
        continue;
      }
      // The server cannot know whether a commit multi in flight got
      // through: it did, when Keeper gets to it (ZooKeeperImpl finalizes
      // the client's session; the requests it sent stay queued in Keeper).
      if (now >= s.commit_sent_at) plan_late_commit(slot, s.commit_at);
      fail_attempt(slot, now, QueryStatus::TABLE_IS_READ_ONLY);
    } else if (s.phase == Phase::QUORUM) {
      // The wait for the quorum loses its watch: the status is unknown (the part is committed).
      ++s.version;
      complete(slot, QueryStatus::UNKNOWN_STATUS_OF_INSERT);
    }
  }
  replan_quorums_after(replica, until);
  sessions_changed();
}

void ReplicatedTable::sessions_changed() {
  // The background load is the servers' threads (KeeperOptions), one share
  // per replica's server: a server without a session (read-only) or down
  // sends nothing until it has one again.
  std::vector<bool> has_session;
  for (const Replica& r : replicas_) has_session.push_back(!r.down && !r.read_only);
  keeper_.set_sessions(sim_.now(), has_session);
  // Who sends changed, not how fast Keeper serves: no request already
  // queued is answered sooner (FCFS), so one that was to outwait the
  // operation timeout still does (the burst's own server may end its session
  // a moment before the other servers' requests behind that burst time out).
  watch_keeper(/*pending_stand=*/true);
}

void ReplicatedTable::watch_keeper(bool pending_stand) {
  // Every server's threads wait in the same queue: when one's request
  // outwaits operation_timeout_ms, ZooKeeperImpl finalizes every server's
  // session (each has such a request pending then). Watched anew whenever
  // the regime changes; an older watch's event is ignored.
  ++keeper_watch_;
  const sim::Time now = sim_.now();
  sim::Time at = keeper_.threads_time_out_at(now);
  if (pending_stand && threads_expiry_ >= now) at = std::min(at, threads_expiry_);
  threads_expiry_ = at;
  if (at != sim::Time::max()) sim_.schedule(at, id_, kThreadsTimeout, pack(0, keeper_watch_));
}

void ReplicatedTable::end_read_only(Replica& rep, sim::Time now) {
  if (rep.read_only) read_only_us_ += (now - rep.read_only_since).us;
  rep.read_only = false;
  rep.read_only_until = sim::Time::max();
}

void ReplicatedTable::session_back(int replica) {
  Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  end_read_only(rep, sim_.now());
  start_cleanup(replica, sim_.now());  // the restarting thread starts it again: it runs at once
  sessions_changed();
}

void ReplicatedTable::restart_attempt(int replica) {
  // ReplicatedMergeTreeRestartingThread::runImpl: setZooKeeper (a new
  // session), then tryStartup's requests; on failure the table stays
  // read-only and the thread tries again after its backoff. Each step is an
  // event of its own: a request is priced by Keeper as it is when it is sent.
  Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  ++counters_.restart_attempts;
  rep.connect_tries = 0;
  connect_try(replica);
}

void ReplicatedTable::connect_try(int replica) {
  Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  const sim::Time now = sim_.now();
  const auto arg = pack(static_cast<std::uint32_t>(replica), rep.epoch);
  if (!keeper_.available(now)) {
    // No leader: every Keeper node rejects the handshake at once
    // (KEEPER_PROTOCOL_VERSION_CONNECTION_REJECT, "doesn't see leader").
    const std::int64_t left = kConnectTries - rep.connect_tries;
    restart_failed(replica, now + sim::Time{keeper_.options().latency.us * left});
    return;
  }
  // The handshake: a new session id is a Raft write through the leader.
  const keeper::KeeperAnswer handshake =
      keeper_.request(now, 1, keeper::KeeperClient::REPLICATION, replica, 1);
  if (handshake.ok) {
    sim_.schedule(now + handshake.latency, id_, kSessionStartup, arg);
    return;
  }
  // No answer within operation_timeout_ms: the next node (or round).
  if (++rep.connect_tries < kConnectTries) {
    sim_.schedule(now + handshake.latency, id_, kConnectTry, arg);
  } else {
    restart_failed(replica, now + handshake.latency);
  }
}

void ReplicatedTable::start_up(int replica) {
  Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  const sim::Time now = sim_.now();
  const keeper::KeeperAnswer startup =
      keeper_.available(now)
          ? keeper_.request(now, kStartupRequests, keeper::KeeperClient::REPLICATION, replica,
                            kStartupWrites)
          : keeper::KeeperAnswer{false, keeper_.options().latency, {}, false};
  if (!startup.ok) {
    restart_failed(replica, now + startup.latency);
    return;
  }
  rep.restart_failures = 0;
  rep.read_only_until = now + startup.latency;
  sim_.schedule(rep.read_only_until, id_, kSessionBack, pack(static_cast<std::uint32_t>(replica), rep.epoch));
}

void ReplicatedTable::restart_failed(int replica, sim::Time at) {
  Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  const sim::Time next = at + restart_backoff(rep.restart_failures);
  ++rep.restart_failures;
  sim_.schedule(next, id_, kSessionCheck, pack(static_cast<std::uint32_t>(replica), rep.epoch));
}

void ReplicatedTable::expire_every_session() {
  for (std::size_t r = 0; r < replicas_.size(); ++r) {
    if (!replicas_[r].down && !replicas_[r].read_only) session_expired(static_cast<int>(r), sim::Time::max());
  }
}

void ReplicatedTable::keeper_stall(sim::Time until) {
  const sim::Time now = sim_.now();
  keeper_.set_stalled(now, until);  // a stall under way is extended
  until = keeper_.stalled_until();
  // Every server's session holds the background's requests, sent before the
  // stall (a few ms before, at the defaults: left out): the oldest passes
  // operation_timeout_ms first, and ZooKeeperImpl's receive thread finalizes
  // the session (ZOPERATIONTIMEOUT), on every server at once.
  const sim::Time expiry = keeper_.stalled_from() + keeper_.options().operation_timeout;
  const bool expires = until > expiry;
  if (expires && stall_expiry_ != expiry) {
    stall_expiry_ = expiry;
    ++stall_;
    sim_.schedule(std::max(expiry, now), id_, kStallExpire, pack(0, stall_));
  }
  // The inserts' requests already sent get no answer until the stall ends:
  // their commit comes that much later, or never if the session ends first.
  for (std::uint32_t slot = 0; slot < pending_.size(); ++slot) {
    Insert& s = pending_[slot];
    if (!s.in_use || s.phase != Phase::KEEPER || now >= s.commit_at) continue;
    ++s.version;
    if (now < s.keeper_start) {
      s.phase = Phase::RETRY;
      schedule_slot(slot, s.keeper_start, kAttempt);  // its requests will meet the stall
      continue;
    }
    // Its requests are answered (or, after the session's end, still
    // applied) that much later.
    s.commit_at += until - now;
    if (s.commit_sent_at > now) s.commit_sent_at += until - now;
    if (expires) {
      // Failed when the session expires (its slot's event is gone); its
      // client's socket timeout may come first, and nothing else would tell it.
      if (!s.client_done && expiry + s.back > s.deadline) time_out_client(s);
      continue;
    }
    schedule_slot(slot, s.commit_at, kCommit);
  }
  watch_keeper();
}

double ReplicatedTable::read_only_seconds(sim::Time now) const {
  std::int64_t us = read_only_us_;
  for (const auto& rep : replicas_) {
    if (rep.read_only) us += (now - rep.read_only_since).us;
  }
  return static_cast<double>(us) / 1e6;
}

}  // namespace pipesim::clickhouse
