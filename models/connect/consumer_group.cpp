#include "models/connect/consumer_group.h"

#include <algorithm>
#include <numeric>

#include "sim/engine/invariant.h"

namespace pipesim::connect {

void ConsumerGroup::commit(int p, std::int64_t offset, sim::Time at) {
  PIPESIM_INVARIANT(offset >= 0, "negative committed offset");
  auto& c = committed_[static_cast<std::size_t>(p)];
  if (c != offset) committed_at_[static_cast<std::size_t>(p)] = at;
  c = offset;
}

void ConsumerGroup::note_delivered(int p, std::int64_t end_offset) {
  auto& d = delivered_[static_cast<std::size_t>(p)];
  d = std::max(d, end_offset);
}

void ConsumerGroup::truncate(int p, std::int64_t end_offset) {
  auto& c = committed_[static_cast<std::size_t>(p)];
  auto& d = delivered_[static_cast<std::size_t>(p)];
  c = std::min(c, end_offset);
  d = std::min(d, end_offset);
}

std::string ConsumerGroup::member_id(const std::string& connector, int task) {
  return "connector-consumer-" + connector + "-" + std::to_string(task);
}

std::vector<std::vector<int>> ConsumerGroup::range_assign(int partitions,
                                                          const std::vector<std::string>& member_ids) {
  std::vector<std::size_t> order(member_ids.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return member_ids[a] < member_ids[b]; });
  std::vector<std::vector<int>> result(member_ids.size());
  if (member_ids.empty()) return result;
  const int members = static_cast<int>(member_ids.size());
  const int per = partitions / members;
  const int extra = partitions % members;
  int next = 0;
  for (int rank = 0; rank < members; ++rank) {
    const int take = per + (rank < extra ? 1 : 0);
    for (int i = 0; i < take; ++i) result[order[static_cast<std::size_t>(rank)]].push_back(next++);
  }
  return result;
}

}  // namespace pipesim::connect
