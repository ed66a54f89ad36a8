#include "models/clickhouse/table.h"

#include <algorithm>
#include <cmath>

#include "models/clickhouse/table_detail.h"
#include "sim/engine/invariant.h"

namespace pipesim::clickhouse {

using namespace table_detail;  // the table's event types and slot packing

std::string_view to_string(QueryStatus s) {
  switch (s) {
    case QueryStatus::OK:
      return "ok";
    case QueryStatus::DEDUPLICATED:
      return "deduplicated";
    case QueryStatus::CLIENT_TIMEOUT:
      return "client_timeout";
    case QueryStatus::TIMEOUT_EXCEEDED:
      return "timeout_exceeded_159";
    case QueryStatus::NETWORK_ERROR:
      return "network_error_210";
    case QueryStatus::TABLE_IS_READ_ONLY:
      return "table_is_read_only_242";
    case QueryStatus::TOO_FEW_LIVE_REPLICAS:
      return "too_few_live_replicas_285";
    case QueryStatus::UNKNOWN_STATUS_OF_INSERT:
      return "unknown_status_of_insert_319";
    case QueryStatus::KEEPER_EXCEPTION:
      return "keeper_exception_999";
    case QueryStatus::TOO_MANY_PARTS:
      return "too_many_parts_252";
    case QueryStatus::COUNT:
      break;
  }
  return "?";
}

std::int64_t ReplicatedTable::default_window_blocks(const std::string& version) {
  // replicated_deduplication_window: 100 before 23.11, 1000 from 23.11, 10000 from 25.9.
  if (version == "23.3" || version == "23.8") return 100;
  if (version == "25.9" || version == "25.10") return 10000;
  return 1000;
}

std::int64_t ReplicatedTable::default_window_seconds(const std::string& version) {
  // replicated_deduplication_window_seconds: 604800 (7 days), 3600 from 25.10.
  return version == "25.10" ? 3600 : 604800;
}

ReplicatedTable::ReplicatedTable(sim::Simulation& sim, const ClickHouseOptions& options,
                                 const std::vector<broker::PartitionLog>& logs,
                                 ledger::Ledger& ledger, keeper::Keeper& keeper, std::uint64_t seed)
    : sim_(sim),
      options_(options),
      logs_(logs),
      ledger_(ledger),
      keeper_(keeper),
      latency_stream_(seed, "clickhouse/insert-latency"),
      outcome_stream_(seed, "clickhouse/insert-outcome"),
      replica_choice_(seed, "clickhouse/replica-choice"),
      server_query_choice_(seed, "clickhouse/replica-choice/server-query"),
      unknown_commit_stream_(seed, "clickhouse/unknown-commit"),
      wake_check_stream_(seed, "clickhouse/wake-check"),
      costs_(QueryCosts::of(options)),
      window_(options.replicated_deduplication_window >= 0 ? options.replicated_deduplication_window
                                                           : default_window_blocks(options.version),
              sim::Time::seconds(options.replicated_deduplication_window_seconds >= 0
                                     ? options.replicated_deduplication_window_seconds
                                     : default_window_seconds(options.version))),
      // ReplicatedMergeTreeSink: a quorum of 1 means no quorum.
      quorum_(options.insert_quorum >= 2 ? options.insert_quorum : 0),
      insert_deduplicate_(options.insert_deduplicate),
      id_(sim.add_component(this)),
      parts_(MergeSettings{
          options.background_pool_size * options.background_merges_mutations_concurrency_ratio,
          options.merge_selector_base, options.max_parts_to_merge_at_once, options.merge_base_time,
          options.merge_time_per_part, static_cast<double>(options.merge_bytes_per_s),
          options.parts_to_delay_insert, options.parts_to_throw_insert,
          sim::Time::seconds(options.max_delay_to_insert), options.min_delay_to_insert}) {
  const CleanupSettings settings{options.cleanup_delay_period, options.max_cleanup_delay_period,
                                 options.cleanup_delay_period_random_add,
                                 options.cleanup_thread_preferred_points_per_iteration};
  for (std::int64_t r = 0; r < options.replicas; ++r) {
    replicas_.emplace_back(settings, seed, "clickhouse/cleanup/replica-" + std::to_string(r));
  }
  keeper_.set_servers(static_cast<int>(replicas_.size()));  // the background threads' servers
}

std::uint32_t ReplicatedTable::table_partition(sim::Time at) const {
  if (options_.partition_by == "insert_day")
    return static_cast<std::uint32_t>(at.us / sim::Time::days(1).us);
  return 0;  // event_day: every copy of a record goes to the record's partition; none: one
             // partition
}

std::uint32_t ReplicatedTable::allocate() {
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    PIPESIM_INVARIANT(pending_.size() < 0xFFFFu, "too many inserts in flight");
    slot = static_cast<std::uint32_t>(pending_.size());
    pending_.emplace_back();
  }
  Insert& s = pending_[slot];
  s.in_use = true;
  ++s.version;
  return slot;
}

