// The set of block ids a DedupWindow holds: an open-addressing hash set with
// linear probing and backward-shift deletion (no tombstones), grown at a load
// of one half. A commit looks an id up in it and adds one; each cleanup
// removes the oldest. std::unordered_set made each of those a heap node and
// a pointer chase (3-8% of a run at 10x the production record rate; see
// bench/RESULTS.md). The set is never iterated, so its layout cannot change
// results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/clickhouse/block_id.h"

namespace pipesim::clickhouse {

class BlockIdSet {
 public:
  [[nodiscard]] bool contains(const BlockId& id) const;
  // Adds `id`; returns false (and changes nothing) if it is already there.
  bool insert(const BlockId& id);
  // Removes `id`; returns false if it was not there.
  bool erase(const BlockId& id);
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  // An empty slot holds a partition number no block id has.
  static constexpr std::int32_t kEmpty = -1;
  static bool empty_slot(const BlockId& b) { return b.partition == kEmpty; }
  [[nodiscard]] std::size_t home(const BlockId& id) const;
  // The slot holding `id`, or the empty slot where its probe ends.
  [[nodiscard]] std::size_t find_slot(const BlockId& id) const;
  void grow();

  std::vector<BlockId> slots_;
  std::size_t mask_ = 0;
  int shift_ = 64;
  std::size_t size_ = 0;
};

}  // namespace pipesim::clickhouse
