// What one run yields: named numbers in a fixed order. sim/experiment and
// sim/report know a run only as "config + seed -> Metrics".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pipesim::sim {

struct Metric {
  std::string name;
  double value = 0;
};
using Metrics = std::vector<Metric>;

// The value of the metric `name` in one run's metrics; nullopt when the run
// has no metric of that name.
inline std::optional<double> find_metric(const Metrics& metrics, std::string_view name) {
  for (const auto& m : metrics) {
    if (m.name == name) return m.value;
  }
  return std::nullopt;
}

// The same, 0 for a metric the run does not have (it counted nothing).
inline double value_of(const Metrics& metrics, std::string_view name) {
  return find_metric(metrics, name).value_or(0.0);
}

}  // namespace pipesim::sim
