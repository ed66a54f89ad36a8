// Runs the points of a sweep, each over the same seeds, on a pool of threads.
// The work is split into (point, seed) runs so that all threads stay busy even
// when a point has fewer seeds than there are threads; a point is handed on
// (to be written) only once all its seeds are done and every earlier point
// was handed on, so the consumer sees the points in order, whatever the
// thread count and whichever run finishes first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/experiment/metrics.h"

namespace pipesim::sim {

struct SweepRunOptions {
  std::uint64_t first_seed = 1;
  std::uint64_t seeds = 1;
  unsigned threads = 1;
};

// One run: the point's position in the list of points, and the seed.
using PointSeedRun = std::function<Metrics(std::size_t position, std::uint64_t seed)>;
// A finished point (its position), with one Metrics per seed in seed order.
// Called from one thread at a time, in position order.
using PointDone = std::function<void(std::size_t position, const std::vector<Metrics>& runs)>;
// Called (from one thread at a time) after every finished run, with its point's position.
using RunDone = std::function<void(std::size_t position)>;

// Runs `points` points (positions 0..points-1). If a run throws, no new run
// starts, the threads finish what they are running, points before the failing
// one are still handed on, and the failure of the earliest (position, seed) is
// thrown as SweepRunFailure. An exception thrown by `done` stops the sweep the
// same way and is rethrown as it is. After a user's interrupt
// (sim/engine/interrupt.h) no new run starts, runs in progress stop, the
// points already complete are handed on, and Interrupted is thrown.
void run_sweep(std::size_t points, const SweepRunOptions& options, const PointSeedRun& run,
               const PointDone& done, const RunDone& run_done = {});

class SweepRunFailure : public std::runtime_error {
 public:
  SweepRunFailure(std::size_t position, std::uint64_t seed, const std::string& what)
      : std::runtime_error(what), position_(position), seed_(seed) {}
  [[nodiscard]] std::size_t position() const { return position_; }
  [[nodiscard]] std::uint64_t seed() const { return seed_; }

 private:
  std::size_t position_;
  std::uint64_t seed_;
};

}  // namespace pipesim::sim
