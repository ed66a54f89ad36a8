// The expectations of `pipesim check` (and of `shrink --expect`): a JSON list,
// or {"expect": [...]}, of {"metric", "max" and/or "min", "confidence"} where
// the metric is any estimate name (models/pipeline/estimates.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/experiment/metrics.h"

namespace pipesim::pipeline {

struct Expectation {
  std::string metric;
  std::optional<double> max, min;
  double confidence = 0.95;
};

// Throws sim::ConfigError ("expectation error at expect[i].key: ...") naming what is wrong.
std::vector<Expectation> read_expectations(const std::string& path);

// Throws sim::ConfigError naming the first expectation with no estimate over
// runs of `days` days (a per-day figure from a window shorter than whole days).
void check_period(const std::vector<Expectation>& expectations, double days);

// Whether one run breaks any of them: its own value of the estimate (a run of
// `days` days) beyond a bound; "lost_records_per_day = 3 (max 0)" for each broken one.
std::vector<std::string> broken_expectations(const std::vector<Expectation>& expectations,
                                             const sim::Metrics& run, double days);

}  // namespace pipesim::pipeline
