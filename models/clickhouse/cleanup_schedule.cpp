#include "models/clickhouse/cleanup_schedule.h"

#include <algorithm>

namespace pipesim::clickhouse {

sim::Time CleanupSchedule::after_iteration(double points, sim::RandomStream& stream) {
  const std::int64_t preferred = settings_.preferred_points_per_iteration;
  if (ran_before_ && preferred > 0) {
    const double ratio = points / static_cast<double>(preferred);
    if (ratio == 0) {
      sleep_ms_ = settings_.max_cleanup_delay_period_s * 1000;
    } else {
      sleep_ms_ = static_cast<std::int64_t>(static_cast<double>(sleep_ms_) / ratio);
    }
    sleep_ms_ = std::clamp(
        sleep_ms_, settings_.cleanup_delay_period_s * 1000,
        std::max(settings_.cleanup_delay_period_s, settings_.max_cleanup_delay_period_s) * 1000);
  }
  ran_before_ = true;
  // std::uniform_int_distribution<UInt64>(0, random_add * 1000): both ends included.
  const auto random_add_ms =
      static_cast<std::uint64_t>(settings_.cleanup_delay_period_random_add_s * 1000);
  sleep_ms_ += static_cast<std::int64_t>(stream.below(random_add_ms + 1));
  return sim::Time::millis(sleep_ms_);
}

}  // namespace pipesim::clickhouse
