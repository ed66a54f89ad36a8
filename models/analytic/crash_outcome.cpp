#include "models/analytic/crash_outcome.h"

#include <algorithm>
#include <cmath>

namespace pipesim::analytic {

double stop_probability(const CrashInputs& in) {
  const double fetch_records = std::floor(static_cast<double>(in.max_partition_fetch_bytes) /
                                          static_cast<double>(in.record_bytes + 18));
  const double first_batch = std::min(static_cast<double>(in.max_poll_records), fetch_records);
  const double rate = in.records_per_s;
  const double interval = in.commit_interval_s;
  const double threshold = first_batch / rate + 0.5 / rate;
  return std::clamp((interval - threshold) / interval, 0.0, 1.0);
}

double duplicates_per_crash(const CrashInputs& in) {
  return in.records_per_s * in.commit_interval_s / 2.0;
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
