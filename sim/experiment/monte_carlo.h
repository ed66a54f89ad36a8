// Monte Carlo over seeds. Runs are independent single-threaded simulations;
// threads only pick which seed to run next, and each result is stored at its
// seed's index, so the output is the same for any thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/experiment/metrics.h"

namespace pipesim::sim {

using RunFunction = std::function<Metrics(std::uint64_t seed)>;

struct MonteCarloOptions {
  std::uint64_t first_seed = 1;
  std::uint64_t seeds = 1;
  unsigned threads = 1;
  // Called (one call at a time) with the number of finished seeds after each
  // seed: the CLI's progress line. Never changes a result.
  std::function<void(std::uint64_t finished)> seed_done;
};

// Returns one Metrics per seed, in seed order. If a run throws, the error of
// the lowest failing seed is rethrown as RunFailure after all threads stop.
// After a user's interrupt (sim/engine/interrupt.h) no new seed starts, runs
// in progress stop, and Interrupted is thrown once all threads have stopped.
std::vector<Metrics> run_monte_carlo(const MonteCarloOptions& options, const RunFunction& run);

class RunFailure : public std::runtime_error {
 public:
  RunFailure(std::uint64_t seed, const std::string& what)
      : std::runtime_error(what), seed_(seed) {}
  [[nodiscard]] std::uint64_t seed() const { return seed_; }

 private:
  std::uint64_t seed_;
};

}  // namespace pipesim::sim
