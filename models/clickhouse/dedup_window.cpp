#include "models/clickhouse/dedup_window.h"

#include "sim/engine/invariant.h"

namespace pipesim::clickhouse {

void DedupWindow::insert(const BlockId& id, sim::Time now) {
  if (!enabled()) return;
  PIPESIM_INVARIANT(order_.empty() || order_.back().ctime <= now, "block ids out of ctime order");
  order_.push_back(Entry{id, now});
  const bool added = ids_.insert(id);
  PIPESIM_INVARIANT(added, "a block id already in the window");
}

std::int64_t DedupWindow::clear_old_blocks() {
  if (order_.empty()) return 0;
  // The newest node's ctime is "current" time; a node stays if it is among
  // the newest `blocks_` and its ctime >= newest - max_age.
  const sim::Time newest = order_.back().ctime;
  std::int64_t removed = 0;
  while (!order_.empty() && (static_cast<std::int64_t>(order_.size()) > blocks_ ||
                             order_.front().ctime < newest - max_age_)) {
    ids_.erase(order_.front().id);
    order_.pop_front();
    ++removed;
  }
  return removed;
}

}  // namespace pipesim::clickhouse
