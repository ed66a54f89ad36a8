// The block id of a ReplicatedMergeTree insert (docs/model.md §4.5).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pipesim::clickhouse {

// The block id of an insert: from its insert_deduplication_token
// "<topic>-<partition>-<min>-<max>" and the table partition its rows go to
// (ClickHouse hashes the token together with the partition id).
struct BlockId {
  // An insert without insert_deduplication_token is deduplicated by the hash
  // of its data: such ids carry this partition and the hash in min and max.
  static constexpr std::int32_t kDataHash = -2;
  std::int32_t partition = 0;  // Kafka partition of the token
  std::int64_t min = 0;
  std::int64_t max = 0;
  std::uint32_t table_partition = 0;
  friend bool operator==(const BlockId&, const BlockId&) = default;
};

struct BlockIdHash {
  std::size_t operator()(const BlockId& b) const {
    std::uint64_t h = static_cast<std::uint64_t>(b.partition) * 0x9E3779B97F4A7C15ULL;
    h ^= static_cast<std::uint64_t>(b.min) + 0x517CC1B727220A95ULL + (h << 6) + (h >> 2);
    h ^= static_cast<std::uint64_t>(b.max) + 0x2545F4914F6CDD1DULL + (h << 6) + (h >> 2);
    h ^=
        static_cast<std::uint64_t>(b.table_partition) + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    return static_cast<std::size_t>(h);
  }
};

}  // namespace pipesim::clickhouse
