// Named, independent random streams (docs/model.md §2). A stream is derived from
// (master seed, name) only, so adding a stream or drawing more from one never
// shifts another's draws: two configs that differ in one component see the
// same workload and fault timeline for the same seed (common random numbers).
//
// The generator (xoshiro256**) and every distribution are our own code, so the
// draws are the same under every standard library; no std::*_distribution.
#pragma once

#include <cstdint>
#include <string_view>

#include "sim/engine/time.h"

namespace pipesim::sim {

class RandomStream {
 public:
  RandomStream(std::uint64_t master_seed, std::string_view name);
  // A stream from a raw 64-bit key, for the many small streams of one named
  // family (e.g. the arrival instants of one block): derive the family's key
  // once from (seed, name), then mix the member's numbers into it.
  static RandomStream from_key(std::uint64_t key);

  std::uint64_t next_u64();
  // Uniform in [0, 1) with 53 random bits.
  double uniform01();
  // Uniform integer in [0, n). REQUIRES: n > 0.
  std::uint64_t below(std::uint64_t n);
  bool bernoulli(double p);
  // Exponential with the given mean (>= 0).
  double exponential(double mean);
  // Standard normal (Box-Muller; one value per call, deterministic).
  double normal();
  // Poisson count with the given mean (exact for small means, normal
  // approximation with continuity correction above 64).
  std::int64_t poisson(double mean);
  // An exponential duration with the given mean, rounded to microseconds.
  Time exponential_time(Time mean);

 private:
  RandomStream() = default;
  std::uint64_t s_[4];
};

// FNV-1a 64 of a name; used to derive stream seeds and config digests.
std::uint64_t fnv1a64(std::string_view text, std::uint64_t basis = 14695981039346656037ULL);

}  // namespace pipesim::sim
