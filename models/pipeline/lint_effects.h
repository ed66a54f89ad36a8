// What closing each lint finding would change, from a paired simulation: the
// config as given and the config with the finding's closed_by settings, run on
// the same seeds (common random numbers), 1 h at the peak hour's rate, with
// every Poisson fault kind of the config (and worker crashes) at least twice
// an hour, so that a few seeds show each hazard.
#pragma once

#include <vector>

#include "models/pipeline/config.h"
#include "models/pipeline/lint.h"

namespace pipesim::pipeline {

// The stressed config the paired simulation runs.
Config stress_config(const Config& config);

// Fills each finding's `effect` (those with closed_by and a metric).
void estimate_effects(const Config& config, std::vector<Finding>& findings, int seeds);

}  // namespace pipesim::pipeline
