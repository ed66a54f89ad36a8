// The consumer's fetches and polls (models/connect/fetcher.h) against
// KafkaConsumer 3.7's rules, on a log whose records become readable at known
// instants: record k of every partition at `first + k x gap`.
#include <gtest/gtest.h>

#include <vector>

#include "models/connect/fetcher.h"

namespace pipesim::connect {
namespace {

// Partitions 0 and 1 led by broker 0, partition 2 by broker 1.
class EvenLog final : public LogView {
 public:
  EvenLog(sim::Time first, sim::Time gap) : first_(first), gap_(gap) {}
  sim::Time now{};
  [[nodiscard]] std::int64_t high_watermark(int partition) const override {
    return high_watermark_at(partition, now);
  }
  [[nodiscard]] std::int64_t log_start(int) const override { return 0; }
  [[nodiscard]] int leader(int partition) const override { return partition == 2 ? 1 : 0; }
  [[nodiscard]] sim::Time visible_at(int, std::int64_t offset) const override {
    return first_ + gap_ * offset;
  }
  [[nodiscard]] std::int64_t high_watermark_at(int, sim::Time t) const override {
    if (t < first_) return 0;
    return (t - first_).us / gap_.us + 1;
  }

 private:
  sim::Time first_;
  sim::Time gap_;
};

FetchSettings settings(std::int64_t min_records, sim::Time max_wait) {
  FetchSettings f;
  f.latency = sim::Time::millis(2);
  f.max_wait = max_wait;
  f.min_records = min_records;
  f.max_partition_records = 1006;
  f.max_response_records = 50331;
  return f;
}

std::int64_t records(const std::vector<sink::PartitionBatch>& out) {
  std::int64_t n = 0;
  for (const auto& b : out) n += b.offsets.max - b.offsets.min + 1;
  return n;
}

// A consumer of partition 0 whose first poll, at 1 s (a million records
// readable), returned nothing and sent the fetch; it arrives 2 ms later.
Fetcher fetching_at_one_second(EvenLog& log) {
  Fetcher f(settings(1, sim::Time::millis(500)));
  f.assign({0}, {0});
  std::vector<sink::PartitionBatch> out;
  log.now = sim::Time::seconds(1);
  EXPECT_FALSE(f.poll(log.now, log, 500, out).records);
  return f;
}

TEST(Fetcher, ACaughtUpFetchWaitsAtTheBrokerForTheFirstRecord) {
  // fetch.min.bytes = 1 record: a fetch sent at 0 with nothing readable is
  // answered the instant record 0 is (10 ms) and arrives 2 ms later.
  EvenLog log(sim::Time::millis(10), sim::Time::millis(10));
  Fetcher f(settings(1, sim::Time::millis(500)));
  f.assign({0}, {0});
  std::vector<sink::PartitionBatch> out;
  const auto first = f.poll(sim::Time{}, log, 500, out);
  EXPECT_FALSE(first.records);
  EXPECT_EQ(first.wake_at, sim::Time::millis(12));
  log.now = sim::Time::millis(12);
  const auto second = f.poll(log.now, log, 500, out);
  ASSERT_TRUE(second.records);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].offsets.min, 0);
  EXPECT_EQ(out[0].offsets.max, 0);
  EXPECT_EQ(f.position(0), 1);
}

TEST(Fetcher, FetchMinBytesOrFetchMaxWaitWhicheverComesFirst) {
  // A record every 10 ms from 10 ms on. 500 records are readable at 5 s;
  // fetch.max.wait.ms 60 s: the broker answers at 5 s with 500.
  EvenLog log(sim::Time::millis(10), sim::Time::millis(10));
  Fetcher f(settings(500, sim::Time::seconds(60)));
  f.assign({0}, {0});
  std::vector<sink::PartitionBatch> out;
  EXPECT_EQ(f.poll(sim::Time{}, log, 1000, out).wake_at, sim::Time::seconds(5) + sim::Time::millis(2));
  // With fetch.max.wait.ms 1 s it answers at 1 s with the 100 readable then.
  Fetcher g(settings(500, sim::Time::seconds(1)));
  g.assign({0}, {0});
  EXPECT_EQ(g.poll(sim::Time{}, log, 1000, out).wake_at, sim::Time::seconds(1) + sim::Time::millis(2));
  log.now = sim::Time::seconds(1) + sim::Time::millis(2);
  ASSERT_TRUE(g.poll(log.now, log, 1000, out).records);
  EXPECT_EQ(records(out), 100);
}

