#include "sim/experiment/sweep_runner.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "sim/engine/interrupt.h"

namespace pipesim::sim {

void run_sweep(std::size_t points, const SweepRunOptions& options, const PointSeedRun& run,
               const PointDone& done, const RunDone& run_done) {
  const std::uint64_t seeds = options.seeds;
  const std::uint64_t total = static_cast<std::uint64_t>(points) * seeds;
  if (total == 0) return;

  // Run u is point u / seeds with seed first_seed + u % seeds: threads take
  // runs in that order, so earlier points finish first and little waits.
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;  // guards everything below
  std::vector<std::vector<Metrics>> results(points);
  std::vector<std::uint64_t> remaining(points, seeds);
  std::size_t frontier = 0;                 // points before it were handed on
  std::optional<std::uint64_t> failed_run;  // the earliest failed run
  std::string failure;
  std::exception_ptr done_error;

  const auto worker = [&] {
    while (!stop.load()) {
      if (interrupt_signal() != 0) return;  // finished points are handed on; the rest waits for --resume
      const std::uint64_t u = next.fetch_add(1);
      if (u >= total) return;
      const std::size_t position = static_cast<std::size_t>(u / seeds);
      const std::uint64_t s = u % seeds;
      Metrics metrics;
      std::optional<std::string> error;
      try {
        metrics = run(position, options.first_seed + s);
      } catch (const Interrupted&) {
        return;  // a user's interrupt, not a failing run
      } catch (const std::exception& e) {
        error = e.what();
      }
      const std::lock_guard<std::mutex> lock(mutex);
      if (error) {
        if (!failed_run || u < *failed_run) {
          failed_run = u;
          failure = *error;
        }
        stop.store(true);
        continue;
      }
      if (results[position].empty()) results[position].resize(seeds);
      results[position][s] = std::move(metrics);
      --remaining[position];
      if (run_done) run_done(position);
      // Hand on every complete point at the front, unless an earlier run failed
      // (then points after the failing one must not be written).
      while (frontier < points && remaining[frontier] == 0 && !done_error &&
             (!failed_run || frontier < *failed_run / seeds)) {
        try {
          done(frontier, results[frontier]);
        } catch (...) {
          done_error = std::current_exception();
          stop.store(true);
          break;
        }
        results[frontier] = {};  // free it: long sweeps keep only the unfinished points
        ++frontier;
      }
    }
  };
  const unsigned threads = static_cast<unsigned>(
      std::max<std::uint64_t>(1, std::min<std::uint64_t>(options.threads, total)));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();

  if (done_error) std::rethrow_exception(done_error);
  throw_if_interrupted();
  if (failed_run) {
    throw SweepRunFailure(static_cast<std::size_t>(*failed_run / seeds),
                          options.first_seed + *failed_run % seeds, failure);
  }
}

}  // namespace pipesim::sim
