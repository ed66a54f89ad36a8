// Shared by the subcommands that simulate: Monte Carlo over seeds of one
// config, with the reproduce line printed if a run breaks an invariant.
#pragma once

#include <cstdint>
#include <functional>
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
  std::string progress;       // the progress line's label ("pipesim compare: A"); empty: none
  std::string reproduce;     // the command line that reproduces a failure, without --seed
};

// nullopt after printing the failing seed and the reproduce command (exit 3).
std::optional<std::vector<sim::Metrics>> simulate(const pipeline::Config& config,
                                                  const SimulateRequest& request);

// A progress line "<label>: 12/40 seeds  1m04s elapsed  ETA 2m08s" on
// stderr, fed with the number of finished seeds; nullopt when stderr is not a
// terminal (no progress line then).
std::optional<std::function<void(std::uint64_t)>> seeds_progress(const std::string& label,
                                                                 std::uint64_t seeds);

// A progress line for one run, fed by the event loop with simulated time
// (sim::observe_progress) up to run.duration + run.drain; cleared when the
// returned guard goes. Nothing when stderr is not a terminal.
class RunProgress {
 public:
  RunProgress(const std::string& label, const pipeline::Config& config);
  ~RunProgress();
  RunProgress(const RunProgress&) = delete;
  RunProgress& operator=(const RunProgress&) = delete;
};

// Duration of the workload/fault phase in days (for _per_day estimates).
double run_days(const pipeline::Config& config);

}  // namespace pipesim::cli
