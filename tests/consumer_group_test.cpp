// ConsumerGroup: which __consumer_offsets partition holds a group, as
// Kafka's GroupCoordinator.partitionFor computes it. The expected values are
// Java's String.hashCode over UTF-16 code units, computed independently
// (Python: h = 31 * h + unit mod 2^32 over s.encode("utf-16-be")).
#include <gtest/gtest.h>

#include "models/connect/consumer_group.h"

namespace pipesim::connect {
namespace {

TEST(ConsumerGroup, OffsetsPartitionIsTheGroupIdsJavaHashModuloThePartitions) {
  // "connect-clickhouse-sink".hashCode() = -654209595 (0xD9018DC5):
  // Utils.abs keeps the low 31 bits, 1493274053, and 1493274053 % 50 = 3.
  EXPECT_EQ(ConsumerGroup::offsets_partition_for("connect-clickhouse-sink", 50), 3);
  EXPECT_EQ(ConsumerGroup::offsets_partition_for("connect-clickhouse-sink", 42), 5);
  EXPECT_EQ(ConsumerGroup::offsets_partition_for("", 50), 0);
}

TEST(ConsumerGroup, OffsetsPartitionHashesUtf16CodeUnits) {
  // U+20AC is one UTF-16 unit (three UTF-8 bytes); U+1F600 a surrogate pair.
  EXPECT_EQ(ConsumerGroup::offsets_partition_for("connect-\xE2\x82\xAC", 50), 39);
  EXPECT_EQ(ConsumerGroup::offsets_partition_for("connect-\xF0\x9F\x98\x80", 50), 18);
}

}  // namespace
}  // namespace pipesim::connect
