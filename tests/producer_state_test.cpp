// The broker's idempotence state (ProducerStateManager): duplicates among the
// last 5 batches, sequence and epoch checks, expiration, truncation.
#include <gtest/gtest.h>

#include "models/broker/producer_state.h"

namespace pipesim::broker {
namespace {

constexpr std::int64_t kPid = 7;
const sim::Time kDay = sim::Time::days(1);
const sim::Time kTenMinutes = sim::Time::minutes(10);

// Appends batches of 10 records with sequences 0..9, 10..19, ... at offsets
// 100, 110, ..., batch i appended at 1 s + i ms.
ProducerStateManager with_batches(int n, int epoch = 0) {
  ProducerStateManager s(kDay, kTenMinutes);
  for (int i = 0; i < n; ++i) {
    s.on_append(kPid, epoch, 10 * i, 10 * i + 9, 100 + 10 * i, sim::Time::seconds(1),
                sim::Time::seconds(1) + sim::Time::millis(i));
  }
  return s;
}

TEST(ProducerState, RetryOfOneOfTheLastFiveBatchesIsADuplicateWithItsOffset) {
  ProducerStateManager s = with_batches(8);
  std::int64_t offset = -1;
  // Batches 3..7 are retained: batch 3 is sequences 30..39 at offset 130.
  EXPECT_EQ(s.check(kPid, 0, 30, 39, sim::Time::seconds(2), offset), SequenceCheck::DUPLICATE);
  EXPECT_EQ(offset, 130);
  sim::Time appended_at{};
  EXPECT_EQ(s.check(kPid, 0, 70, 79, sim::Time::seconds(2), offset, appended_at), SequenceCheck::DUPLICATE);
  EXPECT_EQ(offset, 170);
  EXPECT_EQ(appended_at, sim::Time::seconds(1) + sim::Time::millis(7));  // when batch 7 was appended
}

TEST(ProducerState, ASixthBatchBackIsOutOfOrderNotADuplicate) {
  ProducerStateManager s = with_batches(8);
  std::int64_t offset = -1;
  EXPECT_EQ(s.check(kPid, 0, 20, 29, sim::Time::seconds(2), offset), SequenceCheck::OUT_OF_ORDER);
}

TEST(ProducerState, OnlyTheNextSequenceIsAppended) {
  ProducerStateManager s = with_batches(3);
  std::int64_t offset = -1;
  EXPECT_EQ(s.check(kPid, 0, 30, 45, sim::Time::seconds(2), offset), SequenceCheck::APPEND);
  EXPECT_EQ(s.check(kPid, 0, 31, 45, sim::Time::seconds(2), offset), SequenceCheck::OUT_OF_ORDER);
  EXPECT_EQ(s.check(kPid, 0, 46, 50, sim::Time::seconds(2), offset), SequenceCheck::OUT_OF_ORDER);  // a gap
}

TEST(ProducerState, ANewEpochStartsAtSequenceZeroAndAnOlderOneIsFenced) {
  ProducerStateManager s = with_batches(3, 1);
  std::int64_t offset = -1;
  EXPECT_EQ(s.check(kPid, 2, 0, 9, sim::Time::seconds(2), offset), SequenceCheck::APPEND_NEW_EPOCH);
  EXPECT_EQ(s.check(kPid, 2, 30, 39, sim::Time::seconds(2), offset), SequenceCheck::OUT_OF_ORDER);
  EXPECT_EQ(s.check(kPid, 0, 30, 39, sim::Time::seconds(2), offset), SequenceCheck::FENCED_EPOCH);
  // A duplicate needs the same epoch too.
  EXPECT_NE(s.check(kPid, 2, 10, 19, sim::Time::seconds(2), offset), SequenceCheck::DUPLICATE);
}

TEST(ProducerState, AnUnknownProducerIsAcceptedWithAnySequence) {
  ProducerStateManager s = with_batches(3);
  std::int64_t offset = -1;
  EXPECT_EQ(s.check(kPid + 1, 0, 12345, 12354, sim::Time::seconds(2), offset),
            SequenceCheck::APPEND_UNKNOWN_PRODUCER);
}

TEST(ProducerState, StateExpiresAtTheFirstCheckAfterTheIdleTime) {
  // Expiration 1 day, checks every 10 min: the last batch's timestamp is 1 s,
  // so the state is idle long enough at 1 d + 1 s; the check at 1 d + 10 min drops it.
  ProducerStateManager s = with_batches(3);
  std::int64_t offset = -1;
  EXPECT_EQ(s.check(kPid, 0, 20, 29, kDay + sim::Time::minutes(9), offset), SequenceCheck::DUPLICATE);
  EXPECT_EQ(s.producers(), 1u);
  EXPECT_EQ(s.check(kPid, 0, 20, 29, kDay + kTenMinutes, offset), SequenceCheck::APPEND_EXPIRED_PRODUCER);
  EXPECT_EQ(s.producers(), 0u);
}

TEST(ProducerState, TruncationForgetsTheRemovedBatches) {
  ProducerStateManager s = with_batches(8);  // offsets 100 .. 179
  s.truncate(150);                           // batches 5, 6, 7 removed
  std::int64_t offset = -1;
  EXPECT_EQ(s.check(kPid, 0, 50, 59, sim::Time::seconds(2), offset), SequenceCheck::APPEND);
  // The five before the cut are retained again (rebuilt from the log).
  EXPECT_EQ(s.check(kPid, 0, 0, 9, sim::Time::seconds(2), offset), SequenceCheck::DUPLICATE);
  EXPECT_EQ(offset, 100);
}

TEST(ProducerState, AfterATruncationTheClientsNextBatchIsOutOfOrder) {
  // truncateAndReload keeps the producer with its last batch below the cut
  // (sequences 40..49): the client's next batch, 80..89, leaves a gap.
  ProducerStateManager s = with_batches(8);
  s.truncate(150);
  EXPECT_EQ(s.producers(), 1u);
  std::int64_t offset = -1;
  EXPECT_EQ(s.check(kPid, 0, 80, 89, sim::Time::seconds(2), offset), SequenceCheck::OUT_OF_ORDER);
}

TEST(ProducerState, ATruncationBelowEveryRememberedBatchReloadsTheOneBeforeThem) {
  // 20 batches: the last 16 (4..19, offsets 140..299) are remembered, batch 3
  // (sequences 30..39, offset 130) is the newest that fell out. A cut at 140
  // removes all 16; the reload finds batch 3.
  ProducerStateManager s = with_batches(20);
  s.truncate(140);
  EXPECT_EQ(s.producers(), 1u);
  std::int64_t offset = -1;
  EXPECT_EQ(s.check(kPid, 0, 30, 39, sim::Time::seconds(2), offset), SequenceCheck::DUPLICATE);
  EXPECT_EQ(offset, 130);
  EXPECT_EQ(s.check(kPid, 0, 40, 49, sim::Time::seconds(2), offset), SequenceCheck::APPEND);
}

TEST(ProducerState, AProducerWithNothingLeftInTheLogIsUnknownAfterATruncation) {
  ProducerStateManager s = with_batches(3);  // offsets 100..129
  s.truncate(100);
  EXPECT_EQ(s.producers(), 0u);
  std::int64_t offset = -1;
  EXPECT_EQ(s.check(kPid, 0, 0, 9, sim::Time::seconds(2), offset), SequenceCheck::APPEND_UNKNOWN_PRODUCER);
}

}  // namespace
}  // namespace pipesim::broker
