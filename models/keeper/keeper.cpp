#include "models/keeper/keeper.h"

#include <algorithm>
#include <cmath>

namespace pipesim::keeper {

namespace {
// Utilisation is capped below 1 for the steady-state part; anything above
// capacity goes into the fluid backlog instead.
constexpr double kMaxUtilisation = 0.995;
// ~3,170 years: later than any run ends, far below 2^63 us even with a run's
// own times added.
constexpr double kNeverUs = 1e17;
}  // namespace

Keeper::Keeper(const KeeperOptions& options)
    : options_(options), capacity_(static_cast<double>(options.capacity_ops_per_s)) {}

double Keeper::arrival_rate() const {
  return static_cast<double>(options_.background_ops_per_s) + extra_ops_per_s_ + own_rate_;
}

void Keeper::advance(sim::Time now) {
  if (now <= last_) return;
  const double dt = static_cast<double>((now - last_).us) / 1e6;
  backlog_ = std::max(0.0, backlog_ + (arrival_rate() - capacity()) * dt);
  last_ = now;
  while (now - window_start_ >= sim::Time::seconds(1)) {
    own_rate_ = window_ops_;
    window_ops_ = 0;
    window_start_ += sim::Time::seconds(1);
    if (now - window_start_ >= sim::Time::seconds(1)) {
      own_rate_ = 0;  // a silent stretch: skip ahead
      window_start_ = now;
    }
  }
}

double Keeper::time_in_system_s() const {
  const double mu = capacity();
  const double rho = std::min(arrival_rate() / mu, kMaxUtilisation);
  return static_cast<double>(options_.latency.us) / 1e6 + 1.0 / (mu * (1.0 - rho)) + backlog_ / mu;
}

double Keeper::in_flight(sim::Time now) {
  advance(now);
  return std::min(arrival_rate(), capacity()) * time_in_system_s() + backlog_;
}

sim::Time Keeper::submit(sim::Time now, std::int64_t ops) {
  advance(now);
  ops_ += ops;
  window_ops_ += static_cast<double>(ops);
  peak_in_flight_ = std::max(peak_in_flight_, in_flight(now));
  // Sequential requests: each waits its own time in the system. A backlog far
  // beyond capacity (capacity_factor 0.0001, extra_ops_per_s 1e8) can put the
  // answer past 2^63 us, where the conversion wrapped to a negative time and
  // the answer was scheduled in the past: clamp to an answer later than any
  // run reaches (run.duration <= 3650 d), which simply never comes.
  const double us = std::min(time_in_system_s() * 1e6 * static_cast<double>(ops), kNeverUs);
  return sim::Time{static_cast<std::int64_t>(std::llround(us))};
}

void Keeper::set_degradation(sim::Time now, double capacity_factor, double extra_ops_per_s) {
  advance(now);
  capacity_factor_ = capacity_factor;
  extra_ops_per_s_ = extra_ops_per_s;
}

}  // namespace pipesim::keeper
