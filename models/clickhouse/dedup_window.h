// The block ids of a ReplicatedMergeTree table kept in Keeper under
// /blocks (docs/model.md §4.5). An insert's commit creates its block id's node in the
// same Keeper transaction as the part; a later insert whose block id's node
// exists is a dedup hit. Nodes are not removed when the window moves on: the
// cleanup thread of a replica removes them in clearOldBlocks
// (ReplicatedMergeTreeCleanupThread.cpp), keeping the newest
// `replicated_deduplication_window` nodes of the whole table (all partitions
// together) and only those whose ctime is within
// `replicated_deduplication_window_seconds` of the newest node's ctime. Between
// two cleanups an id can outlive the window.
// A window of 0 blocks disables deduplication: no node is written or checked
// (ReplicatedMergeTreeSink: deduplicate = replicated_deduplication_window != 0).
//
// Invariants: ids are kept in ctime order; every kept id is in the lookup set.
#pragma once

#include <cstdint>
#include <deque>

#include "models/clickhouse/block_id_set.h"
#include "sim/engine/time.h"

namespace pipesim::clickhouse {

class DedupWindow {
 public:
  DedupWindow(std::int64_t blocks, sim::Time max_age) : blocks_(blocks), max_age_(max_age) {}

  [[nodiscard]] bool enabled() const { return blocks_ != 0; }
  // True when the block id's node exists (a dedup hit).
  [[nodiscard]] bool contains(const BlockId& id) const { return enabled() && ids_.contains(id); }
  // A commit created the block id's node at `now`. REQUIRES: !contains(id),
  // now >= the newest node's ctime.
  void insert(const BlockId& id, sim::Time now);
  // `count` block ids of inserts advanced in aggregate, created at `now`:
  // counted, never matched (their tokens are of batches nobody redelivers).
  void insert_anonymous(std::int64_t count, sim::Time now);
  // clearOldBlocks: removes the nodes beyond the newest `blocks` and those
  // older than max_age before the newest; returns how many it removed.
  std::int64_t clear_old_blocks();

  [[nodiscard]] std::int64_t size() const { return size_; }
  [[nodiscard]] std::int64_t blocks() const { return blocks_; }
  [[nodiscard]] sim::Time max_age() const { return max_age_; }

 private:
  struct Entry {
    BlockId id;
    sim::Time ctime;
    std::int64_t anonymous = 0;  // > 0: a run of that many aggregated ids
  };

  std::int64_t blocks_;
  sim::Time max_age_;
  std::deque<Entry> order_;  // oldest first
  BlockIdSet ids_;           // looked up, never iterated
  std::int64_t size_ = 0;    // ids kept, anonymous ones included
};

}  // namespace pipesim::clickhouse
