// Hazards a config leaves open, found before any long run (`pipesim lint`).
// Each finding names the duplicate entry point or loss cause it opens and a
// short estimate, from the config alone or from a quick simulation.
#pragma once

#include <string>
#include <vector>

#include "models/pipeline/config.h"

namespace pipesim::pipeline {

struct Finding {
  std::string id;           // stable, e.g. "exactly_once_without_tolerance"
  std::string opens;        // entry point or loss cause, e.g. "state_mismatch_stop"
  std::string message;      // what and why
  std::string estimate;     // quantified, may be empty
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

std::vector<Finding> lint(const Config& config, const QuickProfile& profile);

// A way for duplicates into ClickHouse that a config leaves open: the one
// function both `lint` and `run`'s headline ask.
struct OpenPath {
  std::string entry;      // duplicate entry point (SPEC §1), e.g. "producer_retry"
  std::string path;       // for producer_retry: its path (producer_retry_by_path.*); else empty
  std::string why;        // how the duplicates come
  std::string closed_by;  // the setting that closes it (and what that costs)
};
std::vector<OpenPath> open_paths(const Config& config, double inserts_per_s);

// Duplicate entry points (SPEC §1) this config leaves open, given its insert
// rate, each once, with its open producer paths: "producer_retry
// (epoch_bump_resend, application_resend)". From open_paths().
std::vector<std::string> open_entry_points(const Config& config, double inserts_per_s);

}  // namespace pipesim::pipeline
