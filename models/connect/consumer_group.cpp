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

int ConsumerGroup::offsets_partition_for(const std::string& group_id, std::int64_t partitions) {
  // The UTF-8 name decoded to UTF-16 code units (a code point past U+FFFF
  // is a surrogate pair); a malformed byte counts as itself.
  std::uint32_t h = 0;
  const auto* b = reinterpret_cast<const unsigned char*>(group_id.data());
  const std::size_t n = group_id.size();
  for (std::size_t i = 0; i < n;) {
    std::uint32_t cp = b[i];
    std::size_t len = 1;
    if (cp >= 0xF0 && i + 3 < n) {
      cp = ((cp & 0x07U) << 18) | ((b[i + 1] & 0x3FU) << 12) | ((b[i + 2] & 0x3FU) << 6) |
           (b[i + 3] & 0x3FU);
      len = 4;
    } else if (cp >= 0xE0 && i + 2 < n) {
      cp = ((cp & 0x0FU) << 12) | ((b[i + 1] & 0x3FU) << 6) | (b[i + 2] & 0x3FU);
      len = 3;
    } else if (cp >= 0xC0 && i + 1 < n) {
      cp = ((cp & 0x1FU) << 6) | (b[i + 1] & 0x3FU);
      len = 2;
    }
    i += len;
    if (cp > 0xFFFF) {
      cp -= 0x10000;
      h = 31 * h + (0xD800 + (cp >> 10));
      h = 31 * h + (0xDC00 + (cp & 0x3FFU));
    } else {
      h = 31 * h + cp;
    }
  }
  // Utils.abs: Integer.MIN_VALUE maps to 0 (n & 0x7fffffff).
  const std::uint32_t non_negative = h & 0x7fffffffU;
  return static_cast<int>(non_negative % static_cast<std::uint32_t>(partitions));
}

std::string ConsumerGroup::member_id(const std::string& connector, int task) {
  return "connector-consumer-" + connector + "-" + std::to_string(task);
}

std::vector<std::vector<int>> ConsumerGroup::range_assign(
    int partitions, const std::vector<std::string>& member_ids) {
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
