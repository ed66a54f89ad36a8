// The table-wide block-id window of a ReplicatedMergeTree table (SPEC §4.5):
// the most recent `replicated_deduplication_window` block ids of all
// partitions together, and only those younger than
// `replicated_deduplication_window_seconds` measured from the newest block.
// A window of 0 blocks disables deduplication.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_set>

#include "sim/engine/time.h"

namespace pipesim::clickhouse {

// The block id an insert_deduplication_token "<topic>-<partition>-<min>-<max>" yields.
struct BlockId {
  std::int32_t partition = 0;
  std::int64_t min = 0;
  std::int64_t max = 0;
  friend bool operator==(const BlockId&, const BlockId&) = default;
};

struct BlockIdHash {
  std::size_t operator()(const BlockId& b) const {
    std::uint64_t h = static_cast<std::uint64_t>(b.partition) * 0x9E3779B97F4A7C15ULL;
    h ^= static_cast<std::uint64_t>(b.min) + 0x517CC1B727220A95ULL + (h << 6) + (h >> 2);
    h ^= static_cast<std::uint64_t>(b.max) + 0x2545F4914F6CDD1DULL + (h << 6) + (h >> 2);
    return static_cast<std::size_t>(h);
  }
};

class DedupWindow {
 public:
  DedupWindow(std::int64_t blocks, sim::Time max_age) : blocks_(blocks), max_age_(max_age) {}

  // True when the block id is in the window (a dedup hit); otherwise records it.
  bool check_and_insert(const BlockId& id, sim::Time now);
  [[nodiscard]] std::size_t size() const { return order_.size(); }

 private:
  struct Entry {
    BlockId id;
    sim::Time at;
  };
  void trim();

  std::int64_t blocks_;
  sim::Time max_age_;
  std::deque<Entry> order_;
  std::unordered_set<BlockId, BlockIdHash> ids_;  // looked up, never iterated
};

}  // namespace pipesim::clickhouse
