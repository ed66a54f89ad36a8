#include "cli/simulate.h"

#include <iostream>
#include <memory>
#include <thread>

#include "models/pipeline/scenario.h"
#include "sim/engine/interrupt.h"
#include "sim/experiment/monte_carlo.h"
#include "sim/report/progress_line.h"

namespace pipesim::cli {

std::optional<std::vector<sim::Metrics>> simulate(const pipeline::Config& config,
                                                  const SimulateRequest& request) {
  sim::MonteCarloOptions mc;
  mc.first_seed = request.first_seed;
  mc.seeds = request.seeds;
  mc.threads = request.threads > 0 ? request.threads : std::max(1u, std::thread::hardware_concurrency());
  if (!request.progress.empty()) {
    if (auto progress = seeds_progress(request.progress, request.seeds)) mc.seed_done = *progress;
  }
  try {
    return sim::run_monte_carlo(mc, [&config](std::uint64_t seed) {
      return pipeline::run_scenario(config, seed);
    });
  } catch (const sim::RunFailure& e) {
    sim::end_progress_line();
    std::cerr << "pipesim: internal error in seed " << e.seed() << ": " << e.what()
              << "\nreproduce with: " << request.reproduce << " --seed " << e.seed() << "\n";
    return std::nullopt;
  }
}

std::optional<std::function<void(std::uint64_t)>> seeds_progress(const std::string& label,
                                                                 std::uint64_t seeds) {
  if (!sim::progress_wanted()) return std::nullopt;
  auto line = std::make_shared<sim::ProgressLine>(label, static_cast<double>(seeds));
  return [line, seeds](std::uint64_t done) {
    line->update(std::to_string(done) + "/" + std::to_string(seeds) + " seeds", static_cast<double>(done));
  };
}

RunProgress::RunProgress(const std::string& label, const pipeline::Config& config) {
  if (!sim::progress_wanted()) return;
  const sim::Time end = config.run.duration + config.run.drain;
  auto line = std::make_shared<sim::ProgressLine>(label, end.as_seconds());
  const std::string of = " of " + sim::format_wall_seconds(end.as_seconds()) + " simulated";
  sim::observe_progress([line, of](sim::Time now) {
    line->update(sim::format_wall_seconds(now.as_seconds()) + of, now.as_seconds());
  });
}

RunProgress::~RunProgress() {
  sim::observe_progress({});
  sim::end_progress_line();
}

double run_days(const pipeline::Config& config) {
  return config.run.duration.as_seconds() / 86400.0;
}

}  // namespace pipesim::cli
