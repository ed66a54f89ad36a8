// Simulated time: an int64 count of microseconds. Never a double, never the
// wall clock (docs/model.md §2). The same type measures instants and durations.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace pipesim::sim {

struct Time {
  std::int64_t us = 0;

  static constexpr Time micros(std::int64_t v) { return Time{v}; }
  static constexpr Time millis(std::int64_t v) { return Time{v * 1000}; }
  static constexpr Time seconds(std::int64_t v) { return Time{v * 1000000}; }
  static constexpr Time minutes(std::int64_t v) { return Time{v * 60000000}; }
  static constexpr Time hours(std::int64_t v) { return Time{v * 3600000000LL}; }
  static constexpr Time days(std::int64_t v) { return Time{v * 86400000000LL}; }
  static constexpr Time max() { return Time{std::numeric_limits<std::int64_t>::max()}; }

  // For output only: seconds appear in reports, never in the model's arithmetic.
  [[nodiscard]] constexpr double as_seconds() const { return static_cast<double>(us) / 1e6; }

  friend constexpr auto operator<=>(Time, Time) = default;
  friend constexpr Time operator+(Time a, Time b) { return Time{a.us + b.us}; }
  friend constexpr Time operator-(Time a, Time b) { return Time{a.us - b.us}; }
  friend constexpr Time operator*(Time a, std::int64_t k) { return Time{a.us * k}; }
  constexpr Time& operator+=(Time b) {
    us += b.us;
    return *this;
  }
};

inline constexpr Time kZero{0};

}  // namespace pipesim::sim
