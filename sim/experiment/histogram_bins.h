// The bins of a histogram of per-seed values (pipesim report's distributions).
#pragma once

#include <vector>

namespace pipesim::sim {

// k + 1 edges of k equal-width bins from the smallest value to the largest,
// k = ceil(sqrt(n)) kept within [5, 30]; two equal edges (one bin) when every
// value is the same. `values` must not be empty.
std::vector<double> histogram_edges(const std::vector<double>& values);

// How many values fall in each bin [edge i, edge i+1); the last bin is closed
// (it holds the largest value).
std::vector<double> histogram_counts(const std::vector<double>& values,
                                     const std::vector<double>& edges);

}  // namespace pipesim::sim
