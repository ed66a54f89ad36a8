#include "models/sink/partition_order.h"

#include <algorithm>
#include <numeric>

namespace pipesim::sink {

std::int32_t java_string_hash(std::string_view s) {
  std::uint32_t h = 0;
  for (const unsigned char c : s) h = 31u * h + c;
  return static_cast<std::int32_t>(h);
}

std::vector<std::size_t> java_hashmap_order(const std::vector<std::string>& keys) {
  // HashMap resizes when its size exceeds 0.75 * capacity (initial capacity 16).
  std::size_t capacity = 16;
  while (static_cast<double>(keys.size()) > 0.75 * static_cast<double>(capacity)) capacity *= 2;
  std::vector<std::size_t> bucket(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto h = static_cast<std::uint32_t>(java_string_hash(keys[i]));
    bucket[i] = (h ^ (h >> 16)) & (capacity - 1);
  }
  std::vector<std::size_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return bucket[a] < bucket[b]; });
  return order;
}

}  // namespace pipesim::sink
