// The table-wide block ids and their cleanup (ReplicatedMergeTreeCleanupThread):
// clearOldBlocks keeps the newest N ids and those within the seconds window
// of the newest one; between cleanups ids outlive the window; the cleanup
// thread's adaptive sleep. Expectations by hand from the real code's rules.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "models/clickhouse/block_id_set.h"
#include "models/clickhouse/cleanup_schedule.h"
#include "models/clickhouse/dedup_window.h"
#include "sim/engine/random.h"

namespace pipesim::clickhouse {
namespace {

using sim::Time;

BlockId token(std::int64_t min, std::int64_t max, int partition = 0) {
  return BlockId{partition, min, max, 0};
}

// The block-id set against std::set on random inserts, lookups and erases
// with many colliding ids (small offset ranges, a few partitions), through
// several growths and long deletion chains.
TEST(BlockIdSet, AgreesWithAnOrderedSetOnRandomOperations) {
  BlockIdSet set;
  std::set<std::tuple<int, std::int64_t, std::int64_t, std::uint32_t>> reference;
  sim::RandomStream rng(3, "test/block-id-set");
  const auto key = [](const BlockId& b) {
    return std::make_tuple(b.partition, b.min, b.max, b.table_partition);
  };
  for (int step = 0; step < 200000; ++step) {
    const std::int64_t min = static_cast<std::int64_t>(rng.below(3000));
    const BlockId id{static_cast<std::int32_t>(rng.below(4)), min,
                     min + static_cast<std::int64_t>(rng.below(3)),
                     static_cast<std::uint32_t>(rng.below(2))};
    // Grow for the first half, then shrink: the set empties through erases.
    const std::uint64_t op = rng.below(step < 100000 ? 3 : 4);
    if (op == 0) {
      ASSERT_EQ(set.insert(id), reference.insert(key(id)).second) << step;
    } else if (op == 1) {
      ASSERT_EQ(set.contains(id), reference.contains(key(id))) << step;
    } else {
      ASSERT_EQ(set.erase(id), reference.erase(key(id)) == 1) << step;
    }
    ASSERT_EQ(set.size(), reference.size()) << step;
  }
  for (const auto& [p, lo, hi, tp] : reference) {
    EXPECT_TRUE(set.contains(BlockId{p, lo, hi, tp}));
  }
}

TEST(DedupWindow, IdsOutliveTheBlockCountUntilTheCleanupRuns) {
  DedupWindow w(3, Time::seconds(604800));
  for (int i = 0; i < 4; ++i) w.insert(token(i * 10, i * 10 + 9), Time::seconds(i));
  // Four ids for a window of three: the oldest is still a hit until a cleanup.
  EXPECT_TRUE(w.contains(token(0, 9)));
  EXPECT_EQ(w.clear_old_blocks(), 1);
  EXPECT_FALSE(w.contains(token(0, 9)));
  EXPECT_TRUE(w.contains(token(10, 19)));
  EXPECT_TRUE(w.contains(token(30, 39)));
  EXPECT_EQ(w.clear_old_blocks(), 0);
}

TEST(DedupWindow, TheWindowCountsBlocksOfAllPartitionsTogether) {
  DedupWindow w(2, Time::seconds(604800));
  w.insert(token(0, 9, 0), Time::seconds(1));
  w.insert(token(0, 9, 1), Time::seconds(2));  // same range, other partition: another id
  w.insert(token(0, 9, 2), Time::seconds(3));
  EXPECT_EQ(w.clear_old_blocks(), 1);
  EXPECT_FALSE(w.contains(token(0, 9, 0)));
  EXPECT_TRUE(w.contains(token(0, 9, 1)));
  // The table partition is part of the id (the token is hashed with it).
  EXPECT_FALSE(w.contains(BlockId{1, 0, 9, 7}));
}

TEST(DedupWindow, SecondsAreCountedFromTheNewestBlockNotFromNow) {
  DedupWindow w(1000, Time::seconds(10));
  w.insert(token(0, 9), Time::seconds(0));
  w.insert(token(10, 19), Time::seconds(5));
  w.insert(token(20, 29), Time::seconds(20));
  // 20 - 0 > 10 and 20 - 5 > 10: both go; the newest stays however old it gets.
  EXPECT_EQ(w.clear_old_blocks(), 2);
  EXPECT_TRUE(w.contains(token(20, 29)));
  EXPECT_EQ(w.size(), 1u);
  // Exactly window_seconds older than the newest: kept (ctime >= newest - window).
  DedupWindow edge(1000, Time::seconds(10));
  edge.insert(token(0, 9), Time::seconds(0));
  edge.insert(token(10, 19), Time::seconds(10));
  EXPECT_EQ(edge.clear_old_blocks(), 0);
}

TEST(DedupWindow, AWindowOfZeroDisablesDeduplication) {
  DedupWindow w(0, Time::seconds(604800));
  w.insert(token(0, 9), Time::seconds(0));
  EXPECT_FALSE(w.contains(token(0, 9)));
  EXPECT_EQ(w.size(), 0u);
}

TEST(CleanupSchedule, SleepScalesWithTheWorkFoundAndIsClamped) {
  // 30 s .. 300 s, no random add, 150 preferred points.
  CleanupSchedule c(CleanupSettings{30, 300, 0, 150});
  sim::RandomStream stream(1, "test");
  // The first run after start-up does not adapt.
  EXPECT_EQ(c.after_iteration(1000, stream), Time::seconds(30));
  // 75 points: ratio 0.5 -> 30 s / 0.5 = 60 s.
  EXPECT_EQ(c.after_iteration(75, stream), Time::seconds(60));
  // Nothing found: max_cleanup_delay_period.
  EXPECT_EQ(c.after_iteration(0, stream), Time::seconds(300));
  // 1500 points: ratio 10 -> 300 s / 10 = 30 s.
  EXPECT_EQ(c.after_iteration(1500, stream), Time::seconds(30));
  // 15000 points: 3 s, clamped up to 30 s.
  EXPECT_EQ(c.after_iteration(15000, stream), Time::seconds(30));
  // 15 points: ratio 0.1 -> 300 s.
  EXPECT_EQ(c.after_iteration(15, stream), Time::seconds(300));
  // A restarted server starts over at cleanup_delay_period, without adapting.
  c.restart_server();
  EXPECT_EQ(c.after_iteration(0, stream), Time::seconds(30));
}

TEST(CleanupSchedule, TheRandomAddIsUpToCleanupDelayPeriodRandomAddAndStays) {
  CleanupSchedule c(CleanupSettings{30, 300, 10, 150});
  sim::RandomStream stream(1, "test");
  const Time first = c.after_iteration(0, stream);
  EXPECT_GE(first, Time::seconds(30));
  EXPECT_LE(first, Time::seconds(40));
  // run() adds the random part to sleep_ms itself: the next sleep adapts from it.
  // 150 points: ratio 1 -> the same sleep, plus another 0..10 s.
  const Time second = c.after_iteration(150, stream);
  EXPECT_GE(second, first);
  EXPECT_LE(second, first + Time::seconds(10));
}

TEST(CleanupSchedule, NoPreferredBatchMeansAFixedSleep) {
  CleanupSchedule c(CleanupSettings{30, 300, 0, 0});
  sim::RandomStream stream(1, "test");
  EXPECT_EQ(c.after_iteration(0, stream), Time::seconds(30));
  EXPECT_EQ(c.after_iteration(0, stream), Time::seconds(30));
  EXPECT_EQ(c.after_iteration(100000, stream), Time::seconds(30));
}

}  // namespace
}  // namespace pipesim::clickhouse