void ReplicatedTable::release(std::uint32_t slot) {
  Insert& s = pending_[slot];
  s.in_use = false;
  ++s.version;  // whatever it still had scheduled is void
  ++s.late_serial;
  s.late_commit_at = sim::Time::max();
  free_slots_.push_back(slot);
}

void ReplicatedTable::reply(Insert& s, sim::Time at, QueryStatus status) {
  if (s.client_done) return;
  s.client_done = true;
  at += s.back;
  if (at > s.deadline) {
    at = s.deadline;
    status = QueryStatus::CLIENT_TIMEOUT;
  }
  if (auto* t = sim_.trace(); t && t->detail_at(s.arrived)) {
    // One track per client: a task's inserts follow one another, never overlap.
    t->span(s.arrived, at - s.arrived,
            s.request.client ? *s.request.client + " inserts" : "inserts", "insert",
            {{"partition", s.request.partition},
             {"records", {s.request.first_offset, s.request.last_offset}},
             {"token", {s.request.block.min, s.request.block.max}},
             {"answer", static_cast<int>(status)}});
  }
  PIPESIM_INVARIANT(at >= sim_.now(), "an insert's client would be told too late");
  ++counters_.answers[static_cast<int>(status)];
  sim_.schedule(at, s.request.reply.component, s.request.reply.event_type,
                encode_reply(s.request.reply_token, status));
}

void ReplicatedTable::time_out_client(Insert& s) {
  reply(s, s.deadline - s.back, QueryStatus::CLIENT_TIMEOUT);
}

void ReplicatedTable::reply_direct(const InsertRequest& request, sim::Time at, QueryStatus status) {
  const sim::Time deadline =
      sim_.now() + costs_.setup(request.path) + request.client_timeout;
  if (at > deadline) {
    at = deadline;
    status = QueryStatus::CLIENT_TIMEOUT;
  }
  ++counters_.answers[static_cast<int>(status)];
  sim_.schedule(at, request.reply.component, request.reply.event_type,
                encode_reply(request.reply_token, status));
}

void ReplicatedTable::schedule_slot(std::uint32_t slot, sim::Time at, std::uint32_t type) {
  Insert& s = pending_[slot];
  // The client's socket timeout fires first: it is told then, the server goes on.
  if (!s.client_done && at + s.back > s.deadline) time_out_client(s);
  sim_.schedule(at, id_, type, pack(slot, s.version));
}

