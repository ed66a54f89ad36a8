// Hazards a config leaves open, found before any long run (`pipesim lint`).
// One function, hazards(), decides them for both `lint` and `run`'s headline:
// each names the duplicate entry point, loss cause or stop it opens, the
// settings that close it, and the metric that measures it; lint adds an
// estimate from a quick simulation and the effect of closing it from a
// paired one (lint_effects.h).
#pragma once

#include <string>
#include <vector>

#include "models/pipeline/config.h"

namespace pipesim::pipeline {

struct Finding {
  std::string id;                      // stable, e.g. "exactly_once_without_tolerance"
  std::string opens;                   // entry point, loss cause or stop, e.g. "task_restart_replay"
  std::string message;                 // what and why
  std::vector<std::string> closed_by;  // --set assignments that close it (empty: none alone does)
  std::string closes_note;             // what closing it costs or leaves, may be empty
  std::string metric;                  // the metric that measures it ("" when none does)
  std::string estimate;                // quantified, may be empty
  std::string effect;                  // closing it, by a paired simulation (lint_effects.h)
};

// What a quick simulation says about the config (filled by quick_profile()).
struct QuickProfile {
  double seeds = 0;
  double crashes = 0;
  double crashes_state_mismatch = 0;
  double crashes_error_state = 0;  // BEFORE_PROCESSING ERROR: killed during an insert
  double duplicate_rows_per_crash = 0;
  double inserts_per_s = 0;  // table-wide, over the quick run
};

// Runs the config for a short while with worker crashes and no other fault.
QuickProfile quick_profile(const Config& config, int seeds);

// Every hazard of the config at this table-wide insert rate (the dedup
// window's turnover depends on it), in a fixed order: the producer's paths
// first, then the other duplicate entry points, loss causes, stops.
std::vector<Finding> hazards(const Config& config, double inserts_per_s);

// hazards() at the quick profile's rate, with its estimates.
std::vector<Finding> lint(const Config& config, const QuickProfile& profile);

// What hazards() leaves open, each once, the producer's paths grouped:
// "producer_retry (epoch_bump_resend, application_resend)", "task_restart_replay",
// "kafka_truncated". `run` prints this line; lint prints the findings behind it.
std::vector<std::string> open_entry_points(const Config& config, double inserts_per_s);

}  // namespace pipesim::pipeline
