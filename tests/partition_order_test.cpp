// The order in which put() visits partitions: Java HashMap iteration order.
#include <gtest/gtest.h>

#include <initializer_list>

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

// The expected orders are what OpenJDK 17 prints for
//   recs.stream().collect(Collectors.groupingBy(s -> s)).keySet()
// with the records in the order given (the grouping ProxySinkTask.put does).

std::vector<std::string> events(std::initializer_list<int> partitions) {
  std::vector<std::string> out;
  for (const int p : partitions) out.push_back("events-" + std::to_string(p));
  return out;
}

TEST(PartitionOrder, EightPartitionsOfATopicAreNotVisitedInNumericOrder) {
  const auto expected = events({4, 5, 6, 7, 0, 1, 2, 3});
  EXPECT_EQ(ordered(events({0, 1, 2, 3, 4, 5, 6, 7})), expected);
  // One key per bucket: the order does not depend on which came first.
  EXPECT_EQ(ordered(events({7, 6, 5, 4, 3, 2, 1, 0})), expected);
}

TEST(PartitionOrder, WithinABucketTheMostRecentlyFirstSeenComesFirst) {
  // events-0 and events-11 share bucket 8 of 16, events-3 and events-14
  // bucket 11: whichever was seen later is linked at the bucket's head.
  EXPECT_EQ(ordered(events({0, 11})), events({11, 0}));
  EXPECT_EQ(ordered(events({11, 0})), events({0, 11}));
  EXPECT_EQ(ordered(events({7, 3, 14})), events({7, 14, 3}));
  EXPECT_EQ(ordered(events({14, 7, 3})), events({7, 3, 14}));
  // Different buckets: the order does not depend on which came first.
  EXPECT_EQ(ordered(events({7, 3, 12})), events({7, 12, 3}));
  EXPECT_EQ(ordered(events({12, 3})), events({12, 3}));
}

TEST(PartitionOrder, TheTableGrowsBeforeTheKeyAfterThreeQuartersLoad) {
  // 13 keys: the 13th finds size 12, not above the threshold 12, so the
  // table keeps 16 buckets; 16 keys: the 14th doubles it to 32.
  EXPECT_EQ(ordered(events({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})),
            events({8, 9, 4, 5, 6, 7, 11, 0, 12, 1, 2, 3, 10}));
  EXPECT_EQ(ordered(events({12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0})),
            events({8, 9, 4, 5, 6, 7, 0, 11, 1, 12, 2, 3, 10}));
  EXPECT_EQ(ordered(events({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})),
            events({0, 1, 2, 3, 8, 9, 15, 4, 5, 6, 7, 11, 12, 13, 14, 10}));
}

TEST(PartitionOrder, FortyPartitionsSeenInAScrambledOrder) {
  // Partitions (7 i) mod 40 for i = 0..39: two resizes (at 13 and 25 keys).
  std::vector<std::string> keys;
  for (int i = 0; i < 40; ++i) keys.push_back("events-" + std::to_string(i * 7 % 40));
  EXPECT_EQ(ordered(keys),
            events({8,  9,  26, 4,  5,  27, 6,  28, 29, 7,  22, 23, 24, 25, 20, 21, 0,  1,  2,  3,
                    19, 15, 37, 38, 16, 17, 39, 18, 33, 11, 12, 34, 13, 35, 36, 14, 30, 31, 10, 32}));
}

}  // namespace
}  // namespace pipesim::sink
