// ClickHouse replicas and the ReplicatedMergeTree table (SPEC §4.5).
// `version` picks the version's defaults for the dedup window.
#pragma once

#include <cstdint>
#include <string>

#include "sim/config/options.h"
#include "sim/engine/time.h"

namespace pipesim::clickhouse {

struct ClickHouseOptions {
  std::string version = "25.3";
  std::int64_t replicas = 3;
  std::string engine = "ReplacingMergeTree";  // ReplacingMergeTree | MergeTree
  // -1: the version's default (100 before 23.11, 1000 up to 25.8, 10000 from 25.9).
  std::int64_t replicated_deduplication_window = -1;
  // -1: the version's default (604800 up to 25.9, 3600 from 25.10).
  std::int64_t replicated_deduplication_window_seconds = -1;
  std::int64_t insert_quorum = 0;
  // Model: an insert's local work = base + per-row cost (a 500-row insert takes tens of ms).
  sim::Time insert_base_latency = sim::Time::millis(15);
  sim::Time insert_latency_per_row = sim::Time::micros(20);
  // Model: Keeper operations of one insert that writes a part (dedup check + commit).
  std::int64_t keeper_ops_per_insert = 4;
};

template <class V, class O>
void visit(V& v, O& o) requires std::is_same_v<std::remove_const_t<O>, ClickHouseOptions> {
  v.choice("version", o.version, {"23.3", "23.8", "23.11", "24.3", "24.8", "25.3", "25.8", "25.9", "25.10"},
           "ClickHouse version; picks the dedup window defaults");
  v.integer("replicas", o.replicas, 1, 100, "replicas of the ReplicatedMergeTree table");
  v.choice("engine", o.engine, {"ReplacingMergeTree", "MergeTree"},
           "table engine; ReplacingMergeTree folds rows with the same key");
  v.integer("replicated_deduplication_window", o.replicated_deduplication_window, -1,
            100000000, "recent block ids kept for dedup (table-wide); -1: version default");
  v.integer("replicated_deduplication_window_seconds", o.replicated_deduplication_window_seconds,
            -1, 100000000, "max age of kept block ids; -1: version default");
  v.integer("insert_quorum", o.insert_quorum, 0, 100, "replicas an insert waits for (0: off)");
  v.duration("insert_base_latency", o.insert_base_latency, sim::Time::micros(1),
             sim::Time::minutes(10), "model: fixed local cost of an insert");
  v.duration("insert_latency_per_row", o.insert_latency_per_row, sim::Time::micros(0),
             sim::Time::seconds(1), "model: per-row cost of an insert");
  v.integer("keeper_ops_per_insert", o.keeper_ops_per_insert, 1, 100,
            "model: Keeper operations of an insert that writes a part");
  v.ignored({"max_insert_block_size", "async_insert", "wait_for_async_insert",
             "insert_deduplicate", "parts_to_throw_insert", "max_partitions_per_insert_block"});
  v.finish();
}

}  // namespace pipesim::clickhouse
