// The business service's record arrivals (SPEC §4.1): a daily rate profile,
// keys spread uniformly over the partitions by hash. Records arrive in quanta
// of `tick`: each quantum, each partition receives a Poisson number of
// records with mean rate(t) * tick / partitions, drawn from the stream
// "workload/arrivals" in partition order, so the workload of a seed does not
// depend on anything downstream.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "models/workload/workload_options.h"
#include "sim/engine/random.h"
#include "sim/engine/time.h"

namespace pipesim::workload {

class Workload {
 public:
  Workload(const WorkloadOptions& options, int partitions, std::uint64_t seed);

  // Records per second at time t (the hour of day picks the multiplier).
  [[nodiscard]] double rate_at(sim::Time t) const;
  [[nodiscard]] sim::Time tick() const { return options_.tick; }
  // Draws the records of the quantum [t, t + tick) per partition.
  void draw_tick(sim::Time t, std::vector<std::int64_t>& counts);

  // The busiest hour's multiplier of the profile (mean 1).
  [[nodiscard]] double peak_multiplier() const;

  // The 24 multipliers of the named "production" profile (mean 1, peak 4.32:
  // 200 M records/day peak at 10,000 records/s; 10,000 to 75,000 records per
  // partition per minute with 8 partitions).
  static const std::array<double, 24>& production_profile();

 private:
  WorkloadOptions options_;
  int partitions_;
  std::array<double, 24> multipliers_{};
  sim::RandomStream arrivals_;
  std::vector<double> carry_;  // fixed arrivals: fractions not yet emitted
};

}  // namespace pipesim::workload
