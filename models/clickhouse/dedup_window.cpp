#include "models/clickhouse/dedup_window.h"

namespace pipesim::clickhouse {

bool DedupWindow::check_and_insert(const BlockId& id, sim::Time now) {
  if (blocks_ == 0) return false;
  if (ids_.contains(id)) return true;
  order_.push_back(Entry{id, now});
  ids_.insert(id);
  trim();
  return false;
}

void DedupWindow::trim() {
  const sim::Time newest = order_.back().at;
  while (!order_.empty() &&
         (static_cast<std::int64_t>(order_.size()) > blocks_ || newest - order_.front().at > max_age_)) {
    ids_.erase(order_.front().id);
    order_.pop_front();
  }
}

}  // namespace pipesim::clickhouse