void ReplicatedTable::begin_insert(const InsertRequest& request) {
  ++counters_.inserts;
  const sim::Time now = sim_.now();
  if (auto* t = sim_.trace(); t && t->detail_at(now))
    t->counter(now, "keeper", "in_flight", keeper_.in_flight(now));
  const int r = static_cast<int>(replica_choice_.below(replicas_.size()));
  const Replica& rep = replicas_[static_cast<std::size_t>(r)];
  // The request reaches the server after the connection's set-up and half a
  // round trip; the server's work starts after its per-query overhead.
  const sim::Time arrives = now + costs_.setup(request.path) + costs_.one_way();
  const sim::Time back = costs_.round_trip - costs_.one_way();
  if (rep.down) {
    // A dead server process refuses the connection (or resets the kept one)
    // within a round trip. A dead host answers nothing: a new connection
    // fails at connect_timeout (clickhouse-java: a connect timeout, retriable
    // like 210), a kept one waits for the socket timeout.
    if (!rep.hang) {
      reply_direct(request, now + costs_.round_trip, QueryStatus::NETWORK_ERROR);
    } else if (request.path.new_connection) {
      reply_direct(request, now + request.path.connect_timeout, QueryStatus::NETWORK_ERROR);
    } else {
      reply_direct(request, sim::Time::max(), QueryStatus::NETWORK_ERROR);
    }
    return;
  }
  const sim::Time work_starts = arrives + costs_.overhead;
  // ReplicatedMergeTreeSink::onStart: delayInsertOrThrowIfNeeded, before
  // anything is written (MergeTreeParts::gate).
  sync_parts(now);
  const MergeTreeParts::Gate gate = parts_.gate();
  if (gate.refuse) {
    ++counters_.too_many_parts;
    reply_direct(request, work_starts + back, QueryStatus::TOO_MANY_PARTS);
    return;
  }
  if (gate.delay > sim::Time{}) ++counters_.inserts_delayed;
  // A replica read-only for a lost Keeper session still takes the insert
  // (ClickHouse 25.3 StorageReplicatedMergeTree::write refuses only a table
  // whose metadata is not in Keeper): it writes the part, and its commit
  // stage retries TABLE_IS_READ_ONLY like any Keeper error
  // (ReplicatedMergeTreeSink::commitPart, ZooKeeperRetriesControl), so it
  // commits late if the session comes back within insert_keeper_max_retries
  // (~143 s at the defaults), else fails with 242 (plan_keeper_phase).
  if (quorum_ > 0) {
    // checkQuorumPrecondition: getChildren(replicas), exists(is_active) of the
    // others, get(is_active, host) of itself.
    std::int64_t active_replicas = 0;
    for (std::size_t j = 0; j < replicas_.size(); ++j)
      active_replicas += active(static_cast<int>(j)) ? 1 : 0;
    if (active_replicas < quorum_) {
      keeper_.add_load(now, static_cast<std::int64_t>(replicas_.size()) + 2,
                       keeper::KeeperClient::INSERTS, 1, r);
      reply_direct(request, work_starts + keeper_.expected_chain_time(now, 3, 0) + back,
                   QueryStatus::TOO_FEW_LIVE_REPLICAS);
      return;
    }
  }
  const std::uint32_t slot = allocate();
  Insert& s = pending_[slot];
  s.request = request;
  s.request.block.table_partition = table_partition(now);
  s.replica = r;
  s.phase = Phase::KEEPER;
  s.client_done = false;
  s.query_over = false;
  s.late_commit_at = sim::Time::max();
  s.orphan = false;
  s.commit_unknown = false;
  s.committed = false;
  s.arrived = arrives;
  // The socket timeout counts from the request on an open connection.
  s.deadline = now + costs_.setup(request.path) + request.client_timeout;
  s.back = back;
  s.retries = 0;
  s.backoff = options_.insert_keeper_retry_initial_backoff;
  s.pieces.clear();
  s.also_starts.clear();
  logs_[static_cast<std::size_t>(request.partition)].translate(request.first_offset,
                                                               request.last_offset, s.pieces);
  auto rows = request.last_offset - request.first_offset + 1;
  for (const InsertRange& more : request.also) {
    s.also_starts.push_back(s.pieces.size());
    logs_[static_cast<std::size_t>(more.partition)].translate(more.first_offset, more.last_offset,
                                                              s.pieces);
    rows += more.last_offset - more.first_offset + 1;
  }
  s.rows = rows;
  const double z = options_.insert_latency_sigma > 0 ? latency_stream_.normal() : 0.0;
  sim::Time keeper_start = work_starts + gate.delay + local_work(options_, rows, z);
  s.server_commits = true;
  const Replica& writer = replicas_[static_cast<std::size_t>(r)];
  const bool replica_stalled = now < writer.stall_until && writer.stall_until >= stall_until_;
  const sim::Time stalled_until = replica_stalled ? writer.stall_until : stall_until_;
  if (now < stalled_until) {
    keeper_start += stalled_until - now;
    s.server_commits = outcome_stream_.bernoulli(replica_stalled ? writer.stall_server_commits
                                                                 : stall_server_commits_);
  }
  s.keeper_start = keeper_start;
  // The Keeper requests go out after the local write; Keeper's state now stands
  // for its state then (tens of ms later), which saves an event per insert.
  plan_keeper_phase(slot, keeper_start);
}

sim::Time ReplicatedTable::local_work(const ClickHouseOptions& options, std::int64_t rows,
                                      double z) {
  // Local work (parse, sort, write the part) grows with the rows; a lognormal
  // factor stands for the replica's load.
  double local_us = static_cast<double>(options.insert_base_latency.us +
                                        options.insert_latency_per_row.us * rows);
  if (options.insert_latency_sigma > 0) local_us *= std::exp(options.insert_latency_sigma * z);
  return sim::Time{static_cast<std::int64_t>(local_us)};
}

