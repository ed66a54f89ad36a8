// ReplicatedTable's commit stage: an insert's Keeper requests and their retries
// (ZooKeeperRetriesControl), the commit multi with its block-id check, the
// quorum wait, and the queries the sink sends besides inserts.
#include "models/clickhouse/table.h"

#include <algorithm>
#include <cmath>

#include "models/clickhouse/table_detail.h"
#include "sim/engine/invariant.h"

namespace pipesim::clickhouse {

using namespace table_detail;  // the table's event types and slot packing

void ReplicatedTable::plan_keeper_phase(std::uint32_t slot, sim::Time at) {
  Insert& s = pending_[slot];
  const sim::Time now = sim_.now();
  const Replica& rep = replicas_[static_cast<std::size_t>(s.replica)];
  s.phase = Phase::KEEPER;
  if (rep.read_only) {
    // The retry loop of commitPart: "Table is in readonly mode" (242).
    fail_attempt(slot, at, QueryStatus::TABLE_IS_READ_ONLY);
    return;
  }
  if (!keeper_.available(now)) {
    if (at >= keeper_.unavailable_until()) {
      s.phase = Phase::RETRY;  // the leader is back by then: try then
      schedule_slot(slot, at, kAttempt);
      return;
    }
    fail_attempt(slot, at + keeper_.options().latency, QueryStatus::KEEPER_EXCEPTION);
    return;
  }
  // allocateBlockNumber + the commit multi. After a commit of unknown fate
  // the retry first looks for its part node (one more request); if the multi
  // had been applied that is all.
  int requests = s.commit_unknown ? 1 : 2;
  if (s.commit_unknown && !s.committed) requests += 2;
  if (quorum_ > 0 && s.retries == 0) requests += 3;  // checkQuorumPrecondition
  // The lookup and the precondition's reads come first; allocateBlockNumber
  // (a multi creating the block number's ephemeral node) and the commit multi
  // are writes.
  const int writes = s.commit_unknown && s.committed ? 0 : 2;
  const keeper::KeeperAnswer answer =
      keeper_.request(now, requests, keeper::KeeperClient::INSERTS, s.replica, writes);
  if (!answer.ok) {
    sim::Time failed_at = at + answer.latency;
    if (answer.operation_timeout) {
      // The ZooKeeper client finalizes its session on an operation timeout:
      // the replica's tables go read-only until a new session is set up. A
      // stall ends every session sooner (the background's older requests):
      // this request fails with them, and so does the threads' requests
      // outwaiting it first (watch_keeper).
      for (const sim::Time sooner : {stall_expiry_, threads_expiry_}) {
        if (sooner > at && sooner < failed_at) failed_at = sooner;
      }
      sim_.schedule(failed_at, id_, kSessionLost, pack(static_cast<std::uint32_t>(s.replica), rep.epoch));
      // The commit multi (the chain's last request, unless the retry only
      // looks for its part) timed out: it is still applied.
      const bool multi_sent = !(s.commit_unknown && s.committed);
      if (multi_sent && answer.timed_out_request == requests - 1) plan_late_commit(slot, at + answer.served_after);
    }
    fail_attempt(slot, failed_at, QueryStatus::KEEPER_EXCEPTION);
    return;
  }
  if (s.commit_unknown && s.committed) {
    finish(slot, at + answer.latency, s.commit_result);
    return;
  }
  s.commit_at = at + answer.latency;
  s.commit_sent_at = s.commit_at - answer.last_request;
  schedule_slot(slot, s.commit_at, kCommit);
}

void ReplicatedTable::fail_attempt(std::uint32_t slot, sim::Time failed_at, QueryStatus code) {
  Insert& s = pending_[slot];
  // ZooKeeperRetriesControl: wait the backoff (doubling up to the maximum)
  // and retry, insert_keeper_max_retries times.
  if (s.retries < options_.insert_keeper_max_retries) {
    ++s.retries;
    ++counters_.keeper_retries;
    const sim::Time next = failed_at + s.backoff;
    s.backoff = std::min(s.backoff * 2, options_.insert_keeper_retry_max_backoff);
    s.phase = Phase::RETRY;
    schedule_slot(slot, next, kAttempt);
    return;
  }
  // Out of retries. If a commit multi's fate is unknown the part is kept
  // locally and checked later: it stays if Keeper has it.
  finish(slot, failed_at, s.commit_unknown ? QueryStatus::UNKNOWN_STATUS_OF_INSERT : code);
}

void ReplicatedTable::finish(std::uint32_t slot, sim::Time at, QueryStatus status) {
  Insert& s = pending_[slot];
  s.phase = Phase::FINISH;
  s.final_status = status;
  schedule_slot(slot, at, kFinish);
}

void ReplicatedTable::complete(std::uint32_t slot, QueryStatus status) {
  Insert& s = pending_[slot];
  if (!s.orphan) insert_latency_us_.add((sim_.now() - s.arrived).us);
  if (!s.committed && s.late_commit_at == sim::Time::max()) ++counters_.not_committed;
  reply(s, sim_.now(), status);
  // A commit multi still queued in Keeper outlives the query: the slot
  // waits for it (on_late_commit releases it).
  if (s.late_commit_at != sim::Time::max()) {
    s.phase = Phase::FINISH;
    s.query_over = true;
    ++s.version;
    return;
  }
  release(slot);
}

// ReplicatedMergeTreeSink::commitPart: a ZOPERATIONTIMEOUT or a lost
// connection on the commit multi leaves the part MaybeCommitted ("Unknown
// status, client must retry"); the client's timeout ends only its wait, and
// the multi, queued in Keeper, is applied when its turn comes. The retry
// first looks for its part node: found if the multi was applied by then;
// else it commits again, and its multi finds the block id the first one
// wrote (a dedup hit) or, without deduplication, writes a second part.
void ReplicatedTable::plan_late_commit(std::uint32_t slot, sim::Time at) {
  Insert& s = pending_[slot];
  s.commit_unknown = true;
  if (s.late_commit_at != sim::Time::max()) return;  // an earlier multi is ahead of this one
  s.late_commit_at = std::max(at, sim_.now());
  ++s.late_serial;
  sim_.schedule(s.late_commit_at, id_, kLateCommit, pack(slot, s.late_serial));
}

void ReplicatedTable::on_late_commit(std::uint32_t slot) {
  Insert& s = pending_[slot];
  s.late_commit_at = sim::Time::max();
  // A retry that committed first wrote the block id: this multi fails on it
  // and nobody waits for its answer. Without block ids it is a second part.
  if (!s.committed || !insert_deduplicate_) {
    const bool first = !s.committed;
    const QueryStatus told = s.commit_result;
    apply_commit(s);
    if (!first) s.commit_result = told;  // what the retry found stands
  }
  if (s.query_over) release(slot);
}

void ReplicatedTable::on_commit(std::uint32_t slot) {
  Insert& s = pending_[slot];
  if (!s.server_commits) {
    // The stuck server never finishes this insert (insert_timeout fault).
    complete(slot, QueryStatus::TIMEOUT_EXCEEDED);
    return;
  }
  const QueryStatus result = apply_commit(s);
  if (s.orphan) {
    release(slot);  // committed; nobody is waiting for the answer
    return;
  }
  if (result == QueryStatus::DEDUPLICATED || quorum_ == 0) {
    complete(slot, result);
    return;
  }
  // waitForQuorum: the writer watches the quorum node; each fetching replica
  // reads and updates it (a write).
  keeper_.add_load(sim_.now(), 1 + 2 * (quorum_ - 1), keeper::KeeperClient::REPLICATION, 1, -1,
                   quorum_ - 1);
  plan_quorum(slot);
}

QueryStatus ReplicatedTable::apply_commit(Insert& s) {
  const sim::Time now = sim_.now();
  s.committed = true;
  // insert_deduplicate=0: no block id is checked or written.
  if (insert_deduplicate_ && window_.contains(s.request.block)) {
    // "Block with ID ... already exists; ignoring it": success, no part.
    ++counters_.dedup_hits;
    if (auto* t = sim_.trace()) {
      const BlockId& b = s.request.block;
      t->story(now, "clickhouse", "dedup_hit",
               (b.partition == BlockId::kDataHash
                    ? std::string("a block with the same data (no token)")
                    : "block of token partition " + std::to_string(b.partition) + " [" +
                          std::to_string(b.min) + ", " + std::to_string(b.max) + "]") +
                   " is still in the dedup window: the insert succeeds without writing");
    }
    s.commit_result = QueryStatus::DEDUPLICATED;
    return s.commit_result;
  }
  if (insert_deduplicate_) window_.insert(s.request.block, now);
  ++counters_.parts;
  sync_parts(now);
  parts_.add_part(now, static_cast<double>(s.rows * options_.row_bytes), merge_keeper_time());
  load_merges(now);
  ++parts_since_log_clear_;
  for (auto& rep : replicas_) {
    rep.blocks_since_run += window_.enabled() && insert_deduplicate_ ? 1 : 0;
    ++rep.parts_since_run;
  }
  const std::uint64_t serial = ledger_.next_insert_serial();
  // One block: every range of the statement is written, or none.
  std::size_t next_range = 0;
  int partition = s.request.partition;
  ledger::InsertTag tag = s.request.tag;
  for (std::size_t i = 0; i < s.pieces.size(); ++i) {
    while (next_range < s.also_starts.size() && s.also_starts[next_range] == i) {
      partition = s.request.also[next_range].partition;
      tag = s.request.also[next_range].tag;
      ++next_range;
    }
    const auto& piece = s.pieces[i];
    ledger_.record_rows(partition, ledger::RowRange{piece.ids, piece.segment_uid, piece.cause, tag,
                                                    serial, s.request.block.table_partition});
  }
  // The other replicas pull the log entry and fetch the part.
  s.fetched_at.assign(replicas_.size(), now);
  for (std::size_t j = 0; j < replicas_.size(); ++j) {
    if (static_cast<int>(j) == s.replica) continue;
    s.fetched_at[j] = fetch_time(static_cast<int>(j));
    if (s.fetched_at[j] != sim::Time::max()) replication_lag_us_.add((s.fetched_at[j] - now).us);
  }
  // Each other replica sends its requests one after another.
  const auto others = static_cast<std::int64_t>(replicas_.size()) - 1;
  keeper_.add_load(now, others * options_.keeper_requests_per_fetch,
                   keeper::KeeperClient::REPLICATION, others, -1,
                   others * keeper_writes_of_a_fetch());
  maybe_wake_cleanup();
  s.commit_result = QueryStatus::OK;
  return s.commit_result;
}

sim::Time ReplicatedTable::fetch_time(int replica) {
  const sim::Time now = sim_.now();
  const Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  sim::Time from = now;
  if (rep.down) from = std::max(from, rep.up_at);
  if (rep.read_only) {
    if (rep.read_only_until == sim::Time::max()) return sim::Time::max();
    from = std::max(from, rep.read_only_until);
  }
  if (!keeper_.available(now)) from = std::max(from, keeper_.unavailable_until());
  return from + fetch_keeper_time(now) + options_.replication_fetch_latency;
}

void ReplicatedTable::plan_quorum(std::uint32_t slot) {
  Insert& s = pending_[slot];
  std::vector<sim::Time> others;
  for (std::size_t j = 0; j < s.fetched_at.size(); ++j) {
    if (static_cast<int>(j) != s.replica) others.push_back(s.fetched_at[j]);
  }
  std::sort(others.begin(), others.end());
  s.phase = Phase::QUORUM;
  // The writer counts itself: quorum - 1 other replicas must have the part.
  // ReplicatedMergeTreeSink::waitForQuorum (25.3) sets a watch on the quorum
  // node and waits insert_quorum_timeout for it to change; every replica that
  // fetches the part updates the node, so the timer starts again at each
  // fetch. It gives up when no fetch comes within the timeout: "Timeout while
  // waiting for quorum", 319 UNKNOWN_STATUS_OF_INSERT (older versions: 159);
  // the part stays committed.
  sim::Time last_change = s.commit_at;
  for (std::size_t k = 0; k + 1 < static_cast<std::size_t>(quorum_); ++k) {
    const sim::Time fetched = others[k];
    if (fetched == sim::Time::max() || fetched > last_change + options_.insert_quorum_timeout) {
      s.final_status = QueryStatus::UNKNOWN_STATUS_OF_INSERT;
      schedule_slot(slot, std::max(last_change + options_.insert_quorum_timeout, sim_.now()),
                    kFinish);
      return;
    }
    last_change = fetched;
  }
  s.final_status = QueryStatus::OK;
  schedule_slot(slot, std::max(last_change, sim_.now()), kFinish);
}

bool ReplicatedTable::active(int replica) const {
  const Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  // A crashed server's ephemeral is_active node lives until its session times out.
  if (rep.down) return sim_.now() < rep.crashed_at + keeper_.options().session_timeout;
  return !rep.read_only;
}

QueryAnswer ReplicatedTable::server_query(sim::Time timeout, const ClientPath& path) {
  const int r = static_cast<int>(server_query_choice_.below(replicas_.size()));
  const Replica& rep = replicas_[static_cast<std::size_t>(r)];
  if (!rep.down) return QueryAnswer{costs_.fixed(path), QueryStatus::OK};
  if (!rep.hang) return QueryAnswer{costs_.round_trip, QueryStatus::NETWORK_ERROR};
  // A dead host: a new connection fails at connect_timeout, a kept one
  // waits for the query's timeout.
  return path.new_connection
             ? QueryAnswer{std::min(timeout, path.connect_timeout), QueryStatus::NETWORK_ERROR}
             : QueryAnswer{timeout, QueryStatus::CLIENT_TIMEOUT};
}

bool ReplicatedTable::any_replica_down() const {
  for (const auto& rep : replicas_) {
    if (rep.down) return true;
  }
  return false;
}

void ReplicatedTable::operation_timeout(int replica, sim::Time at) {
  const Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  sim_.schedule(std::max(at, sim_.now()), id_, kSessionLost,
                pack(static_cast<std::uint32_t>(replica), rep.epoch));
}

}  // namespace pipesim::clickhouse
