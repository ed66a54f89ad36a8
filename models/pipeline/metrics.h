// The metric names of SPEC §9 (other tools rely on them: keep them exactly)
// and which of them the current models do not produce yet, so reports say
// "not modelled yet" instead of presenting a 0 as an answer.
#pragma once

#include <string>
#include <vector>

namespace pipesim::pipeline {

// Every per-run metric, in report order.
const std::vector<std::string>& metric_names();
// Metrics that stay 0 because their mechanism is not modelled yet.
const std::vector<std::string>& metrics_not_modelled();
// Fault kinds that are counted when they fire but have no effect yet.
const std::vector<std::string>& faults_not_modelled();

}  // namespace pipesim::pipeline
