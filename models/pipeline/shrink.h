// `pipesim shrink` (docs/model.md §6): the pieces that know the pipeline. A
// condition on one run's metrics ("lost_records > 0"), the realised fault
// timeline of a seed as an explicit scheduled list (which reproduces the run
// bit for bit: a scheduled fault with its target and duration given draws
// nothing), and a config with a chosen subset of those faults.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/pipeline/config.h"
#include "sim/engine/fault_schedule.h"
#include "sim/experiment/metrics.h"

namespace pipesim::pipeline {

// METRIC OP NUMBER [and METRIC OP NUMBER ...], OP one of > >= < <= == !=;
// METRIC a metric of one run (docs/model.md §9), e.g. "lost_records > 0 and
// duplicate_rows >= 10". "&&" may stand for "and".
struct RunCondition {
  struct Clause {
    std::string metric;
    std::string op;
    double value = 0;
  };
  std::vector<Clause> clauses;
  std::string text;
};
// Throws sim::ConfigError naming the part that is wrong.
RunCondition parse_run_condition(const std::string& text);
bool holds(const RunCondition& condition, const sim::Metrics& metrics);
// "lost_records = 500 (> 0)" for each clause: what the run gave.
std::string describe(const RunCondition& condition, const sim::Metrics& metrics);

// Every fault that fired in `seed`'s run, as a scheduled fault: its time,
// target, duration and parameters, in firing order.
std::vector<sim::FaultSpec> realised_faults(const Config& config, std::uint64_t seed);

// One fault for people: "worker_crash at 03:12:05.200000 on worker-0 for 30s (controlled=true)".
std::string describe(const sim::FaultSpec& fault);

// The search: delta debugging (sim/experiment/ddmin) over `all` (the realised
// faults) while `condition` holds on `seed`, then each kept fault's window
// halved while it still holds (down to 1 ms). Stops early, with the best
// config so far, after `max_runs` runs or a user's interrupt.
struct ShrinkResult {
  std::vector<sim::FaultSpec> kept;  // in the order of `all`
  std::int64_t runs = 0;
  bool out_of_runs = false;
  int signal = 0;  // the interrupt that stopped it, or 0
};
// `holds`: the condition on a run's metrics (a RunCondition, or broken expectations).
ShrinkResult shrink_faults(
    const Config& config, std::uint64_t seed, const std::function<bool(const sim::Metrics&)>& holds,
    const std::vector<sim::FaultSpec>& all, std::int64_t max_runs,
    const std::function<void(std::int64_t runs, std::size_t kept)>& progress = {});

}  // namespace pipesim::pipeline
