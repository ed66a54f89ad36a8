#include "models/analytic/crash_outcome.h"

#include <algorithm>
#include <cmath>

namespace pipesim::analytic {

double stop_probability(const CrashInputs& in) {
  const double q = in.records_per_s * in.tick_s;
  const double b = static_cast<double>(in.max_poll_records);
  const double tick = in.tick_s;
  const double interval = in.commit_interval_s;
  // The crash stops the connector once x >= phi + threshold: with q <= B,
  // once K + 1 quanta are in (K = floor(B / q)), i.e. threshold = K ticks;
  // with q > B, once the second batch of the first quantum has started.
  const double threshold = q > b ? in.first_batch_s : std::floor(b / q) * tick;
  // P = E_phi[(I - phi - threshold)^+] / I with phi uniform on [0, tick).
  const double a = interval - threshold;
  double p;
  if (a >= tick) {
    p = (a - tick / 2.0) / interval;
  } else if (a > 0) {
    p = a * a / (2.0 * tick * interval);
  } else {
    p = 0.0;
  }
  return std::clamp(p, 0.0, 1.0);
}

double duplicates_per_crash(const CrashInputs& in) {
  // E[N | x] = rate x (a lattice of quanta with a uniform phase); x uniform on [0, I).
  const double q = in.records_per_s * in.tick_s;
  const double b = static_cast<double>(in.max_poll_records);
  const double interval = in.commit_interval_s;
  const bool same_boundaries = q >= b && std::fmod(q, b) == 0.0;
  const double x0 =
      same_boundaries ? std::min(interval, static_cast<double>(in.dedup_window_blocks) * b / in.records_per_s) : 0.0;
  return in.records_per_s * (interval * interval - x0 * x0) / (2.0 * interval);
}

double dedup_hit_probability(std::int64_t window_blocks, double inserts_per_s, double delay_s) {
  if (window_blocks <= 0) return 0.0;
  // P(Poisson(mu) <= W - 1), summed in log space for large means.
  const double mu = inserts_per_s * delay_s;
  if (mu <= 0) return 1.0;
  double log_term = -mu;  // k = 0
  double sum = std::exp(log_term);
  for (std::int64_t k = 1; k < window_blocks; ++k) {
    log_term += std::log(mu) - std::log(static_cast<double>(k));
    sum += std::exp(log_term);
    if (k > mu && std::exp(log_term) < 1e-17) break;
  }
  return std::min(1.0, sum);
}

}  // namespace pipesim::analytic
