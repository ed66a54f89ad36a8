// A run's fault timeline from its config (docs/model.md §5): which targets
// each fault kind can hit, the seeded schedule the scenario injects, and, for
// importance sampling (sim/experiment/importance.h), the tilted config a run
// draws its faults from and the weight of a seed's realised timeline.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/pipeline/config.h"
#include "models/producer/producer.h"
#include "sim/engine/fault_schedule.h"
#include "sim/experiment/importance.h"

namespace pipesim::pipeline {

// The candidate targets of a fault kind ("worker-0".."worker-N", ...); empty
// for kinds that act on the whole pipeline.
std::vector<std::string> fault_targets(const Config& config, const std::string& kind);

// The index a fault's target names: 3 for "replica-3" (0 when it names none).
int fault_target_index(const std::string& target);

// The partitions a fault's "partitions" parameter names ("all" when absent).
std::vector<int> fault_partitions(const nlohmann::json& params, int partitions);

// A response_loss fault as the producer takes it: a window [from, until)
// with the spec's probability, connection, tcp_rto_min and tcp_retries2.
producer::ResponseLoss response_loss_window(const sim::FaultSpec& spec, sim::Time from, sim::Time until);

// The faults of one seed, over [0, run.duration), in firing order.
std::vector<sim::FaultOccurrence> fault_schedule(const Config& config, std::uint64_t seed);

// The fault kinds with a Poisson spec (what --importance can tilt), in the
// order they first appear in `faults`.
std::vector<std::string> poisson_fault_kinds(const Config& config);

// The config a tilted run simulates: the tilted kinds' rates multiplied.
Config tilted_config(const Config& real, const sim::Tilt& tilt);

// The weight of `seed`'s run of tilted_config(real, tilt): its timeline's
// likelihood ratio under the real rates against the tilted ones.
double importance_weight(const Config& real, const sim::Tilt& tilt, std::uint64_t seed);

}  // namespace pipesim::pipeline
