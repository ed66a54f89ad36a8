#include "sim/experiment/histogram_bins.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace pipesim::sim {

std::vector<double> histogram_edges(const std::vector<double>& values) {
  if (values.empty()) throw std::invalid_argument("histogram_edges: no values");
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  if (*lo == *hi) return {*lo, *hi};
  // sqrt(n) bins, at least 5 and at most 30: enough to see the shape of a few
  // dozen to a few thousand seeds.
  const auto k = static_cast<std::size_t>(
      std::clamp(std::ceil(std::sqrt(static_cast<double>(values.size()))), 5.0, 30.0));
  std::vector<double> edges;
  for (std::size_t i = 0; i <= k; ++i) {
    edges.push_back(*lo + (*hi - *lo) * static_cast<double>(i) / static_cast<double>(k));
  }
  edges.back() = *hi;
  return edges;
}

std::vector<double> histogram_counts(const std::vector<double>& values,
                                     const std::vector<double>& edges) {
  std::vector<double> counts(edges.size() - 1, 0.0);
  for (const double v : values) {
    // The first bin whose upper edge lies above v; the largest value goes in the last.
    const auto above = std::upper_bound(edges.begin() + 1, edges.end() - 1, v);
    counts[static_cast<std::size_t>(above - (edges.begin() + 1))] += 1;
  }
  return counts;
}

}  // namespace pipesim::sim
