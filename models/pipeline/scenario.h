// One seeded run of the whole pipeline: builds the components from the
// config, injects the fault timeline, runs the workload for run.duration and
// drains for run.drain, then settles the ledger (conservation is checked)
// and returns the metrics of docs/model.md §9 in metric_names() order.
#pragma once

#include <cstdint>

#include "models/ledger/ledger.h"
#include "models/pipeline/config.h"
#include "sim/engine/trace.h"
#include "sim/experiment/metrics.h"

namespace pipesim::pipeline {

// Throws sim::InvariantViolation when a model breaks an invariant.
sim::Metrics run_scenario(const Config& config, std::uint64_t seed);

// The same run, recording its story and timeline into `trace`, and the
// terminal class of every group of records (for explain).
struct TracedRun {
  sim::Metrics metrics;
  std::vector<ledger::FateGroup> groups;
};
TracedRun run_scenario_traced(const Config& config, std::uint64_t seed, sim::Trace& trace);

}  // namespace pipesim::pipeline
