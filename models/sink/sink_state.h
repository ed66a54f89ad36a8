// Where the connector keeps its per-partition StateRecord (docs/model.md §4.4):
//  - exactlyOnce=false: an in-memory map that belongs to one task instance
//    and is lost when the task restarts (InMemoryState of the connector);
//  - exactlyOnce=true: a KeeperMap table shared by all tasks, surviving
//    restarts; every read and write is a ClickHouse query served by Keeper.
// The same decision logic runs on both.
#pragma once

#include <cstdint>
#include <vector>

#include "models/clickhouse/keeper_map_table.h"
#include "models/sink/decision.h"

namespace pipesim::sink {

class SinkStateStore final : public clickhouse::KeeperMapRows {
 public:
  SinkStateStore(int partitions, bool keeper_map)
      : states_(static_cast<std::size_t>(partitions)),
        reset_(static_cast<std::size_t>(partitions), false),
        keeper_map_(keeper_map) {}

  [[nodiscard]] bool keeper_map() const { return keeper_map_; }
  [[nodiscard]] const StateRecord& get(int partition) const {
    return states_[static_cast<std::size_t>(partition)];
  }
  void set(int partition, const StateRecord& record) {
    states_[static_cast<std::size_t>(partition)] = record;
  }
  // A KeeperMap write applied at the server (clickhouse::KeeperMapTable).
  void write_row(int key, const clickhouse::KeeperMapRow& row) override {
    set(key, StateRecord{static_cast<ProcessingState>(row.state), OffsetRange{row.min, row.max}});
  }
  // A state row deleted or wiped (state_wipe fault, delete_state_row runbook):
  // the partition reads NONE, and what the replay inserts again is a
  // state_reset copy, until the task reads past what was delivered before.
  void reset(int partition) {
    states_[static_cast<std::size_t>(partition)] = StateRecord{};
    reset_[static_cast<std::size_t>(partition)] = true;
  }
  void reset_all() {
    for (std::size_t p = 0; p < states_.size(); ++p) reset(static_cast<int>(p));
  }
  [[nodiscard]] bool was_reset(int partition) const { return reset_[static_cast<std::size_t>(partition)]; }
  void clear_reset(int partition) { reset_[static_cast<std::size_t>(partition)] = false; }
  // A new task instance with in-memory state starts empty (not a reset).
  void clear() {
    for (auto& s : states_) s = StateRecord{};
    for (std::size_t p = 0; p < reset_.size(); ++p) reset_[p] = false;
  }

 private:
  std::vector<StateRecord> states_;
  std::vector<bool> reset_;
  bool keeper_map_;
};

}  // namespace pipesim::sink
