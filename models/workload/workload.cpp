#include "models/workload/workload.h"

#include <algorithm>
#include <numeric>

namespace pipesim::workload {

const std::array<double, 24>& Workload::production_profile() {
  // Flat nights, a slightly busier working day, an evening peak at 20:00.
  static const std::array<double, 24> profile = {
      0.58, 0.58, 0.58, 0.58, 0.58, 0.58, 0.58, 0.58,                  // 00-07
      0.66222, 0.66222, 0.66222, 0.66222, 0.66222, 0.66222, 0.66222,   // 08-14
      0.66222, 0.66222, 0.88, 1.38, 2.38, 4.32, 2.38, 1.28, 0.78};     // 15-23
  return profile;
}

std::string check_profile(const nlohmann::json& profile) {
  if (profile == "production" || profile == "constant") return "";
  if (profile.is_array() && profile.size() == 24) {
    double sum = 0;
    for (const auto& m : profile) {
      if (!m.is_number() || m.get<double>() < 0) return "24 non-negative hourly multipliers";
      sum += m.get<double>();
    }
    if (sum > 0) return "";
  }
  return "\"production\", \"constant\" or a list of 24 non-negative hourly multipliers (not all 0)";
}

Workload::Workload(const WorkloadOptions& options, int partitions, std::uint64_t seed)
    : options_(options), partitions_(partitions), arrivals_(seed, "workload/arrivals") {
  if (options.profile == "constant") {
    multipliers_.fill(1.0);
  } else if (options.profile.is_array()) {
    for (std::size_t h = 0; h < 24; ++h) multipliers_[h] = options.profile[h].get<double>();
    // Normalised to mean 1, so records_per_day stays the day's total.
    const double mean = std::accumulate(multipliers_.begin(), multipliers_.end(), 0.0) / 24.0;
    for (auto& m : multipliers_) m /= mean;
  } else {
    multipliers_ = production_profile();
  }
}

double Workload::peak_multiplier() const {
  double peak = 0;
  for (const double m : multipliers_) peak = std::max(peak, m);
  return peak;
}

double Workload::rate_at(sim::Time t) const {
  const auto hour = static_cast<std::size_t>((t.us / sim::Time::hours(1).us) % 24);
  return static_cast<double>(options_.records_per_day) / 86400.0 * multipliers_[hour];
}

void Workload::draw_tick(sim::Time t, std::vector<std::int64_t>& counts) {
  const double mean = rate_at(t) * options_.tick.as_seconds() / partitions_;
  counts.resize(static_cast<std::size_t>(partitions_));
  if (options_.arrivals == "fixed") {
    carry_.resize(counts.size(), 0.0);
    for (std::size_t p = 0; p < counts.size(); ++p) {
      const double due = carry_[p] + mean;
      counts[p] = static_cast<std::int64_t>(due + 1e-9);
      carry_[p] = due - static_cast<double>(counts[p]);
    }
    return;
  }
  for (auto& c : counts) c = arrivals_.poisson(mean);
}

}  // namespace pipesim::workload
