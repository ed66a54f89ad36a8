// Shared by the subcommands that simulate: Monte Carlo over seeds of one
// config, with the reproduce line printed if a run breaks an invariant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/pipeline/config.h"
#include "sim/experiment/metrics.h"

namespace pipesim::cli {

struct SimulateRequest {
  std::uint64_t first_seed = 1;
  std::uint64_t seeds = 1;
  unsigned threads = 0;      // 0: one per core
  bool progress = false;
  std::string reproduce;     // the command line that reproduces a failure, without --seed
};

// nullopt after printing the failing seed and the reproduce command (exit 3).
std::optional<std::vector<sim::Metrics>> simulate(const pipeline::Config& config,
                                                  const SimulateRequest& request);

// Duration of the workload/fault phase in days (for _per_day estimates).
double run_days(const pipeline::Config& config);

}  // namespace pipesim::cli