TEST(Fetcher, ALaggingConsumerPollsFullBatchesCutByTheFetchCap) {
  // 10,000 records readable at once; a fetch holds 1006 of a partition
  // (max.partition.fetch.bytes), a poll 500 (max.poll.records): the polls
  // are 500, 500 and the fetch's last 6. The poll that returns a fetch's
  // last records sends the next fetch before it returns (pipelining), and
  // the next poll, 2 ms later, finds its response.
  EvenLog log(sim::Time{1}, sim::Time{1});
  Fetcher f = fetching_at_one_second(log);
  std::vector<sink::PartitionBatch> out;
  std::vector<std::int64_t> sizes;
  for (int i = 0; i < 6; ++i) {
    log.now = log.now + sim::Time::millis(2);
    out.clear();
    ASSERT_TRUE(f.poll(log.now, log, 500, out).records) << i;
    sizes.push_back(records(out));
  }
  EXPECT_EQ(sizes, (std::vector<std::int64_t>{500, 500, 6, 500, 500, 6}));
  EXPECT_EQ(f.position(0), 2012);
}

TEST(Fetcher, APollContinuesIntoTheNextPartitionsBufferedFetch) {
  // Partitions 0 and 1 share broker 0: one request carries both, 1006 each.
  // A poll of 1500 takes all of partition 0's and 494 of partition 1's
  // (FetchCollector), not partition 0's alone.
  EvenLog log(sim::Time{1}, sim::Time{1});
  Fetcher f(settings(1, sim::Time::millis(500)));
  f.assign({0, 1}, {0, 0});
  std::vector<sink::PartitionBatch> out;
  log.now = sim::Time::seconds(1);
  f.poll(log.now, log, 1500, out);
  log.now = log.now + sim::Time::millis(2);
  ASSERT_TRUE(f.poll(log.now, log, 1500, out).records);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].partition, 0);
  EXPECT_EQ(out[0].offsets.max - out[0].offsets.min + 1, 1006);
  EXPECT_EQ(out[1].partition, 1);
  EXPECT_EQ(out[1].offsets.max - out[1].offsets.min + 1, 494);
  // The rest of partition 1's fetch is still buffered; partition 0, whose
  // records were all returned, was fetched again (and moved to the end).
  EXPECT_EQ(f.buffered_records(), 512 + 1006);
}

TEST(Fetcher, OneFetchPerBrokerInFlight) {
  // Partition 2 is led by broker 1: its fetch does not wait for broker 0's.
  EvenLog log(sim::Time::millis(10), sim::Time::millis(10));
  Fetcher f(settings(1, sim::Time::millis(500)));
  f.assign({0, 2}, {0, 0});
  std::vector<sink::PartitionBatch> out;
  f.poll(sim::Time{}, log, 500, out);
  log.now = sim::Time::millis(12);
  ASSERT_TRUE(f.poll(log.now, log, 500, out).records);
  ASSERT_EQ(out.size(), 2u);  // both answered at 10 ms, both arrived at 12 ms
  EXPECT_EQ(out[0].partition, 0);
  EXPECT_EQ(out[1].partition, 2);
}

TEST(Fetcher, PausedReturnsNothingAndSeekDropsWhatWasFetched) {
  EvenLog log(sim::Time{1}, sim::Time{1});
  Fetcher f = fetching_at_one_second(log);
  std::vector<sink::PartitionBatch> out;
  f.set_paused(true);
  log.now = log.now + sim::Time::millis(2);
  EXPECT_FALSE(f.poll(log.now, log, 500, out).records);
  f.set_paused(false);
  f.seek(0, 0);
  EXPECT_EQ(f.buffered_records(), 0);
  ASSERT_FALSE(f.poll(log.now, log, 500, out).records);  // fetched anew
  log.now = log.now + sim::Time::millis(2);
  ASSERT_TRUE(f.poll(log.now, log, 500, out).records);
  EXPECT_EQ(out[0].offsets.min, 0);
}

}  // namespace
}  // namespace pipesim::connect
