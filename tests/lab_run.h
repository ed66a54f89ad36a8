// One seeded run of a config under configs/lab/, with its metrics by name:
// the shared fixture of the *_lab_test.cpp files.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "metric_lookup.h"
#include "models/pipeline/config.h"
#include "models/pipeline/scenario.h"

namespace pipesim::pipeline {

// The raw JSON of configs/lab/NAME (the source root from PIPESIM_SOURCE_DIR).
inline nlohmann::json lab_json(const std::string& name) {
  const char* root = std::getenv("PIPESIM_SOURCE_DIR");
  const std::string dir = root ? root : ".";
  return read_config_file(dir + "/configs/lab/" + name);
}

class Lab {
 public:
  explicit Lab(const char* name) : Lab(std::string(name)) {}
  explicit Lab(const std::string& name, const std::vector<std::string>& overrides = {}) {
    nlohmann::json raw = lab_json(name);
    for (const auto& o : overrides) apply_override(raw, o);
    metrics_ = run_scenario(load_config(raw), 1);
  }
  explicit Lab(const nlohmann::json& raw) { metrics_ = run_scenario(load_config(raw), 1); }

  double operator[](const std::string& name) const { return test_support::metric(metrics_, name); }

 private:
  sim::Metrics metrics_;
};

}  // namespace pipesim::pipeline
