// ReplicatedTable in aggregate stretches: inserts counted rather than simulated
// one by one (their rows, block ids, Keeper load and latencies), the merges'
// steady state, and the cleanup wake-up check they need.
#include "models/clickhouse/table.h"

#include <algorithm>
#include <cmath>

#include "models/clickhouse/table_detail.h"
#include "sim/engine/invariant.h"

namespace pipesim::clickhouse {

using namespace table_detail;  // the table's event types and slot packing

void ReplicatedTable::flush_aggregate_latencies() {
  if (pending_latency_profile_ == nullptr || pending_latency_count_ == 0) return;
  const auto& profile = *pending_latency_profile_;
  const auto strata = static_cast<std::int64_t>(profile.size());
  for (std::size_t q = 0; q < profile.size(); ++q) {
    const std::int64_t weight =
        pending_latency_count_ / strata +
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
  const sim::Time lag = regime_fetch_keeper_time() + options_.replication_fetch_latency;
  replication_lag_us_.add(lag.us, count * (static_cast<std::int64_t>(replicas_.size()) - 1));
  maybe_wake_cleanup();
}

sim::Time ReplicatedTable::merge_keeper_time() const {
  // Each of them a write (keeper_requests_per_merge: the queue multi, the
  // merged part's commit multi, the queue entry's remove).
  return keeper_.expected_chain_time(sim_.now(), options_.keeper_requests_per_merge,
                                     options_.keeper_requests_per_merge);
}

std::int64_t ReplicatedTable::keeper_writes_of_a_fetch() const {
  // keeper_requests_per_fetch's two multis: the queue entry's (pullLogsToQueue)
  // and the fetched part's commit; the rest are reads.
  return std::min<std::int64_t>(2, options_.keeper_requests_per_fetch);
}

sim::Time ReplicatedTable::fetch_keeper_time(sim::Time now) const {
  return keeper_.expected_chain_time(now, options_.keeper_requests_per_fetch,
                                     keeper_writes_of_a_fetch());
}

sim::Time ReplicatedTable::regime_fetch_keeper_time() const {
  return keeper_.regime_chain_time(options_.keeper_requests_per_fetch, keeper_writes_of_a_fetch());
}

sim::Time ReplicatedTable::regime_merge_keeper_time() const {
  return keeper_.regime_chain_time(options_.keeper_requests_per_merge,
                                   options_.keeper_requests_per_merge);
}

void ReplicatedTable::sync_parts(sim::Time now) {
  // Parts are counted per day (event_day and insert_day both start a new
  // partition at midnight for the records arriving now); "none" has one.
  const auto partition = options_.partition_by == "none"
                             ? 0u
                             : static_cast<std::uint32_t>(now.us / sim::Time::days(1).us);
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
                   assigned * static_cast<std::int64_t>(replicas_.size()), -1,
                   assigned * keeper_requests_of_a_merge());
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
    const SteadyParts& steady = steady_parts_cached(
        parts_.settings(), inserts_per_s, rows_per_insert * static_cast<double>(options_.row_bytes),
        regime_merge_keeper_time());
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
      static_cast<double>((static_cast<std::int64_t>(replicas_.size()) - 1) *
                          options_.keeper_requests_per_fetch) +
      (quorum_ > 0 ? static_cast<double>(1 + 2 * (quorum_ - 1)) : 0.0) +
      steady_merges_per_insert_ * static_cast<double>(keeper_requests_of_a_merge());
  keeper_.set_stream(keeper_insert_stream_, now, inserts_per_s * per_insert);
  keeper_.set_stream(keeper_replication_stream_, now, inserts_per_s * per_part);
  keeper_.set_stream(keeper_map_stream_, now, keeper_map_requests_per_s);
  if (inserts_per_s > 0 && !wake_check_pending_ &&
      options_.cleanup_thread_preferred_points_per_iteration > 0) {
    wake_check_pending_ = true;
    sim_.schedule(sim_.now() + wake_check_every() + commit_wait(), id_, kWakeCheck,
                  pack(0, wake_check_version_));
  }
}

sim::Time ReplicatedTable::commit_wait() {
  if (aggregate_rate_ <= 0) return sim::Time{};
  return sim::Time{std::llround(wake_check_stream_.exponential(1e6 / aggregate_rate_))};
}

sim::Time ReplicatedTable::aggregate_wake_check() { return next_wake_check() + commit_wait(); }

}  // namespace pipesim::clickhouse
