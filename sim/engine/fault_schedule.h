// The fault timeline of one run (docs/model.md §5): each configured fault is either
// scheduled (at time t) or stochastic (Poisson with rate_per_day). Every fault
// kind draws its arrival times, durations and targets from its own named
// stream ("faults/<kind>"), so adding a fault of another kind, or changing a
// model parameter, leaves this kind's timeline unchanged for the same seed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/time.h"

namespace pipesim::sim {

struct FaultSpec {
  std::string kind;
  std::optional<Time> at;   // scheduled once at this time
  double rate_per_day = 0;  // otherwise Poisson arrivals at this rate
  Time duration{};          // fixed duration of the fault's window (0: instantaneous)
  Time duration_mean{};     // if > 0: exponential duration with this mean instead
  std::string target;       // empty: drawn uniformly from the kind's candidates
  nlohmann::json params = nlohmann::json::object();  // kind-specific keys
};

struct FaultOccurrence {
  Time at;
  std::size_t spec = 0;  // index into the spec list
  Time duration{};
  std::string target;
};

// Candidate targets of a fault kind (e.g. "worker-0", "worker-1"); may be empty
// for kinds that act on the whole pipeline.
using TargetLister = std::function<std::vector<std::string>(const std::string& kind)>;

// Occurrences with at < horizon, sorted by (time, spec index, draw order).
std::vector<FaultOccurrence> build_fault_schedule(const std::vector<FaultSpec>& specs,
                                                  std::uint64_t master_seed, Time horizon,
                                                  const TargetLister& targets);

// The stream name of the spec at `index`: "faults/<kind>" for the first spec
// of its kind, "faults/<kind>/<n>" for the n-th further one.
std::string fault_stream_name(const std::vector<FaultSpec>& specs, std::size_t index);

}  // namespace pipesim::sim
