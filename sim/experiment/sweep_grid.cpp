#include "sim/experiment/sweep_grid.h"

#include <charconv>

#include "sim/config/options.h"

namespace pipesim::sim {
namespace {

// A point count beyond this is a typo, not a sweep (and would overflow).
constexpr std::size_t kMaxPoints = 100'000'000;

std::string describe(const nlohmann::ordered_json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

}  // namespace

SweepGrid SweepGrid::parse(const nlohmann::ordered_json& grid, const std::string& where) {
  if (!grid.is_object() || grid.empty()) {
    throw ConfigError("config error at " + where +
                      ": expected an object of \"section.key\": [values...], found " +
                      describe(grid));
  }
  SweepGrid g;
  std::size_t points = 1;
  for (const auto& [key, values] : grid.items()) {
    const std::string path = where + "[\"" + key + "\"]";
    if (key != "faults" &&
        (key.find('.') == std::string::npos || key.front() == '.' || key.back() == '.')) {
      throw ConfigError("config error at " + path +
                        ": expected a config key as in --set (\"section.key\", e.g. "
                        "\"connect.max.poll.records\", or \"faults\")");
    }
    if (!values.is_array() || values.empty()) {
      throw ConfigError("config error at " + path +
                        ": expected a non-empty list of values, found " + describe(values));
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (values[i] == values[j]) {
          throw ConfigError("config error at " + path + "[" + std::to_string(i) + "]: value " +
                            values[i].dump() + " is listed twice (also at [" + std::to_string(j) +
                            "])");
        }
      }
    }
    if (points > kMaxPoints / values.size()) {
      throw ConfigError("config error at " + where + ": more than " + std::to_string(kMaxPoints) +
                        " points");
    }
    points *= values.size();
    g.keys_.push_back(key);
    g.values_.emplace_back(values.begin(), values.end());
  }
  return g;
}

std::size_t SweepGrid::point_count() const {
  std::size_t n = 1;
  for (const auto& v : values_) n *= v.size();
  return n;
}

std::vector<std::pair<std::string, nlohmann::ordered_json>> SweepGrid::point(
    std::size_t index) const {
  // Mixed-radix digits of `index`, the last key being the lowest digit.
  std::vector<std::pair<std::string, nlohmann::ordered_json>> out(keys_.size());
  for (std::size_t k = keys_.size(); k-- > 0;) {
    const std::size_t radix = values_[k].size();
    out[k] = {keys_[k], values_[k][index % radix]};
    index /= radix;
  }
  return out;
}

nlohmann::ordered_json SweepGrid::to_json() const {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (std::size_t k = 0; k < keys_.size(); ++k) out[keys_[k]] = values_[k];
  return out;
}

Shard parse_shard(const std::string& text) {
  const auto bad = [&text] {
    return ConfigError("bad --shard \"" + text + "\": expected K/N with 1 <= K <= N, e.g. 2/8");
  };
  const auto slash = text.find('/');
  if (slash == std::string::npos) throw bad();
  Shard s;
  const auto parse = [&](std::size_t from, std::size_t to, std::uint64_t& out) {
    const char* first = text.data() + from;
    const char* last = text.data() + to;
    const auto [ptr, ec] = std::from_chars(first, last, out);
    if (first == last || ec != std::errc() || ptr != last) throw bad();
  };
  parse(0, slash, s.index);
  parse(slash + 1, text.size(), s.count);
  if (s.count < 1 || s.index < 1 || s.index > s.count) throw bad();
  return s;
}

std::vector<std::size_t> shard_points(std::size_t point_count, const Shard& shard) {
  std::vector<std::size_t> out;
  for (std::size_t p = shard.index - 1; p < point_count;) {
    out.push_back(p);
    if (point_count - p <= shard.count) break;  // the next one is past the end (no overflow)
    p += shard.count;
  }
  return out;
}

}  // namespace pipesim::sim
