// The service's arrivals (models/workload/workload.h): every record at its
// own instant, Poisson or evenly spaced, the same whatever reads them and in
// whatever order, with no trace of the one-second blocks the draws are
// organised in.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "models/workload/workload.h"

namespace pipesim::workload {
namespace {

WorkloadOptions constant(std::int64_t per_day, const char* arrivals) {
  WorkloadOptions o;
  o.records_per_day = per_day;
  o.profile = "constant";
  o.arrivals = arrivals;
  return o;
}

TEST(Workload, FixedArrivalsAreEvenlySpacedToTheMicrosecond) {
  // 86,400,000 records/day on 4 partitions: 250/s each, record k at k x 4 ms.
  Workload w(constant(86'400'000, "fixed"), 4, 1);
  for (std::int64_t k : {0, 1, 249, 250, 123'456, 21'599'999}) {
    EXPECT_EQ(w.arrival_time(2, k).us, k * 4000) << k;
  }
  // count_before counts the instants strictly before t.
  EXPECT_EQ(w.count_before(0, sim::Time{4000}), 1);
  EXPECT_EQ(w.count_before(0, sim::Time{4001}), 2);
  EXPECT_EQ(w.count_before(0, sim::Time::seconds(10)), 2500);
  EXPECT_EQ(w.count_before(0, sim::Time::seconds(10) + sim::Time{1}), 2501);
}

TEST(Workload, FixedArrivalsFollowTheProfileHourByHour) {
  // The production profile: hour h holds per_second x multiplier[h] x 3600
  // records (multipliers scaled to mean 1: the day holds records_per_day),
  // evenly spaced within it.
  WorkloadOptions o;
  o.records_per_day = 86'400'000;  // 1000/s on average, one partition
  o.arrivals = "fixed";
  Workload w(o, 1, 1);
  const auto& m = Workload::production_profile();
  double sum = 0;
  for (const double x : m) sum += x;
  double before = 0;
  for (std::size_t h = 0; h < 24; ++h) {
    const sim::Time start = sim::Time::hours(static_cast<std::int64_t>(h));
    EXPECT_NEAR(static_cast<double>(w.count_before(0, start)), before, 1.0) << h;
    // Mid-hour: half of the hour's records more.
    const double in_hour = 1000.0 * m[h] * 24.0 / sum * 3600.0;
    EXPECT_NEAR(static_cast<double>(w.count_before(0, start + sim::Time::minutes(30))), before + in_hour / 2,
                1.0)
        << h;
    before += in_hour;
  }
  EXPECT_NEAR(static_cast<double>(w.count_before(0, sim::Time::days(1))), 86'400'000.0, 1.0);
}

TEST(Workload, ARunStartingAt18hSeesTheEveningFirstAndTheDayWrapsAtMidnight) {
  // run.start 18h: time t is the profile's hour (18 + t/1h) mod 24. The first
  // 6 hours hold the records of hours 18-23 of the day, the next 6 those of
  // hours 0-5, and a whole day still holds records_per_day.
  WorkloadOptions o;
  o.records_per_day = 86'400'000;
  o.arrivals = "fixed";
  Workload w(o, 1, 1, 18);
  const auto& m = Workload::production_profile();
  double sum = 0;
  for (const double x : m) sum += x;
  const auto hours = [&](std::size_t from, std::size_t to) {
    double r = 0;
    for (std::size_t h = from; h < to; ++h) r += 1000.0 * m[h] * 24.0 / sum * 3600.0;
    return r;
  };
  EXPECT_NEAR(static_cast<double>(w.count_before(0, sim::Time::hours(6))), hours(18, 24), 1.0);
  EXPECT_NEAR(static_cast<double>(w.count_before(0, sim::Time::hours(12))),
              hours(18, 24) + hours(0, 6), 1.0);
  EXPECT_NEAR(static_cast<double>(w.count_before(0, sim::Time::days(1))), 86'400'000.0, 1.0);
  EXPECT_NEAR(w.rate_at(sim::Time::hours(1)), 1000.0 * m[19] * 24.0 / sum, 1e-9);
  EXPECT_NEAR(w.rate_at(sim::Time::hours(7)), 1000.0 * m[1] * 24.0 / sum, 1e-9);
}

TEST(Workload, PoissonArrivalsHaveExponentialGapsAcrossBlockBoundaries) {
  // 200 records/s on one partition for 1,000 s: ~200,000 gaps. An
  // exponential with mean 5 ms has P(gap > 10 ms) = e^-2 and CV 1; a model
  // that releases records at block boundaries would fail both. Gaps that
  // span a block boundary are no different from the others.
  Workload w(constant(17'280'000, "poisson"), 1, 7);
  const std::int64_t n = w.count_before(0, sim::Time::seconds(1000));
  EXPECT_NEAR(static_cast<double>(n), 200'000.0, 4 * std::sqrt(200'000.0));
  double sum = 0, sum2 = 0;
  std::int64_t long_gaps = 0, crossing = 0, crossing_long = 0;
  sim::Time prev = w.arrival_time(0, 0);
  for (std::int64_t k = 1; k < n; ++k) {
    const sim::Time t = w.arrival_time(0, k);
    ASSERT_GE(t, prev) << k;
    const double gap_ms = static_cast<double>((t - prev).us) / 1000.0;
    sum += gap_ms;
    sum2 += gap_ms * gap_ms;
    long_gaps += gap_ms > 10.0;
    if (t.us / 1'000'000 != prev.us / 1'000'000) {
      ++crossing;
      crossing_long += gap_ms > 10.0;
    }
    prev = t;
  }
  const double count = static_cast<double>(n - 1);
  const double mean = sum / count;
  const double sd = std::sqrt(sum2 / count - mean * mean);
  EXPECT_NEAR(mean, 5.0, 0.05);
  EXPECT_NEAR(sd / mean, 1.0, 0.02);
  const double p = std::exp(-2.0);
  EXPECT_NEAR(static_cast<double>(long_gaps) / count, p, 4 * std::sqrt(p * (1 - p) / count));
  // A gap is more likely to span a boundary the longer it is (length
  // biased): P(long | crossing) = E[g; g > 10] / E[g] = 3 e^-2.
  const double q = 3 * p;
  EXPECT_NEAR(static_cast<double>(crossing_long) / static_cast<double>(crossing), q,
              4 * std::sqrt(q * (1 - q) / static_cast<double>(crossing)));
}

TEST(Workload, InstantsDoNotDependOnWhoAsksFirst) {
  // One reader asks for counts at arbitrary instants, the other for each
  // record's instant, the last record of a block before the others: both
  // see the same arrivals.
  const WorkloadOptions o = constant(8'640'000, "poisson");  // 50/s on each of 2 partitions
  Workload counts(o, 2, 3);
  Workload instants(o, 2, 3);
  const std::int64_t last_of_block_5 = instants.count_before(1, sim::Time::seconds(6)) - 1;
  const sim::Time early = instants.arrival_time(1, last_of_block_5);
  std::vector<sim::Time> times;
  const std::int64_t n = instants.count_before(1, sim::Time::seconds(30));
  for (std::int64_t k = 0; k < n; ++k) times.push_back(instants.arrival_time(1, k));
  EXPECT_EQ(times[static_cast<std::size_t>(last_of_block_5)], early);
  EXPECT_GE(early, sim::Time::seconds(5));
  EXPECT_LT(early, sim::Time::seconds(6));
  for (std::int64_t k = 0; k < n; ++k) {
    const sim::Time t = times[static_cast<std::size_t>(k)];
    // k records arrive before t, at least k + 1 up to t.
    EXPECT_LE(counts.count_before(1, t), k) << k;
    EXPECT_GE(counts.count_before(1, t + sim::Time{1}), k + 1) << k;
  }
}

TEST(Workload, NothingArrivesFromTheStopOn) {
  Workload w(constant(8'640'000, "poisson"), 1, 5);
  w.set_stop(sim::Time::seconds(10) + sim::Time::millis(500));
  const std::int64_t n = w.count_before(0, sim::Time::seconds(100));
  EXPECT_EQ(n, w.count_before(0, w.stop()));
  EXPECT_LT(w.arrival_time(0, n - 1), w.stop());
  EXPECT_EQ(w.arrival_time(0, n), sim::Time::max());
  EXPECT_EQ(w.partition_rate_at(w.stop()), 0.0);
  Workload f(constant(8'640'000, "fixed"), 1, 5);
  f.set_stop(sim::Time::seconds(10) + sim::Time::millis(500));
  // 100/s evenly: records 0..1050 arrive before 10.5 s (record 1050 at 10.5 s is not).
  EXPECT_EQ(f.count_before(0, sim::Time::seconds(100)), 1050);
  EXPECT_EQ(f.arrival_time(0, 1050), sim::Time::max());
}

TEST(Workload, ExpectedCountsAreExactAtBlockBoundariesAndWhereDrawn) {
  Workload w(constant(8'640'000, "poisson"), 1, 9);
  Workload same(constant(8'640'000, "poisson"), 1, 9);
  for (std::int64_t s = 1; s <= 20; ++s) {
    EXPECT_EQ(w.expected_count_before(0, sim::Time::seconds(s)),
              static_cast<double>(same.count_before(0, sim::Time::seconds(s))));
  }
  // Within an undrawn block: between the block's bounds.
  const double mid = w.expected_count_before(0, sim::Time::seconds(30) + sim::Time::millis(500));
  EXPECT_GE(mid, static_cast<double>(same.count_before(0, sim::Time::seconds(30))));
  EXPECT_LE(mid, static_cast<double>(same.count_before(0, sim::Time::seconds(31))));
  EXPECT_DOUBLE_EQ(w.expected_records(sim::Time{}, sim::Time::hours(1)), 360'000.0);
}

}  // namespace
}  // namespace pipesim::workload
