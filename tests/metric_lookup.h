// One run's metric by name, in a test: a metric the run does not have is a
// test failure (a misspelt name must not read as 0).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "sim/experiment/metrics.h"

namespace pipesim::test_support {

inline double metric(const sim::Metrics& m, const std::string& name) {
  if (const auto v = sim::find_metric(m, name)) return *v;
  ADD_FAILURE() << "no metric " << name;
  return -1;
}

}  // namespace pipesim::test_support
