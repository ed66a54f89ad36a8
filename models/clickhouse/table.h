// A Replicated(Replacing)MergeTree table on its replicas (SPEC §4.5). An
// insert reaches one replica; the replica derives the block id from the
// dedup token, checks the table's window, and either answers a dedup hit or
// writes a part and commits part + block id through Keeper. The server's
// work goes on whatever the client does: a client timeout does not cancel it.
#pragma once

#include <cstdint>
#include <vector>

#include "models/broker/partition_log.h"
#include "models/clickhouse/clickhouse_options.h"
#include "models/clickhouse/dedup_window.h"
#include "models/keeper/keeper.h"
#include "models/ledger/ledger.h"
#include "sim/engine/random.h"
#include "sim/engine/simulation.h"

namespace pipesim::clickhouse {

struct InsertRequest {
  int partition = 0;
  std::int64_t first_offset = 0;  // records inserted: [first_offset, last_offset]
  std::int64_t last_offset = 0;
  BlockId block;  // from the insert_deduplication_token
  ledger::InsertTag tag = ledger::InsertTag::NORMAL;
};

// What the server will answer, and when (from the start of the insert).
struct InsertAnswer {
  sim::Time latency;
  // False when the server does not commit the insert: the client then gets
  // a retriable error (e.g. 159 TIMEOUT_EXCEEDED) unless it timed out first.
  bool committed = true;
};

struct TableCounters {
  std::int64_t inserts = 0;     // inserts that reached the server
  std::int64_t dedup_hits = 0;  // answered from the window, nothing written
  std::int64_t parts = 0;       // parts written
  std::int64_t failed = 0;      // inserts the server did not commit
};

class ReplicatedTable final : public sim::Component {
 public:
  ReplicatedTable(sim::Simulation& sim, const ClickHouseOptions& options,
                  const std::vector<broker::PartitionLog>& logs, ledger::Ledger& ledger,
                  keeper::Keeper& keeper, std::uint64_t seed);

  // Starts an insert at now(). The rows (or the dedup hit) take effect at
  // now() + latency when the insert commits.
  InsertAnswer begin_insert(const InsertRequest& request);

  void handle(const sim::Event& event) override;

  // insert_timeout fault: inserts that arrive before `until` hang until then
  // (the server is stuck), and then commit with probability `server_commits`.
  void stall(sim::Time until, double server_commits);

  [[nodiscard]] const TableCounters& counters() const { return counters_; }
  // Keeper operations of an insert that writes a part (model).
  [[nodiscard]] std::int64_t keeper_ops_per_insert() const { return options_.keeper_ops_per_insert; }

  static std::int64_t default_window_blocks(const std::string& version);
  static std::int64_t default_window_seconds(const std::string& version);

 private:
  struct Pending {
    InsertRequest request;
    std::vector<broker::IdPiece> pieces;
    bool in_use = false;
    bool commits = true;
  };
  void commit(std::uint32_t slot);

  sim::Simulation& sim_;
  ClickHouseOptions options_;
  const std::vector<broker::PartitionLog>& logs_;
  ledger::Ledger& ledger_;
  keeper::Keeper& keeper_;
  sim::RandomStream latency_stream_;
  sim::RandomStream outcome_stream_;
  sim::Time stall_until_{};
  double stall_server_commits_ = 1.0;
  DedupWindow window_;
  sim::ComponentId id_;
  std::vector<Pending> pending_;
  std::vector<std::uint32_t> free_slots_;
  TableCounters counters_;
};

}  // namespace pipesim::clickhouse
