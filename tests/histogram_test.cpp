// The fixed-bucket histogram: bucket layout and nearest-rank percentiles,
// checked against the bucket rule by hand.
#include <gtest/gtest.h>

#include "sim/engine/histogram.h"

namespace pipesim::sim {
namespace {

TEST(Histogram, SmallValuesHaveABucketEach) {
  for (int v = 0; v < 16; ++v) {
    EXPECT_EQ(Histogram::bucket_of(v), v);
    EXPECT_EQ(Histogram::midpoint(v), v);
  }
}

TEST(Histogram, EveryPowerOfTwoIsSplitIntoSixteenBuckets) {
  // 1000 = 0b1111101000: 2^9 <= 1000 < 2^10, so buckets of width 2^(9-4) = 32
  // starting at 512: 1000 is in [992, 1024), the 15th of 2^9's buckets.
  const int b = Histogram::bucket_of(1000);
  EXPECT_EQ(Histogram::lower_bound(b), 992);
  EXPECT_EQ(Histogram::width(b), 32);
  EXPECT_EQ(Histogram::bucket_of(992), b);
  EXPECT_EQ(Histogram::bucket_of(1023), b);
  EXPECT_EQ(Histogram::bucket_of(1024), b + 1);
  // The largest int64 value still has a bucket.
  EXPECT_EQ(Histogram::bucket_of(INT64_MAX), Histogram::kBuckets - 1);
}

TEST(Histogram, PercentilesAreNearestRankReportedAtTheBucketMidpoint) {
  Histogram h;
  for (int v = 1; v <= 100; ++v) h.add(v);
  EXPECT_EQ(h.count(), 100);
  // p50: rank 50 -> value 50, in [50, 52) (2^5 split in widths of 2) -> 51.
  EXPECT_EQ(h.percentile(0.50), 51.0);
  // p99: rank 99 -> value 99, in [96, 100) (2^6 split in widths of 4) -> 98.
  EXPECT_EQ(h.percentile(0.99), 98.0);
  // p100: value 100, in [100, 104) -> 102.
  EXPECT_EQ(h.percentile(1.0), 102.0);
  // p1: rank 1 -> value 1, exact.
  EXPECT_EQ(h.percentile(0.01), 1.0);
}

TEST(Histogram, AUniformRangeIsSharedByTheBucketsItSpans) {
  // 2,000 values evenly over [1000, 3000): the median 2000, the quartiles
  // 1500 and 2500 (each within its bucket's 1/16), and nothing outside.
  Histogram h;
  h.add_uniform(1000, 3000, 2000);
  EXPECT_EQ(h.count(), 2000);
  EXPECT_NEAR(h.percentile(0.5), 2000, 2000 / 16.0);
  EXPECT_NEAR(h.percentile(0.25), 1500, 1500 / 16.0);
  EXPECT_NEAR(h.percentile(0.75), 2500, 2500 / 16.0);
  EXPECT_GE(h.percentile(1e-9), 1000 - 1000 / 16.0);
  EXPECT_LE(h.percentile(1.0), 3000 + 3000 / 16.0);  // the last bucket's midpoint
  // A point range is a plain add.
  Histogram p;
  p.add_uniform(7, 7, 5);
  EXPECT_EQ(p.count(), 5);
  EXPECT_EQ(p.percentile(1.0), 7);
}

TEST(Histogram, EmptyReportsZeroAndMergeAddsCounts) {
  Histogram a, b;
  EXPECT_EQ(a.percentile(0.5), 0.0);
  a.add(3);
  b.add(5);
  b.add(-7);  // clamped to 0
  a.merge(b);
  EXPECT_EQ(a.count(), 3);
  EXPECT_EQ(a.percentile(0.34), 3.0);  // rank ceil(1.02) = 2: values 0, 3, 5 -> 3
  EXPECT_EQ(a.percentile(0.3), 0.0);   // rank 1 -> 0
}

}  // namespace
}  // namespace pipesim::sim
