// The business service's record arrivals (docs/model.md §4.1): a daily rate profile,
// keys spread uniformly over the partitions by hash, every record at its own
// instant (microseconds). Nothing is released in bursts: the service calls
// KafkaProducer.send whenever one of its requests comes in.
//
// How arrivals are drawn (so that the workload of a seed is the same whatever
// reads it, and whenever): time is cut into blocks of one second, aligned to
// the hours of the profile, so that the rate is constant within a block.
//   - "poisson": each block's count per partition is Poisson(rate x length),
//     drawn from the stream "workload/arrivals" block after block, partition
//     by partition; the arrival instants within a block are its count's
//     uniform order statistics, drawn only when someone asks for them, from
//     streams of their own keyed by (partition, block): the largest first
//     (U^(1/count)), then the others as uniforms below it. Together this is
//     exactly a Poisson process; the block is how the draws are organised,
//     not a step of the model: no arrival waits for a block boundary.
//   - "fixed": record k of a partition arrives when the profile's cumulative
//     rate reaches k (record 0 at time 0), rounded to the microsecond.
// Cost follows what is asked: counts at block boundaries cost one draw per
// block and partition, so does a block's last instant (a log segment's
// newest timestamp); the other instants within a block cost one draw per
// record of that block, and only the exact simulation (the producer's
// requests, the consumer's fetches) asks for them.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <vector>

#include "models/workload/workload_options.h"
#include "sim/engine/random.h"
#include "sim/engine/time.h"

namespace pipesim::workload {

class Workload {
 public:
  static constexpr sim::Time kBlock = sim::Time::seconds(1);

  // `first_hour`: the hour of the day at time 0 (run.start), so that time t
  // has the profile's hour (first_hour + t) mod 24.
  Workload(const WorkloadOptions& options, int partitions, std::uint64_t seed, int first_hour = 0);

  // Records per second at time t, whole table / one partition (0 from the stop on).
  [[nodiscard]] double rate_at(sim::Time t) const;
  [[nodiscard]] double partition_rate_at(sim::Time t) const {
    return t >= stop_ ? 0.0 : rate_at(t) / partitions_;
  }
  // The busiest hour's multiplier of the profile (mean 1).
  [[nodiscard]] double peak_multiplier() const;
  [[nodiscard]] int partitions() const { return partitions_; }

  // No record arrives at or after `stop` (the end of run.duration).
  void set_stop(sim::Time stop) {
    stop_ = stop;
    std::fill(memo_.begin(), memo_.end(), Memo{});  // answers beyond the stop change
  }
  [[nodiscard]] sim::Time stop() const { return stop_; }

  // Records of `partition` that arrive in [0, t).
  std::int64_t count_before(int partition, sim::Time t);
  // The arrival instant of record k (0-based) of `partition`; Time::max()
  // if it never arrives (beyond the stop).
  sim::Time arrival_time(int partition, std::int64_t k);
  // Records of `partition` expected in [0, t): exact at block boundaries and
  // wherever the block's instants were drawn, linear in between.
  double expected_count_before(int partition, sim::Time t);
  // Nobody asks about times before t any more: blocks ending by t are freed.
  void forget_before(sim::Time t);
  // Records of `partition` whose blocks were freed (they arrived before
  // remembered_from()): their instants are no longer known.
  [[nodiscard]] std::int64_t forgotten(int partition) const;
  [[nodiscard]] sim::Time remembered_from() const;
  // Records the profile lets arrive in [from, to) on all partitions, on
  // average (no draw): what a stretch of time holds.
  [[nodiscard]] double expected_records(sim::Time from, sim::Time to) const;

  // The 24 multipliers of the named "production" profile (mean 1, peak 4.32:
  // 200 M records/day peak at 10,000 records/s; 10,000 to 75,000 records per
  // partition per minute with 8 partitions).
  static const std::array<double, 24>& production_profile();

 private:
  struct Block {
    std::int64_t first = 0;  // index of the block's first record
    std::int64_t count = 0;
    bool drawn = false;                 // `times` holds the instants
    std::int64_t last = -1;             // the last record's instant once drawn (draw_last)
    std::vector<std::int64_t> times;    // microseconds, sorted
  };
  // Records per partition arrived by t under "fixed" (exact, from the profile).
  [[nodiscard]] double cumulative(sim::Time t) const;
  [[nodiscard]] std::int64_t fixed_time_us(std::int64_t k) const;
  [[nodiscard]] std::int64_t fixed_count_before(sim::Time t) const;
  [[nodiscard]] sim::Time block_start(std::int64_t b) const { return kBlock * b; }
  [[nodiscard]] sim::Time block_end(std::int64_t b) const;
  // Draws blocks up to and including b (never beyond the stop's block).
  void generate_through(std::int64_t b);
  [[nodiscard]] std::int64_t last_block() const;  // the block holding the last instant before stop
  Block& block(std::int64_t b, int partition);
  void draw_instants(std::int64_t b, int partition, Block& k);
  void draw_last(std::int64_t b, int partition, Block& k);
  [[nodiscard]] std::uint64_t block_key(std::int64_t b, int partition) const;

  WorkloadOptions options_;
  int partitions_;
  bool fixed_;
  std::array<double, 24> multipliers_{};
  // Per partition: records per second in each hour of the day, records of
  // the day before each hour (hour_start_[24]: the whole day), and the day's
  // records: "fixed" arrivals in closed form, no walk over the hours.
  std::array<double, 24> hour_rate_{};
  std::array<double, 25> hour_start_{};
  double per_day_ = 0;
  sim::RandomStream counts_;  // "workload/arrivals"
  std::uint64_t instants_key_;
  sim::Time stop_ = sim::Time::max();
  std::deque<std::vector<Block>> rows_;  // rows_[i][p]: block base_ + i of partition p
  std::int64_t base_ = 0;
  std::vector<std::int64_t> next_first_;  // per partition: first index of the next block drawn
  std::vector<std::int64_t> arrival_hint_;  // per partition: the block of arrival_time's last answer
  std::vector<double> partial_;             // draw_instants' scratch
  // Per partition: arrival_time's last question and answer.
  struct Memo {
    std::int64_t k = -1;
    sim::Time at{};
  };
  std::vector<Memo> memo_;
  sim::Time locate(std::size_t p, std::int64_t k);  // arrival_time without the memo
};

}  // namespace pipesim::workload
