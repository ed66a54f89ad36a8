// Seconds (the closed loop's and the fluid's unit) to simulated time, for
// the files of Keeper (keeper*.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "sim/engine/time.h"

namespace pipesim::keeper {

// Capped at ~3,170 years: an absurd backlog (capacity 1/s, a million
// threads) must give an answer that never comes, not a time that wraps past
// 2^63 us into the past.
inline sim::Time to_time(double s) {
  constexpr double kNeverUs = 1e17;
  return sim::Time{static_cast<std::int64_t>(std::llround(std::min(s * 1e6, kNeverUs)))};
}

}  // namespace pipesim::keeper
