// The story of one seed as `pipesim explain` tells it, for explain's table and
// for the worst seeds of `pipesim report`: the time-ordered story lines, the
// outcome line, and the groups of records that ended duplicated, lost or pending.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/pipeline/config.h"
#include "models/pipeline/scenario.h"
#include "sim/engine/trace.h"

namespace pipesim::cli {

struct ExplainStory {
  std::vector<std::string> lines;  // "HH:MM:SS.mmm  text", or the no-fault sentence
  std::string outcome;             // "outcome: N records produced, ..."
  std::vector<std::string> groups;
  std::size_t hidden_groups = 0;  // beyond max_groups
};

// Tells the story of a run already simulated with `trace`.
ExplainStory tell_story(const sim::Trace& trace, const pipeline::TracedRun& run,
                        std::size_t max_groups);

// Simulates `seed` of `config` and tells its story (exceptions as run_scenario_traced's).
ExplainStory explain_seed(const pipeline::Config& config, std::uint64_t seed,
                          std::size_t max_groups);

}  // namespace pipesim::cli
