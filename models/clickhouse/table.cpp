#include "models/clickhouse/table.h"

#include <algorithm>
#include <cmath>

#include "sim/engine/invariant.h"

namespace pipesim::clickhouse {

namespace {

enum EventType : std::uint32_t {
  kCommit = 1,      // an insert's commit multi is applied (slot)
  kAttempt,         // an insert retries its Keeper requests (slot)
  kFinish,          // an insert's answer leaves the server (slot)
  kCleanup,         // a replica's cleanup thread runs (replica)
  kReplicaUp,       // a crashed replica's server is back (replica)
  kSessionBack,     // a replica's Keeper session is re-established (replica)
  kSessionCheck,    // ReplicatedMergeTreeRestartingThread retries a lost session (replica)
  kSessionLost,     // an operation timeout finalized a replica's session (replica)
  kSessionsExpire,  // a leader election outlasted the session timeout (election)
  kWakeCheck,       // the background scheduler's cleanup wake-up check, for aggregated inserts
};

constexpr std::uint32_t pack(std::uint32_t index, std::uint16_t version) {
  return index | (static_cast<std::uint32_t>(version) << 16);
}
constexpr std::uint32_t index_of(std::uint32_t arg) { return arg & 0xFFFFu; }
constexpr std::uint16_t version_of(std::uint32_t arg) {
  return static_cast<std::uint16_t>(arg >> 16);
}

// A refused or reset connection reaches the client within a network round trip.
constexpr sim::Time kNetworkRoundTrip = sim::Time::millis(1);
// ReplicatedMergeTreeCleanupThread::iterate: a few new parts are merged into
// one, so each inserted part makes ~1.3 outdated parts and log entries.
constexpr double kPartsNumberAmplification = 1.3;

}  // namespace

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
      keeper_map_choice_(seed, "clickhouse/replica-choice/keeper-map"),
      server_query_choice_(seed, "clickhouse/replica-choice/server-query"),
      unknown_commit_stream_(seed, "clickhouse/unknown-commit"),
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
}

void ReplicatedTable::start() {
  // The servers start with the run: a cleanup thread runs at start-up
  // (activateAndSchedule) and then sleeps.
  for (std::size_t r = 0; r < replicas_.size(); ++r) start_cleanup(static_cast<int>(r), sim_.now());
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
  free_slots_.push_back(slot);
}

