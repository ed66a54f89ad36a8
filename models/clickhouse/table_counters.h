// What ReplicatedTable counts for the run's metrics (models/clickhouse/table.h).
#pragma once

#include <cstdint>

#include "models/clickhouse/query_status.h"

namespace pipesim::clickhouse {

struct TableCounters {
  std::int64_t inserts = 0;        // inserts that reached a replica
  std::int64_t dedup_hits = 0;     // answered from the block ids, nothing written
  std::int64_t parts = 0;          // parts written and committed
  std::int64_t not_committed = 0;  // inserts the server gave up (nothing written)
  // Insert outcomes the client saw.
  std::int64_t answers[static_cast<int>(QueryStatus::COUNT)] = {};
  std::int64_t keeper_map_queries = 0;  // the sink's state queries of aggregated stretches
  std::int64_t cleanup_runs = 0;
  std::int64_t block_ids_removed = 0;
  std::int64_t keeper_retries = 0;
  std::int64_t session_losses = 0;    // Keeper sessions expired (every table of the server read-only)
  std::int64_t restart_attempts = 0;  // ReplicatedMergeTreeRestartingThread's tries for a new session
  std::int64_t inserts_delayed = 0;  // slept for too many parts
  std::int64_t too_many_parts = 0;   // refused with 252
};

}  // namespace pipesim::clickhouse
