#include "models/clickhouse/table.h"

#include <cmath>

namespace pipesim::clickhouse {

namespace {
constexpr std::uint32_t kCommit = 1;
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
      window_(options.replicated_deduplication_window >= 0 ? options.replicated_deduplication_window
                                                           : default_window_blocks(options.version),
              sim::Time::seconds(options.replicated_deduplication_window_seconds >= 0
                                     ? options.replicated_deduplication_window_seconds
                                     : default_window_seconds(options.version))),
      id_(sim.add_component(this)) {}

InsertAnswer ReplicatedTable::begin_insert(const InsertRequest& request) {
  ++counters_.inserts;
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(pending_.size());
    pending_.emplace_back();
  }
  Pending& p = pending_[slot];
  p.request = request;
  p.in_use = true;
  p.pieces.clear();
  logs_[static_cast<std::size_t>(request.partition)].translate(request.first_offset,
                                                               request.last_offset, p.pieces);
  // Local work (parse, sort, write the part) grows with the rows; a lognormal
  // factor (sigma 0.25) stands for the replica's load. Then the Keeper round
  // trips of the dedup check and the commit.
  const auto rows = request.last_offset - request.first_offset + 1;
  const double local_us = static_cast<double>(options_.insert_base_latency.us +
                                              options_.insert_latency_per_row.us * rows) *
                          std::exp(0.25 * latency_stream_.normal());
  const sim::Time keeper_time = keeper_.submit(sim_.now(), options_.keeper_ops_per_insert);
  sim::Time latency = sim::Time{static_cast<std::int64_t>(local_us)} + keeper_time;
  p.commits = true;
  if (sim_.now() < stall_until_) {
    latency += stall_until_ - sim_.now();
    p.commits = outcome_stream_.bernoulli(stall_server_commits_);
  }
  sim_.schedule_in(latency, id_, kCommit, slot);
  if (auto* t = sim_.trace(); t && t->detail_at(sim_.now())) {
    t->span(sim_.now(), latency, "inserts", "insert",
            {{"partition", request.partition}, {"records", {request.first_offset, request.last_offset}},
             {"token", {request.block.min, request.block.max}}, {"commits", p.commits}});
    t->counter(sim_.now(), "keeper", "in_flight", keeper_.in_flight(sim_.now()));
  }
  return InsertAnswer{latency, p.commits};
}

void ReplicatedTable::handle(const sim::Event& event) {
  if (event.type == kCommit) commit(event.arg);
}

void ReplicatedTable::stall(sim::Time until, double server_commits) {
  stall_until_ = until;
  stall_server_commits_ = server_commits;
}

void ReplicatedTable::commit(std::uint32_t slot) {
  Pending& p = pending_[slot];
  if (!p.commits) {
    ++counters_.failed;
  } else if (window_.check_and_insert(p.request.block, sim_.now())) {
    ++counters_.dedup_hits;
    if (auto* t = sim_.trace()) {
      t->story(sim_.now(), "clickhouse", "dedup_hit",
               "block of token partition " + std::to_string(p.request.block.partition) + " [" +
                   std::to_string(p.request.block.min) + ", " + std::to_string(p.request.block.max) +
                   "] is still in the dedup window: the insert succeeds without writing");
    }
  } else {
    ++counters_.parts;
    const std::uint64_t serial = ledger_.next_insert_serial();
    for (const auto& piece : p.pieces) {
      ledger_.record_rows(p.request.partition,
                          ledger::RowRange{piece.ids, piece.segment_uid, piece.cause, p.request.tag, serial});
    }
  }
  p.in_use = false;
  free_slots_.push_back(slot);
}

}  // namespace pipesim::clickhouse
