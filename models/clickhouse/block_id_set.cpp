#include "models/clickhouse/block_id_set.h"

#include <utility>

#include "sim/engine/invariant.h"

namespace pipesim::clickhouse {

std::size_t BlockIdSet::home(const BlockId& id) const {
  // Fibonacci hashing: the high bits of the product, so that ids differing
  // only in low bits of their offsets spread over the whole table.
  const auto h = static_cast<std::uint64_t>(BlockIdHash{}(id)) * 0x9E3779B97F4A7C15ULL;
  return static_cast<std::size_t>(h >> shift_);
}

std::size_t BlockIdSet::find_slot(const BlockId& id) const {
  std::size_t i = home(id);
  while (!empty_slot(slots_[i]) && !(slots_[i] == id)) i = (i + 1) & mask_;
  return i;
}

bool BlockIdSet::contains(const BlockId& id) const {
  if (size_ == 0) return false;
  return !empty_slot(slots_[find_slot(id)]);
}

bool BlockIdSet::insert(const BlockId& id) {
  PIPESIM_INVARIANT(id.partition != kEmpty, "a block id with partition -1");
  if ((size_ + 1) * 2 > slots_.size()) grow();
  const std::size_t i = find_slot(id);
  if (!empty_slot(slots_[i])) return false;
  slots_[i] = id;
  ++size_;
  return true;
}

bool BlockIdSet::erase(const BlockId& id) {
  if (size_ == 0) return false;
  std::size_t hole = find_slot(id);
  if (empty_slot(slots_[hole])) return false;
  // Backward shift: move up each later entry of the cluster whose home is
  // not between the hole and itself (cyclically), so no probe ever stops
  // early at the hole.
  for (std::size_t j = (hole + 1) & mask_; !empty_slot(slots_[j]); j = (j + 1) & mask_) {
    const std::size_t h = home(slots_[j]);
    const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
    if (!stays) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole] = BlockId{kEmpty, 0, 0, 0};
  --size_;
  return true;
}

void BlockIdSet::grow() {
  const std::size_t capacity = slots_.empty() ? 64 : slots_.size() * 2;
  std::vector<BlockId> old =
      std::exchange(slots_, std::vector<BlockId>(capacity, BlockId{kEmpty, 0, 0, 0}));
  mask_ = capacity - 1;
  shift_ = 64 - __builtin_ctzll(capacity);
  for (const BlockId& b : old) {
    if (!empty_slot(b)) slots_[find_slot(b)] = b;
  }
}

}  // namespace pipesim::clickhouse
