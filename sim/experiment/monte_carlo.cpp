#include "sim/experiment/monte_carlo.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "sim/engine/interrupt.h"

namespace pipesim::sim {

std::vector<Metrics> run_monte_carlo(const MonteCarloOptions& options, const RunFunction& run) {
  std::vector<Metrics> results(options.seeds);
  std::vector<std::optional<std::string>> errors(options.seeds);
  std::atomic<std::uint64_t> next{0};
  std::atomic<std::uint64_t> done{0};
  std::mutex progress_mutex;

  const auto worker = [&] {
    for (;;) {
      if (interrupt_signal() != 0) return;
      const std::uint64_t i = next.fetch_add(1);
      if (i >= options.seeds) return;
      try {
        results[i] = run(options.first_seed + i);
      } catch (const Interrupted&) {
        return;
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
      const std::uint64_t finished = done.fetch_add(1) + 1;
      if (options.seed_done) {
        const std::lock_guard<std::mutex> lock(progress_mutex);
        options.seed_done(finished);
      }
    }
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(options.threads, static_cast<unsigned>(options.seeds)));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  throw_if_interrupted();

  for (std::uint64_t i = 0; i < options.seeds; ++i) {
    if (errors[i]) throw RunFailure(options.first_seed + i, *errors[i]);
  }
  return results;
}

}  // namespace pipesim::sim
