// A sweep grid: for some config keys (written as in --set, "section.key" or
// "faults"), the list of values to try. The points are the cartesian product,
// numbered like nested loops over the keys in the order they are listed: the
// first key varies slowest, the last fastest. A point's number depends only
// on the grid, so shards, resumed runs and merges all agree on it.
//
// Invariants: at least one key; every key has at least one value and no value
// twice; point numbers run from 0 to point_count() - 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipesim::sim {

class SweepGrid {
 public:
  // `grid` is {"section.key": [values...], ...}. `where` names its source in
  // errors ("grid.json", "sweep"). Throws ConfigError naming the key.
  static SweepGrid parse(const nlohmann::ordered_json& grid, const std::string& where);

  [[nodiscard]] std::size_t point_count() const;
  // The key = value assignments of point `index`, in key order.
  [[nodiscard]] std::vector<std::pair<std::string, nlohmann::ordered_json>> point(
      std::size_t index) const;
  // The grid as given (keys in order): written into the sweep's manifest.
  [[nodiscard]] nlohmann::ordered_json to_json() const;

 private:
  std::vector<std::string> keys_;
  std::vector<std::vector<nlohmann::ordered_json>> values_;
};

// --shard K/N: shard K of N (1 <= K <= N). Points go round-robin: point p
// belongs to shard (p mod N) + 1, which spreads a key that varies slowly (and
// often drives the cost, like the throughput) evenly over the shards.
struct Shard {
  std::uint64_t index = 1;
  std::uint64_t count = 1;
};
// Throws ConfigError for anything but "K/N" with 1 <= K <= N.
Shard parse_shard(const std::string& text);
// The points of `shard` among `point_count`, in increasing order.
std::vector<std::size_t> shard_points(std::size_t point_count, const Shard& shard);

}  // namespace pipesim::sim
