#include "models/sink/partition_order.h"

#include <cstdint>

namespace pipesim::sink {

std::int32_t java_string_hash(std::string_view s) {
  std::uint32_t h = 0;
  for (const unsigned char c : s) h = 31u * h + c;
  return static_cast<std::int32_t>(h);
}

std::vector<std::size_t> java_hashmap_order(const std::vector<std::string>& keys) {
  // Collectors.groupingBy fills a HashMap with computeIfAbsent (OpenJDK 8-25
  // java.util.HashMap): the table is created (16 buckets, threshold 12) or
  // doubled at the START of a call when size > threshold, so the last key
  // never triggers a resize; a new key is linked at the HEAD of its bucket
  // (tab[i] = newNode(hash, key, v, first)); a resize splits each bucket into
  // its low and high halves keeping their order. Bins never treeify here: a
  // bin of 8 in a table under 64 buckets resizes instead, and topic-partition
  // keys do not collide that much.
  std::vector<std::uint32_t> hash(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto h = static_cast<std::uint32_t>(java_string_hash(keys[i]));
    hash[i] = h ^ (h >> 16);
  }
  std::vector<std::vector<std::size_t>> table;
  std::size_t threshold = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (table.empty() || i > threshold) {
      const std::size_t capacity = table.empty() ? 16 : 2 * table.size();
      std::vector<std::vector<std::size_t>> grown(capacity);
      for (const auto& bin : table) {
        for (const std::size_t k : bin) grown[hash[k] & (capacity - 1)].push_back(k);
      }
      table = std::move(grown);
      threshold = capacity / 4 * 3;
    }
    auto& bin = table[hash[i] & (table.size() - 1)];
    bin.insert(bin.begin(), i);
  }
  std::vector<std::size_t> order;
  order.reserve(keys.size());
  for (const auto& bin : table) order.insert(order.end(), bin.begin(), bin.end());
  return order;
}

}  // namespace pipesim::sink
