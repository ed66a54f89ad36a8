// ClickHouse Keeper's leader as a queueing server (SPEC §4.6, model).
// Background load (replication, merges, other tables) arrives at a steady
// rate; this pipeline's requests add to it. While arrivals stay below the
// capacity a request takes the healthy round trip plus the M/M/1 queueing
// time 1/(mu - lambda); when they exceed it (a backlog episode) the excess
// piles up as a fluid backlog that later requests wait behind. In-flight
// requests follow from Little's law: lambda * time in system + backlog.
//
// Cost: O(1) per request batch, no events of its own.
#pragma once

#include <cstdint>

#include "models/keeper/keeper_options.h"
#include "sim/engine/time.h"

namespace pipesim::keeper {

class Keeper {
 public:
  explicit Keeper(const KeeperOptions& options);

  // `ops` requests issued one after another at `now`; returns how long until
  // the last one is answered.
  sim::Time submit(sim::Time now, std::int64_t ops);

  // A backlog episode: capacity scaled by `factor`, plus extra load.
  void set_degradation(sim::Time now, double capacity_factor, double extra_ops_per_s);

  [[nodiscard]] std::int64_t ops() const { return ops_; }
  [[nodiscard]] double peak_in_flight() const { return peak_in_flight_; }
  [[nodiscard]] double in_flight(sim::Time now);

 private:
  void advance(sim::Time now);
  [[nodiscard]] double arrival_rate() const;
  [[nodiscard]] double time_in_system_s() const;
  [[nodiscard]] double capacity() const { return capacity_ * capacity_factor_; }

  KeeperOptions options_;
  double capacity_;
  double capacity_factor_ = 1.0;
  double extra_ops_per_s_ = 0.0;
  double backlog_ = 0.0;  // requests waiting beyond the steady-state queue
  sim::Time last_{};
  // Our own request rate, measured over whole seconds.
  sim::Time window_start_{};
  double window_ops_ = 0.0;
  double own_rate_ = 0.0;
  std::int64_t ops_ = 0;
  double peak_in_flight_ = 0.0;
};

}  // namespace pipesim::keeper
