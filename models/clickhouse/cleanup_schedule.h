// When a replica's ReplicatedMergeTreeCleanupThread runs next (ClickHouse
// ReplicatedMergeTreeCleanupThread::run, 23.x-25.x). After each iteration
// the thread compares the work it did ("points", ~1 point per inserted block)
// with cleanup_thread_preferred_points_per_iteration (150) and scales its
// sleep so the next iteration finds about that much: sleep / (points / 150),
// or max_cleanup_delay_period (300 s) if it found nothing, clamped to
// [cleanup_delay_period (30 s), max_cleanup_delay_period], plus a uniform
// 0..cleanup_delay_period_random_add (10 s) against thundering herds. The
// first run after the server starts does not adapt. With a preferred batch
// of 0 there is no adaptation (and no clamp) at all, as in the real code.
#pragma once

#include <cstdint>

#include "sim/engine/random.h"
#include "sim/engine/time.h"

namespace pipesim::clickhouse {

struct CleanupSettings {
  std::int64_t cleanup_delay_period_s = 30;
  std::int64_t max_cleanup_delay_period_s = 300;
  std::int64_t cleanup_delay_period_random_add_s = 10;
  std::int64_t preferred_points_per_iteration = 150;
};

class CleanupSchedule {
 public:
  explicit CleanupSchedule(const CleanupSettings& settings)
      : settings_(settings), sleep_ms_(settings.cleanup_delay_period_s * 1000) {}

  // A new server process: the thread starts over (sleep_ms = cleanup_delay_period).
  void restart_server() {
    sleep_ms_ = settings_.cleanup_delay_period_s * 1000;
    ran_before_ = false;
  }
  // The iteration that just ran cleaned `points`; returns the sleep until the
  // next one (one draw from `stream`).
  sim::Time after_iteration(double points, sim::RandomStream& stream);

  [[nodiscard]] std::int64_t sleep_ms() const { return sleep_ms_; }

 private:
  CleanupSettings settings_;
  std::int64_t sleep_ms_;
  bool ran_before_ = false;
};

}  // namespace pipesim::clickhouse