bool ReplicatedTable::healthy() const {
  const sim::Time now = sim_.now();
  if (now < stall_until_ || !keeper_.available(now)) return false;
  for (const auto& rep : replicas_) {
    if (rep.down || rep.read_only || now < rep.stall_until) return false;
  }
  return true;
}

sim::Time ReplicatedTable::quorum_wait() {
  if (quorum_ == 0) return sim::Time{};
  // Every other replica fetches the part after the same Keeper requests.
  const sim::Time now = sim_.now();
  return fetch_keeper_time(now) + options_.replication_fetch_latency;
}

void ReplicatedTable::handle(const sim::Event& event) {
  const std::uint32_t index = index_of(event.arg);
  const std::uint16_t version = version_of(event.arg);
  switch (event.type) {
    case kCommit:
    case kAttempt:
    case kFinish: {
      if (index >= pending_.size()) return;
      Insert& s = pending_[index];
      if (!s.in_use || s.version != version) return;  // planned before a fault changed the plan
      if (event.type == kCommit) on_commit(index);
      if (event.type == kAttempt) plan_keeper_phase(index, sim_.now());
      if (event.type == kFinish) complete(index, s.final_status);
      return;
    }
    case kCleanup: {
      const Replica& rep = replicas_[index];
      if (rep.cleanup_active && rep.cleanup_version == version) {
        if (aggregate_) aggregate_->materialize(sim_.now());
        run_cleanup(static_cast<int>(index));
      }
      return;
    }
    case kCleanupPartRemoves:
    case kCleanupBlocks:
    case kCleanupRemove: {
      const Replica& rep = replicas_[index];
      if (!rep.cleanup_active || rep.cleanup_version != version) return;
      if (event.type == kCleanupPartRemoves) send_part_removes(static_cast<int>(index));
      if (event.type == kCleanupBlocks) {
        if (aggregate_) aggregate_->materialize(sim_.now());
        clear_old_blocks(static_cast<int>(index));
      }
      if (event.type == kCleanupRemove) send_cleanup_removes(static_cast<int>(index));
      return;
    }
    case kLateCommit: {
      if (index >= pending_.size()) return;
      const Insert& s = pending_[index];
      if (!s.in_use || s.late_serial != version || s.late_commit_at != sim_.now()) return;
      on_late_commit(index);
      return;
    }
    case kWakeCheck:
      // Commits call the background scheduler's wake-up check all the time;
      // aggregated inserts commit none, so it runs here at its own pace.
      if (version != wake_check_version_) return;  // superseded
      wake_check_pending_ = false;
      if (aggregate_rate_ <= 0) return;
      if (aggregate_) aggregate_->materialize(sim_.now());
      maybe_wake_cleanup();
      wake_check_pending_ = true;
      sim_.schedule(aggregate_wake_check(), id_, kWakeCheck, pack(0, wake_check_version_));
      return;
    default:
      break;
  }
  Replica& rep = replicas_[index];
  if (event.type == kSessionsExpire) {
    // Every server's session times out while Keeper has no leader; the tables
    // are read-only until the restarting thread gets a new session.
    if (version != election_ || keeper_.available(sim_.now())) return;
    expire_every_session();
    return;
  }
  if (event.type == kStallExpire) {
    if (version == stall_) expire_every_session();
    return;
  }
  if (event.type == kThreadsTimeout) {
    if (version != keeper_watch_) return;
    threads_expiry_ = sim::Time::max();  // spent: the sessions it ends re-arm the watch afresh
    expire_every_session();
    return;
  }
  if (event.type == kKeeperBack) {
    if (version == election_) watch_keeper();
    return;
  }
  if (rep.epoch != version) return;
  switch (event.type) {
    case kReplicaUp:
      rep.down = false;
      sessions_changed();
      rep.schedule.restart_server();
      start_cleanup(static_cast<int>(index), sim_.now());  // runs at server start-up
      return;
    case kSessionBack:
      session_back(static_cast<int>(index));
      return;
    case kSessionCheck:
      restart_attempt(static_cast<int>(index));
      return;
    case kConnectTry:
      connect_try(static_cast<int>(index));
      return;
    case kSessionStartup:
      start_up(static_cast<int>(index));
      return;
    case kSessionLost:
      if (!rep.down && !rep.read_only) session_expired(static_cast<int>(index), sim::Time::max());
      return;
    default:
      PIPESIM_INVARIANT(false, "unknown table event");
  }
}

}  // namespace pipesim::clickhouse
