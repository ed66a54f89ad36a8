// What one run yields: named numbers in a fixed order. sim/experiment and
// sim/report know a run only as "config + seed -> Metrics".
#pragma once

#include <string>
#include <vector>

namespace pipesim::sim {

struct Metric {
  std::string name;
  double value = 0;
};
using Metrics = std::vector<Metric>;

}  // namespace pipesim::sim
