// Delta debugging (Zeller & Hildebrandt, "Simplifying and Isolating
// Failure-Inducing Input", IEEE TSE 28(2), 2002): ddmin reduces a set of
// elements (here a run's faults) to a 1-minimal subset for which a condition
// still holds: removing any single element of the result breaks it. Kafka-free;
// the caller's test runs the simulation.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace pipesim::sim {

// `holds(subset)`: whether the condition holds with only these elements (indices
// into 0..n-1, ascending). Called with the empty set first (a condition that
// needs no element at all reduces to it). Each subset is tested at most once
// (results are cached). Requires holds(all n) to be true; returns the subset.
std::vector<std::size_t> ddmin(std::size_t n,
                               const std::function<bool(const std::vector<std::size_t>&)>& holds);

}  // namespace pipesim::sim
