#include "models/clickhouse/dedup_window.h"

#include "sim/engine/invariant.h"

namespace pipesim::clickhouse {

void DedupWindow::insert(const BlockId& id, sim::Time now) {
  if (!enabled()) return;
  PIPESIM_INVARIANT(order_.empty() || order_.back().ctime <= now, "block ids out of ctime order");
  order_.push_back(Entry{id, now, 0});
  ++size_;
  const bool added = ids_.insert(id);
  PIPESIM_INVARIANT(added, "a block id already in the window");
}

void DedupWindow::insert_anonymous(std::int64_t count, sim::Time now) {
  if (!enabled() || count <= 0) return;
  PIPESIM_INVARIANT(order_.empty() || order_.back().ctime <= now, "block ids out of ctime order");
  if (!order_.empty() && order_.back().anonymous > 0 && order_.back().ctime == now) {
    order_.back().anonymous += count;
  } else {
    order_.push_back(Entry{BlockId{}, now, count});
  }
  size_ += count;
}

std::int64_t DedupWindow::clear_old_blocks() {
  if (order_.empty()) return 0;
  // The newest node's ctime is "current" time; a node stays if it is among
  // the newest `blocks_` and its ctime >= newest - max_age.
  const sim::Time newest = order_.back().ctime;
  std::int64_t removed = 0;
  while (!order_.empty() && (size_ > blocks_ || order_.front().ctime < newest - max_age_)) {
    Entry& e = order_.front();
    if (e.anonymous > 0) {
      // Part of a run: as many as the count rule asks, or all if too old.
      const std::int64_t cut =
          e.ctime < newest - max_age_ ? e.anonymous : std::min(e.anonymous, size_ - blocks_);
      e.anonymous -= cut;
      size_ -= cut;
      removed += cut;
      if (e.anonymous == 0) order_.pop_front();
      continue;
    }
    ids_.erase(e.id);
    order_.pop_front();
    --size_;
    ++removed;
  }
  return removed;
}

}  // namespace pipesim::clickhouse
