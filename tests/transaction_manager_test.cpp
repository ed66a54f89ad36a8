// The idempotent producer's sequence bookkeeping (kafka-clients 3.4
// TransactionManager): sequences, retries in order, unresolved sequences
// and the epoch bump of KIP-360.
#include <gtest/gtest.h>

#include "models/producer/transaction_manager.h"

namespace pipesim::producer {
namespace {

const sim::Time kNow = sim::Time::seconds(1);

class SequencesTest : public ::testing::Test {
 protected:
  std::uint32_t batch(int partition, std::int64_t records) {
    ProducerBatch b;
    b.partition = partition;
    b.records = records;
    return pool_.add(b);
  }
  std::uint32_t sent(int partition, std::int64_t records) {
    const std::uint32_t id = batch(partition, records);
    EXPECT_TRUE(tm_.may_drain(pool_[id], kNow));
    tm_.assign_sequence(pool_[id], id);
    return id;
  }

  BatchPool pool_;
  TransactionManager tm_{true, 2, 42, sim::Time{}};
};

TEST_F(SequencesTest, SequencesCountRecordsPerPartition) {
  const auto a = sent(0, 10);
  const auto b = sent(0, 16);
  const auto c = sent(1, 5);
  EXPECT_EQ(pool_[a].base_sequence, 0);
  EXPECT_EQ(pool_[b].base_sequence, 10);
  EXPECT_EQ(pool_[c].base_sequence, 0);
  EXPECT_EQ(pool_[b].producer_id, 42);
  EXPECT_EQ(pool_[b].epoch, 0);
}

TEST_F(SequencesTest, ARetriedBatchGoesOnlyWhenItIsTheFirstIncompleteOne) {
  const auto a = sent(0, 10);
  const auto b = sent(0, 10);
  EXPECT_FALSE(tm_.may_drain(pool_[b], kNow));  // b is a retry while a is incomplete
  EXPECT_TRUE(tm_.may_drain(pool_[a], kNow));
  tm_.on_completed(pool_[a], a);
  EXPECT_TRUE(tm_.may_drain(pool_[b], kNow));
}

TEST_F(SequencesTest, NothingIsDrainedBeforeTheProducerIdArrives) {
  TransactionManager later(true, 1, 43, sim::Time::seconds(5));
  const auto id = batch(0, 10);
  EXPECT_FALSE(later.may_drain(pool_[id], kNow));
  EXPECT_TRUE(later.may_drain(pool_[id], sim::Time::seconds(5)));
}

TEST_F(SequencesTest, AnExpiredRetriedBatchBumpsTheEpochAndRestartsTheSequences) {
  const auto a = sent(0, 10);
  tm_.mark_unresolved(pool_[a]);
  tm_.on_failed(pool_[a], a, false, false);
  // No new batch while the sequence is unresolved.
  const auto next = batch(0, 10);
  EXPECT_FALSE(tm_.may_drain(pool_[next], kNow));
  tm_.resolve_and_bump(pool_);  // nothing incomplete: 0 was never acknowledged -> bump
  EXPECT_EQ(tm_.epoch(), 1);
  EXPECT_EQ(tm_.epoch_bumps(), 1);
  EXPECT_TRUE(tm_.may_drain(pool_[next], kNow));
  tm_.assign_sequence(pool_[next], next);
  EXPECT_EQ(pool_[next].epoch, 1);
  EXPECT_EQ(pool_[next].base_sequence, 0);
}

TEST_F(SequencesTest, AnExpiredBatchIsResolvedWhenTheBatchesAfterItSucceeded) {
  const auto a = sent(0, 10);
  const auto b = sent(0, 10);
  tm_.mark_unresolved(pool_[a]);
  tm_.on_failed(pool_[a], a, false, false);
  tm_.resolve_and_bump(pool_);  // b still incomplete: wait
  EXPECT_EQ(tm_.epoch(), 0);
  tm_.on_completed(pool_[b], b);  // acknowledged up to 19: a was written after all
  tm_.resolve_and_bump(pool_);
  EXPECT_EQ(tm_.epoch(), 0);
  const auto c = sent(0, 10);
  EXPECT_EQ(pool_[c].base_sequence, 20);
}

TEST_F(SequencesTest, AnEpochBumpRewritesTheIncompleteBatchesOfThePartition) {
  const auto a = sent(0, 10);
  const auto b = sent(0, 10);
  tm_.on_out_of_order(pool_[a]);  // a gap right after the last acknowledged: bump
  tm_.resolve_and_bump(pool_);
  EXPECT_EQ(tm_.epoch(), 1);
  EXPECT_EQ(pool_[a].base_sequence, 0);
  EXPECT_EQ(pool_[b].base_sequence, 10);
  EXPECT_TRUE(pool_[b].sequence_reset);
  EXPECT_EQ(pool_[b].epoch, 1);
}

TEST_F(SequencesTest, OtherPartitionsMoveToTheNewEpochOnceTheirBatchesComplete) {
  const auto a = sent(0, 10);
  const auto x = sent(1, 10);
  tm_.mark_unresolved(pool_[a]);
  tm_.on_failed(pool_[a], a, false, false);
  tm_.resolve_and_bump(pool_);
  ASSERT_EQ(tm_.epoch(), 1);
  const auto y = batch(1, 10);
  EXPECT_FALSE(tm_.may_drain(pool_[y], kNow));  // x, of epoch 0, is still incomplete
  tm_.on_completed(pool_[x], x);
  ASSERT_TRUE(tm_.may_drain(pool_[y], kNow));
  tm_.assign_sequence(pool_[y], y);
  EXPECT_EQ(pool_[y].epoch, 1);
  EXPECT_EQ(pool_[y].base_sequence, 0);
}

TEST(TransactionManager, WithoutIdempotenceBatchesHaveNoSequence) {
  BatchPool pool;
  TransactionManager tm(false, 1, 42, sim::Time{});
  ProducerBatch b;
  b.records = 10;
  const auto id = pool.add(b);
  EXPECT_TRUE(tm.may_drain(pool[id], sim::Time{}));
  tm.assign_sequence(pool[id], id);
  EXPECT_FALSE(pool[id].has_sequence());
  EXPECT_EQ(pool[id].producer_id, -1);
}

}  // namespace
}  // namespace pipesim::producer
