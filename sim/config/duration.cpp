#include "sim/config/duration.h"

#include <array>
#include <cstdint>
#include <limits>
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

std::optional<Time> parse_duration(std::string_view text) {
  std::size_t i = 0;
  std::int64_t value = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (value > (std::numeric_limits<std::int64_t>::max() - 9) / 10) return std::nullopt;
    value = value * 10 + (text[i] - '0');
    ++i;
  }
  if (i == 0) return std::nullopt;
  const std::string_view unit = text.substr(i);
  for (const auto& [name, scale] : kUnits) {
    if (unit == name) {
      if (value > std::numeric_limits<std::int64_t>::max() / scale) return std::nullopt;
      return Time{value * scale};
    }
  }
  return std::nullopt;
}

std::string format_duration(Time t) {
  if (t.us == 0) return "0s";
  for (const auto& [name, scale] : kUnits) {
    if (t.us % scale == 0) return std::to_string(t.us / scale) + std::string(name);
  }
  return std::to_string(t.us) + "us";
}

}  // namespace pipesim::sim