void ReplicatedTable::reply(Insert& s, sim::Time at, QueryStatus status) {
  if (s.client_done) return;
  s.client_done = true;
  if (at > s.deadline) {
    at = s.deadline;
    status = QueryStatus::CLIENT_TIMEOUT;
  }
  if (auto* t = sim_.trace(); t && t->detail_at(s.arrived)) {
    // One track per client: a task's inserts follow one another, never overlap.
    t->span(s.arrived, at - s.arrived, s.request.client ? *s.request.client + " inserts" : "inserts", "insert",
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

void ReplicatedTable::reply_direct(const InsertRequest& request, sim::Time at, QueryStatus status) {
  const sim::Time deadline = sim_.now() + request.client_timeout;
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
  // The client's socket timeout fires first: it is told now, the server goes on.
  if (!s.client_done && at > s.deadline) reply(s, s.deadline, QueryStatus::CLIENT_TIMEOUT);
  sim_.schedule(at, id_, type, pack(slot, s.version));
}

void ReplicatedTable::begin_insert(const InsertRequest& request) {
  ++counters_.inserts;
  const sim::Time now = sim_.now();
  if (auto* t = sim_.trace(); t && t->detail_at(now)) t->counter(now, "keeper", "in_flight", keeper_.in_flight(now));
  const int r = static_cast<int>(replica_choice_.below(replicas_.size()));
  const Replica& rep = replicas_[static_cast<std::size_t>(r)];
  if (rep.down) {
    // A dead host never answers; a dead server process refuses the connection.
    reply_direct(request, rep.hang ? sim::Time::max() : now + kNetworkRoundTrip,
                 QueryStatus::NETWORK_ERROR);
    return;
  }
  // ReplicatedMergeTreeSink::onStart: delayInsertOrThrowIfNeeded, before
  // anything is written (MergeTreeParts::gate).
  sync_parts(now);
  const MergeTreeParts::Gate gate = parts_.gate();
  if (gate.refuse) {
    ++counters_.too_many_parts;
    reply_direct(request, now + kNetworkRoundTrip, QueryStatus::TOO_MANY_PARTS);
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
                       keeper::KeeperClient::INSERTS);
      reply_direct(request, now + keeper_.expected_request_time(now) * 3,
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
  s.orphan = false;
  s.commit_unknown = false;
  s.committed = false;
  s.arrived = now;
  s.deadline = now + request.client_timeout;
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
  sim::Time keeper_start = now + gate.delay + local_work(options_, rows, z);
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

sim::Time ReplicatedTable::local_work(const ClickHouseOptions& options, std::int64_t rows, double z) {
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
  return keeper_.expected_request_time(now) * options_.keeper_requests_per_fetch +
         options_.replication_fetch_latency;
}

void ReplicatedTable::flush_aggregate_latencies() {
  if (pending_latency_profile_ == nullptr || pending_latency_count_ == 0) return;
  const auto& profile = *pending_latency_profile_;
  const auto strata = static_cast<std::int64_t>(profile.size());
  for (std::size_t q = 0; q < profile.size(); ++q) {
    const std::int64_t weight = pending_latency_count_ / strata +
                                (static_cast<std::int64_t>(q) < pending_latency_count_ % strata ? 1 : 0);
    if (weight > 0) insert_latency_us_.add(profile[q], weight);
  }
  pending_latency_count_ = 0;
}

void ReplicatedTable::add_aggregate_inserts(std::int64_t count,
                                            const std::array<std::int64_t, 1000>& latency_us,
                                            std::int64_t keeper_map_queries) {
  if (count <= 0 && keeper_map_queries <= 0) return;
  const sim::Time now = sim_.now();
  counters_.inserts += count;
  counters_.parts += count;
  counters_.answers[static_cast<int>(QueryStatus::OK)] += count;
  counters_.keeper_map_queries += keeper_map_queries;
  steady_merges_ += static_cast<double>(count) * steady_merges_per_insert_;
  if (insert_deduplicate_) window_.insert_anonymous(count, now);
  parts_since_log_clear_ += count;
  for (auto& rep : replicas_) {
    rep.blocks_since_run += window_.enabled() && insert_deduplicate_ ? count : 0;
    rep.parts_since_run += count;
  }
  // Their server times, as the steady state spreads them (the profile is
  // the steady state's, cached: the same object while the state stays);
  // each part reaches the other replicas after their Keeper requests and
  // the fetch.
  if (pending_latency_profile_ != &latency_us) flush_aggregate_latencies();
  pending_latency_profile_ = &latency_us;
  pending_latency_count_ += count;
  const sim::Time lag = keeper_.expected_request_time(now) * options_.keeper_requests_per_fetch +
                        options_.replication_fetch_latency;
  replication_lag_us_.add(lag.us, count * (static_cast<std::int64_t>(replicas_.size()) - 1));
  maybe_wake_cleanup();
}

sim::Time ReplicatedTable::merge_keeper_time() const {
  return keeper_.expected_request_time(sim_.now()) * options_.keeper_requests_per_merge;
}

void ReplicatedTable::sync_parts(sim::Time now) {
  // Parts are counted per day (event_day and insert_day both start a new
  // partition at midnight for the records arriving now); "none" has one.
  const auto partition =
      options_.partition_by == "none" ? 0u : static_cast<std::uint32_t>(now.us / sim::Time::days(1).us);
  if (partition != parts_partition_) {
    parts_partition_ = partition;
    parts_.new_partition();
  }
  parts_.advance(now, merge_keeper_time());
  load_merges(now);
}

std::int64_t ReplicatedTable::keeper_requests_of_a_merge() const {
  return 1 + static_cast<std::int64_t>(replicas_.size()) * options_.keeper_requests_per_merge;
}

void ReplicatedTable::load_merges(sim::Time now) {
  // Each replica sends its requests for a merge one after another.
  const std::int64_t assigned = parts_.merges() - merges_loaded_;
  if (assigned <= 0) return;
  merges_loaded_ = parts_.merges();
  keeper_.add_load(now, assigned * keeper_requests_of_a_merge(), keeper::KeeperClient::REPLICATION,
                   assigned * static_cast<std::int64_t>(replicas_.size()));
}

void ReplicatedTable::set_aggregate_rate(double inserts_per_s, double keeper_map_requests_per_s,
                                         double rows_per_insert) {
  const sim::Time now = sim_.now();
  // The parts of a stretch of Poisson inserts at this rate (a declared part
  // of the aggregate shortcut, models/clickhouse/merge_tree_parts.h): its
  // peak is the stretch's, and the explicit count resumes from its end
  // state unless it already holds more.
  steady_merges_per_insert_ = 0;
  if (inserts_per_s > 0) {
    sync_parts(now);
    const SteadyParts& steady =
        steady_parts_cached(parts_.settings(), inserts_per_s,
                            rows_per_insert * static_cast<double>(options_.row_bytes), merge_keeper_time());
    steady_merges_per_insert_ = steady.merges_per_insert;
    if (parts_.active() <= steady.end_state.active()) {
      const std::int64_t peak = parts_.peak();
      const std::int64_t merges = parts_.merges();
      parts_ = steady.end_state;
      parts_.shift(steady.end_time, now);
      // Keep this run's counts: the snapshot's merges are not new ones.
      steady_merges_ += static_cast<double>(merges - parts_.merges());
      merges_loaded_ = parts_.merges();
      parts_.note_peak(peak);
    }
    parts_.note_peak(steady.peak);
  }
  if (keeper_insert_stream_ < 0) {
    keeper_insert_stream_ = keeper_.add_stream(now, keeper::KeeperClient::INSERTS);
    keeper_replication_stream_ = keeper_.add_stream(now, keeper::KeeperClient::REPLICATION);
    keeper_map_stream_ = keeper_.add_stream(now, keeper::KeeperClient::KEEPER_MAP);
  }
  aggregate_rate_ = inserts_per_s;
  // allocateBlockNumber + the commit multi (+ checkQuorumPrecondition);
  // the other replicas' fetches (+ the quorum node's updates).
  const double per_insert = 2.0 + (quorum_ > 0 ? 3.0 : 0.0);
  const double per_part =
      static_cast<double>((static_cast<std::int64_t>(replicas_.size()) - 1) * options_.keeper_requests_per_fetch) +
      (quorum_ > 0 ? static_cast<double>(1 + 2 * (quorum_ - 1)) : 0.0) +
      steady_merges_per_insert_ * static_cast<double>(keeper_requests_of_a_merge());
  keeper_.set_stream(keeper_insert_stream_, now, inserts_per_s * per_insert);
  keeper_.set_stream(keeper_replication_stream_, now, inserts_per_s * per_part);
  keeper_.set_stream(keeper_map_stream_, now, keeper_map_requests_per_s);
  if (inserts_per_s > 0 && !wake_check_pending_ && options_.cleanup_thread_preferred_points_per_iteration > 0) {
    wake_check_pending_ = true;
    sim_.schedule_in(wake_check_every(), id_, kWakeCheck);
  }
}

sim::Time ReplicatedTable::wake_check_every() const {
  // cleanup_delay_period / 4, as wakeupEarlierIfNeeded throttles itself (at
  // least a second here, where nothing else paces it).
  return std::max(sim::Time{sim::Time::seconds(options_.cleanup_delay_period).us / 4},
                  sim::Time::seconds(1));
}

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
  const keeper::KeeperAnswer answer = keeper_.request(now, requests, keeper::KeeperClient::INSERTS);
  if (!answer.ok) {
    if (answer.operation_timeout) {
      // The ZooKeeper client finalizes its session on an operation timeout:
      // the replica's tables go read-only until a new session is set up.
      sim_.schedule(at + answer.latency, id_, kSessionLost,
                    pack(static_cast<std::uint32_t>(s.replica), rep.epoch));
    }
    fail_attempt(slot, at + answer.latency, QueryStatus::KEEPER_EXCEPTION);
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
  if (!s.committed) ++counters_.not_committed;
  reply(s, sim_.now(), status);
  release(slot);
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
  // reads and updates it.
  keeper_.add_load(sim_.now(), 1 + 2 * (quorum_ - 1), keeper::KeeperClient::REPLICATION);
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
  keeper_.add_load(
      now, (static_cast<std::int64_t>(replicas_.size()) - 1) * options_.keeper_requests_per_fetch,
      keeper::KeeperClient::REPLICATION, static_cast<std::int64_t>(replicas_.size()) - 1);
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
  return from + keeper_.expected_request_time(now) * options_.keeper_requests_per_fetch +
         options_.replication_fetch_latency;
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
      schedule_slot(slot, std::max(last_change + options_.insert_quorum_timeout, sim_.now()), kFinish);
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

QueryAnswer ReplicatedTable::server_query(sim::Time timeout) {
  const int r = static_cast<int>(server_query_choice_.below(replicas_.size()));
  const Replica& rep = replicas_[static_cast<std::size_t>(r)];
  if (!rep.down) return QueryAnswer{kNetworkRoundTrip, QueryStatus::OK};
  return rep.hang ? QueryAnswer{timeout, QueryStatus::CLIENT_TIMEOUT}
                  : QueryAnswer{kNetworkRoundTrip, QueryStatus::NETWORK_ERROR};
}

bool ReplicatedTable::any_replica_down() const {
  for (const auto& rep : replicas_) {
    if (rep.down) return true;
  }
  return false;
}

QueryAnswer ReplicatedTable::keeper_map_query(int requests) {
  ++counters_.keeper_map_queries;
  const sim::Time now = sim_.now();
  const int r = static_cast<int>(keeper_map_choice_.below(replicas_.size()));
  const Replica& rep = replicas_[static_cast<std::size_t>(r)];
  if (rep.down) {
    ++counters_.keeper_map_failures;
    return rep.hang ? QueryAnswer{sim::Time::max(), QueryStatus::CLIENT_TIMEOUT}
                    : QueryAnswer{kNetworkRoundTrip, QueryStatus::NETWORK_ERROR};
  }
  // StorageKeeperMap: a read by key is one multi-get; a write is an exists
  // and a multi (create or set). No retries: a Keeper error is 999.
  const keeper::KeeperAnswer answer =
      keeper_.request(now, requests, keeper::KeeperClient::KEEPER_MAP);
  if (!answer.ok) {
    ++counters_.keeper_map_failures;
    if (answer.operation_timeout) {
      sim_.schedule(now + answer.latency, id_, kSessionLost,
                    pack(static_cast<std::uint32_t>(r), rep.epoch));
    }
    return QueryAnswer{answer.latency, QueryStatus::KEEPER_EXCEPTION};
  }
  return QueryAnswer{answer.latency, QueryStatus::OK};
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
    case kWakeCheck:
      // Commits call the background scheduler's wake-up check all the time;
      // aggregated inserts commit none, so it runs here at its own pace.
      wake_check_pending_ = false;
      if (aggregate_rate_ <= 0) return;
      if (aggregate_) aggregate_->materialize(sim_.now());
      maybe_wake_cleanup();
      wake_check_pending_ = true;
      sim_.schedule_in(wake_check_every(), id_, kWakeCheck);
      return;
    default:
      break;
  }
  Replica& rep = replicas_[index];
  if (event.type == kSessionsExpire) {
    // Every server's session times out while Keeper has no leader; the tables
    // are read-only until the new leader accepts new sessions.
    if (version != election_ || keeper_.available(sim_.now())) return;
    for (std::size_t r = 0; r < replicas_.size(); ++r) {
      if (!replicas_[r].down) session_expired(static_cast<int>(r), keeper_.unavailable_until());
    }
    return;
  }
  if (rep.epoch != version) return;
  switch (event.type) {
    case kReplicaUp:
      rep.down = false;
      rep.schedule.restart_server();
      start_cleanup(static_cast<int>(index), sim_.now());  // runs at server start-up
      return;
    case kSessionBack:
      session_back(static_cast<int>(index));
      return;
    case kSessionCheck:
      // ReplicatedMergeTreeRestartingThread: a new session and the replica's
      // start-up requests must get through Keeper.
      if (keeper_.available(sim_.now()) &&
          keeper_.expected_wait(sim_.now()) < keeper_.options().operation_timeout) {
        session_back(static_cast<int>(index));
      } else {
        sim_.schedule_in(sim::Time::seconds(options_.zookeeper_session_expiration_check_period),
                         id_, kSessionCheck, pack(index, rep.epoch));
      }
      return;
    case kSessionLost:
      if (!rep.down && !rep.read_only) session_expired(static_cast<int>(index), sim::Time::max());
      return;
    default:
      PIPESIM_INVARIANT(false, "unknown table event");
  }
}

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
  rep.read_only = false;  // the restarted server opens a new session
  rep.read_only_until = sim::Time::max();
  ++rep.epoch;
  stop_cleanup(replica);
  sim_.schedule(until, id_, kReplicaUp, pack(static_cast<std::uint32_t>(replica), rep.epoch));
  for (std::uint32_t slot = 0; slot < pending_.size(); ++slot) {
    Insert& s = pending_[slot];
    if (!s.in_use || s.replica != replica || s.orphan) continue;
    const QueryStatus seen = hang ? QueryStatus::CLIENT_TIMEOUT : QueryStatus::NETWORK_ERROR;
    const sim::Time seen_at = hang ? std::max(s.deadline, now) : now + kNetworkRoundTrip;
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

void ReplicatedTable::lose_session(int replica, sim::Time until) {
  session_expired(replica, until);
}

void ReplicatedTable::session_expired(int replica, sim::Time until) {
  const sim::Time now = sim_.now();
  Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  if (rep.down) return;
  ++counters_.session_losses;
  rep.read_only = true;
  rep.read_only_until = until;
  ++rep.epoch;
  stop_cleanup(replica);  // ZSESSIONEXPIRED: the cleanup thread stops until the restart
  if (until != sim::Time::max()) {
    sim_.schedule(std::max(until, now), id_, kSessionBack,
                  pack(static_cast<std::uint32_t>(replica), rep.epoch));
  } else {
    sim_.schedule_in(sim::Time::seconds(options_.zookeeper_session_expiration_check_period), id_,
                     kSessionCheck, pack(static_cast<std::uint32_t>(replica), rep.epoch));
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
      // A request of an expired session is not applied, but the server
      // cannot know whether a commit multi in flight got through.
      if (now >= s.commit_sent_at) s.commit_unknown = true;
      fail_attempt(slot, now, QueryStatus::TABLE_IS_READ_ONLY);
    } else if (s.phase == Phase::QUORUM) {
      // The wait for the quorum loses its watch: the status is unknown (the part is committed).
      ++s.version;
      complete(slot, QueryStatus::UNKNOWN_STATUS_OF_INSERT);
    }
  }
  replan_quorums_after(replica, until);
}

void ReplicatedTable::session_back(int replica) {
  Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  rep.read_only = false;
  rep.read_only_until = sim::Time::max();
  start_cleanup(replica, sim_.now());  // the restarting thread starts it again: it runs at once
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
             : available_again +
                   keeper_.expected_request_time(now) * options_.keeper_requests_per_fetch +
                   options_.replication_fetch_latency;
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

void ReplicatedTable::start_cleanup(int replica, sim::Time at) {
  Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  rep.cleanup_active = true;
  ++rep.cleanup_version;
  sim_.schedule(at, id_, kCleanup, pack(static_cast<std::uint32_t>(replica), rep.cleanup_version));
}

void ReplicatedTable::stop_cleanup(int replica) {
  Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  rep.cleanup_active = false;
  ++rep.cleanup_version;
}

void ReplicatedTable::run_cleanup(int replica) {
  const sim::Time now = sim_.now();
  Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  ++counters_.cleanup_runs;
  double points = 0;
  if (keeper_.available(now) && keeper_.expected_wait(now) <= keeper_.options().operation_timeout) {
    // Every replica is a leader (multiple leaders since 20.x), so each one's
    // thread runs clearOldLogs and clearOldBlocks; whichever comes first
    // after new blocks does the removing.
    const std::int64_t removed = window_.clear_old_blocks();
    counters_.block_ids_removed += removed;
    const std::int64_t logs = parts_since_log_clear_;
    parts_since_log_clear_ = 0;
    // getChildren(blocks), exists() of the blocks it has not cached yet, a
    // remove per old block; exists(log), and when there is something to
    // clear getChildren(replicas), 4 reads per replica, getChildren(log), a multi.
    const auto r = static_cast<std::int64_t>(replicas_.size());
    // The thread sends them one after another, each waiting for its answer.
    keeper_.add_load(now, 2 + rep.blocks_since_run + removed + (logs > 0 ? 3 + 4 * r : 0),
                     keeper::KeeperClient::CLEANUP);
    // iterate(): points = (blocks / 2 + (log entries + outdated parts) / 1.3) / 3.
    // Each inserted part makes ~1.3 log entries and ~1.3 outdated parts (its
    // merges), so the log entries and outdated parts removed now, divided by
    // 1.3, are the parts inserted since the log was last cleared and since
    // this replica last ran (model: merges keep pace with inserts).
    points = (static_cast<double>(removed) / 2.0 + static_cast<double>(logs) +
              static_cast<double>(rep.parts_since_run)) /
             3.0;
  }
  // Otherwise its Keeper requests fail: the iteration throws and counts 0 points.
  rep.blocks_since_run = 0;
  rep.parts_since_run = 0;
  rep.last_run = now;
  rep.has_run = true;
  const sim::Time sleep = rep.schedule.after_iteration(points, rep.stream);
  sim_.schedule(now + sleep, id_, kCleanup,
                pack(static_cast<std::uint32_t>(replica), rep.cleanup_version));
}

void ReplicatedTable::maybe_wake_cleanup() {
  // ReplicatedMergeTreeCleanupThread::wakeupEarlierIfNeeded, called by the
  // replica's background job scheduler: at most every cleanup_delay_period / 4,
  // wake a thread that last ran at least cleanup_delay_period ago if 2 x the
  // preferred batch of outdated parts waits.
  const std::int64_t preferred = options_.cleanup_thread_preferred_points_per_iteration;
  if (preferred == 0) return;
  const sim::Time now = sim_.now();
  const sim::Time period = sim::Time::seconds(options_.cleanup_delay_period);
  const sim::Time check_every{period.us / 4};
  for (std::size_t r = 0; r < replicas_.size(); ++r) {
    Replica& rep = replicas_[r];
    if (!rep.cleanup_active || !rep.has_run || rep.down || rep.read_only) continue;
    if (now - rep.last_wakeup_check < check_every) continue;
    rep.last_wakeup_check = now;
    if (now - rep.last_run < period) continue;
    if (static_cast<double>(rep.parts_since_run) * kPartsNumberAmplification <
        2.0 * static_cast<double>(preferred)) {
      continue;
    }
    start_cleanup(static_cast<int>(r), now);
  }
}

}  // namespace pipesim::clickhouse
