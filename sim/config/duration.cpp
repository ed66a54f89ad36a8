#include "sim/config/duration.h"

#include <array>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>

namespace pipesim::sim {
namespace {

constexpr std::array<std::pair<std::string_view, std::int64_t>, 6> kUnits{{
    {"d", 86400000000LL},
    {"h", 3600000000LL},
    {"m", 60000000LL},
    {"s", 1000000LL},
    {"ms", 1000LL},
    {"us", 1LL},
}};

}  // namespace

// One or more <number><unit> groups, units from the largest down, each at
// most once: "90s", "1h30m", "2m30s", "1.5h", "250.5ms". A fraction must come
// out a whole number of microseconds (time's resolution); anything else,
// including an overflow, is not a duration.
std::optional<Time> parse_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::size_t i = 0;
  std::size_t next_unit = 0;  // index in kUnits the next group may use
  std::int64_t total = 0;
  while (i < text.size()) {
    std::int64_t whole = 0;
    const std::size_t digits_from = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (whole > (std::numeric_limits<std::int64_t>::max() - 9) / 10) return std::nullopt;
      whole = whole * 10 + (text[i] - '0');
      ++i;
    }
    if (i == digits_from) return std::nullopt;
    // Fraction digits, kept as numerator / 10^k (at most 6 count: 1us of 1s).
    std::int64_t fraction = 0;
    std::int64_t denominator = 1;
    if (i < text.size() && text[i] == '.') {
      ++i;
      const std::size_t fraction_from = i;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        if (denominator > 1000000000000LL) return std::nullopt;  // beyond any unit's resolution
        fraction = fraction * 10 + (text[i] - '0');
        denominator *= 10;
        ++i;
      }
      if (i == fraction_from) return std::nullopt;
    }
    // The unit: the longest name that matches here ("ms" before "m").
    std::size_t unit = kUnits.size();
    for (std::size_t u = 0; u < kUnits.size(); ++u) {
      const std::string_view name = kUnits[u].first;
      if (text.substr(i, name.size()) == name &&
          (unit == kUnits.size() || name.size() > kUnits[unit].first.size())) {
        unit = u;
      }
    }
    if (unit == kUnits.size() || unit < next_unit) return std::nullopt;
    i += kUnits[unit].first.size();
    next_unit = unit + 1;
    const std::int64_t scale = kUnits[unit].second;
    if (whole > std::numeric_limits<std::int64_t>::max() / scale) return std::nullopt;
    std::int64_t group = whole * scale;
    if (fraction != 0) {
      // fraction / denominator of `scale` microseconds, exactly: with
      // g = gcd(scale, denominator), it is whole only if denominator / g
      // divides fraction, and the result stays below `scale` (no overflow).
      const std::int64_t g = std::gcd(scale, denominator);
      if (fraction % (denominator / g) != 0) return std::nullopt;  // not a whole microsecond
      group += fraction / (denominator / g) * (scale / g);
    }
    if (group > std::numeric_limits<std::int64_t>::max() - total) return std::nullopt;
    total += group;
  }
  return Time{total};
}

std::string format_duration(Time t) {
  if (t.us == 0) return "0s";
  for (const auto& [name, scale] : kUnits) {
    if (t.us % scale == 0) return std::to_string(t.us / scale) + std::string(name);
  }
  return std::to_string(t.us) + "us";
}

}  // namespace pipesim::sim
