// MergeTreeParts: the insert gate of delayInsertOrThrowIfNeeded and the
// merge selector's cadence, against counts worked out by hand.
#include "models/clickhouse/merge_tree_parts.h"

#include <gtest/gtest.h>

namespace pipesim::clickhouse {
namespace {

using sim::Time;

MergeSettings no_merges() {
  MergeSettings s;
  s.slots = 0;  // nothing is ever merged: the count is the parts added
  return s;
}

MergeTreeParts with_parts(const MergeSettings& s, int parts) {
  MergeTreeParts m(s);
  for (int i = 0; i < parts; ++i) m.add_part(Time::millis(i), 1024, Time{});
  return m;
}

TEST(MergeTreeParts, TheGateDelaysLinearlyFromParts_to_delay_insertAndRefusesAtParts_to_throw_insert) {
  const MergeSettings s = no_merges();  // 1000 / 3000, max 1 s, min 10 ms
  EXPECT_EQ(with_parts(s, 999).gate().delay, Time{});
  EXPECT_FALSE(with_parts(s, 999).gate().refuse);
  // 1000 parts: 1 s x 1 / 2000 = 0.5 ms, below the 10 ms floor.
  EXPECT_EQ(with_parts(s, 1000).gate().delay, Time::millis(10));
  // 1018: 19 / 2000 s = 9.5 ms -> 10 ms; 1019: 20 / 2000 s = 10 ms; 1020: 10.5 ms.
  EXPECT_EQ(with_parts(s, 1018).gate().delay, Time::millis(10));
  EXPECT_EQ(with_parts(s, 1020).gate().delay, Time::micros(10500));
  // 1500: 501 / 2000 s = 250.5 ms; 2999: 2000 / 2000 s = 1 s.
  EXPECT_EQ(with_parts(s, 1500).gate().delay, Time::micros(250500));
  EXPECT_EQ(with_parts(s, 2999).gate().delay, Time::seconds(1));
  EXPECT_FALSE(with_parts(s, 2999).gate().refuse);
  EXPECT_TRUE(with_parts(s, 3000).gate().refuse);
  EXPECT_EQ(with_parts(s, 3000).active(), 3000);
  EXPECT_EQ(with_parts(s, 3000).peak(), 3000);
}

TEST(MergeTreeParts, OneSlotMergesWhatCameWhileItWasBusy) {
  // One slot, base 5, a merge takes 100 ms; a part every 10 ms from 0.
  // Parts at 0..40 ms: the fifth starts a merge of 5 ending at 140 ms.
  // Parts at 50..130 ms wait (9 of them: 14 active at 130 ms). At 140 ms the
  // merge ends first (14 - 4 = 10 active: 9 waiting + the merged one) and
  // the selector, woken, merges the 9 waiting (ending at 240 ms); then the
  // part of 140 ms comes: 11 active.
  MergeSettings s;
  s.slots = 1;
  s.merge_base_time = Time::millis(100);
  s.merge_time_per_part = Time{};
  s.merge_bytes_per_s = 0;
  MergeTreeParts m(s);
  for (int i = 0; i <= 13; ++i) m.add_part(Time::millis(10 * i), 1000, Time{});
  EXPECT_EQ(m.active(), 14);
  EXPECT_EQ(m.merges(), 1);
  m.add_part(Time::millis(140), 1000, Time{});
  EXPECT_EQ(m.active(), 11);
  EXPECT_EQ(m.merges(), 2);
  EXPECT_EQ(m.peak(), 14);
  // At 240 ms the merge of 9 ends: 11 - 8 = 3 (the two merged parts of
  // generation 1 and the part of 140 ms); nothing has 5 free parts.
  m.advance(Time::millis(240), Time{});
  EXPECT_EQ(m.active(), 3);
  EXPECT_EQ(m.running(), 0);
}

TEST(MergeTreeParts, AMergesKeeperTimeAndBytesLengthenIt) {
  // A merge of 5 parts of 1 MB at 10 MB/s with 1 ms per part, 20 ms fixed
  // and 30 ms of Keeper requests: 20 + 5 + 500 + 30 = 555 ms.
  MergeSettings s;
  s.slots = 1;
  s.merge_base_time = Time::millis(20);
  s.merge_time_per_part = Time::millis(1);
  s.merge_bytes_per_s = 10e6;
  MergeTreeParts m(s);
  for (int i = 0; i < 5; ++i) m.add_part(Time{}, 1e6, Time::millis(30));
  m.advance(Time::millis(554), Time{});
  EXPECT_EQ(m.active(), 5);
  m.advance(Time::millis(555), Time{});
  EXPECT_EQ(m.active(), 1);
}

TEST(MergeTreeParts, SlowMergesLetTheCountGrowWithTheInserts) {
  // One slot, a merge takes 1 s: at most 99 parts go per second while 200
  // come. After 2000 inserts (10 s) at most 10 merges ended, so at least
  // 2000 - 10 x 99 parts are active.
  MergeSettings s;
  s.slots = 1;
  s.merge_base_time = Time::seconds(1);
  s.merge_time_per_part = Time{};
  const SteadyParts steady = steady_parts(s, 200.0, 1024, Time{}, 2000);
  EXPECT_GE(steady.end_state.active(), 2000 - 10 * 99);
  EXPECT_EQ(steady.peak, steady.end_state.peak());
}

TEST(MergeTreeParts, FastMergesKeepTheCountSmall) {
  // 32 slots, a 5-part merge takes 30 ms, 443 parts a second (a caught-up
  // sink): a merge starts every fifth part and ends long before the slots
  // fill, so generation 0 holds at most 4 waiting + 5 x ceil(0.030 x 443 / 5)
  // merging = 19, and each higher generation, fed 5 times slower, fewer.
  MergeSettings s;
  s.merge_base_time = Time::millis(20);
  s.merge_time_per_part = Time::millis(2);
  s.merge_bytes_per_s = 0;
  const SteadyParts steady = steady_parts(s, 443.0, 5000, Time{}, 20000);
  EXPECT_LE(steady.peak, 19 * 7);
  EXPECT_GE(steady.merges_per_insert, 0.2);   // 1/5 at generation 0 ...
  EXPECT_LE(steady.merges_per_insert, 0.25);  // ... + 1/25 + 1/125 + ...
}

TEST(MergeTreeParts, ANewPartitionStartsFromZeroButKeepsThePeak) {
  MergeTreeParts m = with_parts(no_merges(), 7);
  m.new_partition();
  EXPECT_EQ(m.active(), 0);
  EXPECT_EQ(m.peak(), 7);
}

}  // namespace
}  // namespace pipesim::clickhouse
