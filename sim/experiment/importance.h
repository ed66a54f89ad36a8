// Importance sampling of rare faults (docs/model.md §6). Every Poisson fault
// spec draws its arrivals on [0, horizon) from its own named stream, so a run
// can draw them at a tilted rate f·λ instead of λ and be reweighted by the
// likelihood ratio of its realised timeline under the real rates against the
// tilted ones. For a homogeneous Poisson process on [0, T) with n arrivals the
// density of the arrival set is λ^n e^{-λT}, so the ratio for one tilted spec is
//     (λ / fλ)^n · e^{-(λ - fλ)T} = f^{-n} · e^{(f - 1)λT},
// and a run's weight is the product over the tilted specs. Durations and
// targets are drawn from the same distributions under both rates, so they
// cancel. E[w] = 1 under the tilted rates, and mean(w·x) over seeds is an
// unbiased estimate of E[x] under the real ones (Owen, "Monte Carlo theory,
// methods and examples", 2013, ch. 9; Rubinstein & Kroese, "Simulation and the
// Monte Carlo Method", 3rd ed., 2017, §5.7).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/engine/fault_schedule.h"
#include "sim/engine/time.h"

namespace pipesim::sim {

// Fault kind -> factor its Poisson rates are multiplied by while drawing.
struct Tilt {
  std::map<std::string, double> factors;
  [[nodiscard]] bool empty() const { return factors.empty(); }
};

// Parses "KIND=FACTOR[,KIND=FACTOR...]"; `kinds` are the fault kinds that have
// a Poisson spec in the config (a tilt of anything else is an error: there is
// nothing to tilt). Throws ConfigError naming the flag's part that is wrong.
Tilt parse_tilt(const std::string& text, const std::vector<std::string>& kinds);

// "worker_crash=10,broker_crash=5" (the form parse_tilt reads; empty: none).
std::string format_tilt(const Tilt& tilt);

// The specs with the tilted kinds' Poisson rates multiplied by their factors
// (scheduled faults are left alone: they are not random).
std::vector<FaultSpec> tilt_specs(std::vector<FaultSpec> specs, const Tilt& tilt);

// The weight of one run: the likelihood ratio of `schedule` (drawn from
// tilt_specs(real, tilt) over [0, horizon)) under the real rates against the
// tilted ones.
double likelihood_ratio(const std::vector<FaultSpec>& real, const Tilt& tilt,
                        const std::vector<FaultOccurrence>& schedule, Time horizon);

// Kish's effective sample size (Σw)² / Σw²: how many plain runs the weighted
// ones are worth for a mean.
double effective_sample_size(const std::vector<double>& weights);

}  // namespace pipesim::sim
