// A fixed-bucket histogram of non-negative integer values (e.g. latencies in
// microseconds) for percentiles over millions of samples in constant memory:
// no per-event storage, O(1) per add.
//
// Buckets are log-linear (as in HdrHistogram): values 0..15 have a bucket
// each; above, every power of two [2^e, 2^(e+1)) is split into 16 equal
// buckets, so a bucket is at most 1/16 of its lower bound wide and a
// reported percentile (the bucket's midpoint) is within ~3% of the true one.
//
// Invariants: count() == sum of the bucket counts.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace pipesim::sim {

class Histogram {
 public:
  static constexpr int kSubBuckets = 16;
  static constexpr int kBuckets = kSubBuckets + (63 - 4) * kSubBuckets;

  void add(std::int64_t value) { add(value, 1); }
  // `weight` samples of the same value (an aggregated stretch adds the
  // representative values of many requests at once).
  void add(std::int64_t value, std::int64_t weight) {
    counts_[static_cast<std::size_t>(bucket_of(value < 0 ? 0 : value))] += weight;
    count_ += weight;
  }
  // `count` samples spread evenly over [lo, hi) (requests answered one after
  // another at a steady pace): each bucket gets its share of the range,
  // rounded so that the shares add up to `count`.
  void add_uniform(std::int64_t lo, std::int64_t hi, std::int64_t count) {
    if (count <= 0) return;
    lo = lo < 0 ? 0 : lo;
    if (hi <= lo + 1) {
      add(lo, count);
      return;
    }
    const double span = static_cast<double>(hi - lo);
    std::int64_t given = 0;
    for (int b = bucket_of(lo);; ++b) {
      const std::int64_t end = lower_bound(b) + width(b);
      const std::int64_t upto =
          end >= hi ? count
                    : static_cast<std::int64_t>(static_cast<double>(count) *
                                                static_cast<double>(end - lo) / span);
      counts_[static_cast<std::size_t>(b)] += upto - given;
      given = upto;
      if (end >= hi) break;
    }
    count_ += count;
  }
  void merge(const Histogram& other) {
    for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
    count_ += other.count_;
  }
  [[nodiscard]] std::int64_t count() const { return count_; }

  // The nearest-rank q-quantile (the smallest value v with at least
  // ceil(q * count) samples <= v), reported as the midpoint of v's bucket;
  // 0 when empty. REQUIRES: 0 < q <= 1.
  [[nodiscard]] double percentile(double q) const {
    if (count_ == 0) return 0.0;
    auto rank = static_cast<std::int64_t>(q * static_cast<double>(count_));
    if (static_cast<double>(rank) < q * static_cast<double>(count_)) ++rank;  // ceil
    if (rank < 1) rank = 1;
    std::int64_t seen = 0;
    for (int b = 0; b < kBuckets; ++b) {
      seen += counts_[static_cast<std::size_t>(b)];
      if (seen >= rank) return midpoint(b);
    }
    return midpoint(kBuckets - 1);
  }

  static int bucket_of(std::int64_t value) {
    const auto v = static_cast<std::uint64_t>(value);
    if (v < kSubBuckets) return static_cast<int>(v);
    const int e = std::bit_width(v) - 1;  // 2^e <= v < 2^(e+1), e >= 4
    const int sub = static_cast<int>((v >> (e - 4)) & (kSubBuckets - 1));
    return kSubBuckets + (e - 4) * kSubBuckets + sub;
  }
  // [lower, lower + width) of bucket b.
  static std::int64_t lower_bound(int b) {
    if (b < kSubBuckets) return b;
    const int e = (b - kSubBuckets) / kSubBuckets + 4;
    const int sub = (b - kSubBuckets) % kSubBuckets;
    return static_cast<std::int64_t>((static_cast<std::uint64_t>(kSubBuckets + sub)) << (e - 4));
  }
  static std::int64_t width(int b) {
    if (b < kSubBuckets) return 1;
    const int e = (b - kSubBuckets) / kSubBuckets + 4;
    return std::int64_t{1} << (e - 4);
  }
  static double midpoint(int b) {
    // Single-valued buckets report their value exactly.
    if (b < kSubBuckets) return static_cast<double>(b);
    return static_cast<double>(lower_bound(b)) + static_cast<double>(width(b)) / 2.0;
  }

 private:
  std::array<std::int64_t, kBuckets> counts_{};
  std::int64_t count_ = 0;
};

}  // namespace pipesim::sim
