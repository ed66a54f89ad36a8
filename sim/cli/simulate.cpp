#include "sim/cli/simulate.h"

#include <iostream>
#include <thread>

#include "models/pipeline/scenario.h"
#include "sim/experiment/monte_carlo.h"

namespace pipesim::cli {

std::optional<std::vector<sim::Metrics>> simulate(const pipeline::Config& config,
                                                  const SimulateRequest& request) {
  sim::MonteCarloOptions mc;
  mc.first_seed = request.first_seed;
  mc.seeds = request.seeds;
  mc.threads = request.threads > 0 ? request.threads : std::max(1u, std::thread::hardware_concurrency());
  mc.progress = request.progress;
  try {
    return sim::run_monte_carlo(mc, [&config](std::uint64_t seed) {
      return pipeline::run_scenario(config, seed);
    });
  } catch (const sim::RunFailure& e) {
    std::cerr << "pipesim: internal error in seed " << e.seed() << ": " << e.what()
              << "\nreproduce with: " << request.reproduce << " --seed " << e.seed() << "\n";
    return std::nullopt;
  }
}

double run_days(const pipeline::Config& config) {
  return config.run.duration.as_seconds() / 86400.0;
}

}  // namespace pipesim::cli
