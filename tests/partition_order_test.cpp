// The order in which put() visits partitions: Java HashMap iteration order.
#include <gtest/gtest.h>

#include "models/sink/partition_order.h"

namespace pipesim::sink {
namespace {

TEST(PartitionOrder, JavaStringHashMatchesKnownValues) {
  // "hello".hashCode() == 99162322 and "".hashCode() == 0 in Java.
  EXPECT_EQ(java_string_hash("hello"), 99162322);
  EXPECT_EQ(java_string_hash(""), 0);
  // Overflow wraps like a Java int: "polygenelubricants".hashCode() == Integer.MIN_VALUE.
  EXPECT_EQ(java_string_hash("polygenelubricants"), -2147483648);
}

std::vector<std::string> ordered(const std::vector<std::string>& keys) {
  std::vector<std::string> out;
  for (const auto i : java_hashmap_order(keys)) out.push_back(keys[i]);
  return out;
}

TEST(PartitionOrder, EightPartitionsOfATopicAreNotVisitedInNumericOrder) {
  // Computed independently (Python: String.hashCode, h ^ (h >>> 16), 16 buckets).
  EXPECT_EQ(ordered({"events-0", "events-1", "events-2", "events-3", "events-4", "events-5",
                     "events-6", "events-7"}),
            (std::vector<std::string>{"events-4", "events-5", "events-6", "events-7", "events-0",
                                      "events-1", "events-2", "events-3"}));
}

TEST(PartitionOrder, TableGrowsPastThreeQuartersLoad) {
  std::vector<std::string> keys;
  for (int i = 0; i < 16; ++i) keys.push_back("events-" + std::to_string(i));
  EXPECT_EQ(ordered(keys),
            (std::vector<std::string>{"events-0", "events-1", "events-2", "events-3", "events-8",
                                      "events-9", "events-4", "events-15", "events-5", "events-6",
                                      "events-7", "events-11", "events-12", "events-13",
                                      "events-14", "events-10"}));
  EXPECT_EQ(ordered({"events-7", "events-3", "events-12"}),
            (std::vector<std::string>{"events-7", "events-12", "events-3"}));
}

}  // namespace
}  // namespace pipesim::sink
