// Writers of a Monte Carlo result: a table for people, JSON and CSV for
// tools (docs/model.md §9: the JSON shape and metric names are kept stable).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/experiment/metrics.h"
#include "sim/experiment/statistics.h"

namespace pipesim::sim {

// A headline answer shown before the metric table: an estimate with its interval.
struct HeadlineRow {
  std::string label;  // e.g. "duplicate rows per day"
  std::string name;   // the estimate's name, e.g. "duplicate_rows_per_day" (JSON key)
  double value = 0;
  double lo = 0;
  double hi = 0;
  std::string note;   // e.g. "3 of 17 crashes"
  // Why the sample gives no interval (one seed, a ratio of too few
  // episodes): the table shows none; "" when it gives one.
  std::string no_interval;
};

// The seed where a metric was largest, and the command that tells its story.
struct ExtremeSeed {
  std::string metric;  // e.g. "duplicate_rows"
  std::uint64_t seed = 0;
  double value = 0;
  std::string explain;  // "pipesim explain CONFIG --seed S ..."
};

struct RunReport {
  std::string version;
  std::string config_digest;
  std::uint64_t first_seed = 1;
  std::uint64_t seeds = 0;
  std::string scenario_line;  // e.g. "1d simulated + 30m drain"
  std::vector<MetricSummary> summaries;
  std::vector<Metrics> runs;  // per seed, in seed order (empty unless --per-seed)
  std::vector<std::string> not_modelled;  // metric names reported as 0 because not modelled
  std::vector<std::string> notes;         // shown under the table
  std::vector<HeadlineRow> headline;      // shown first; "estimates" in JSON
  std::vector<std::string> headline_notes;  // shown under the headline
  // Self-description for tools: what ran (JSON and CSV carry these).
  std::string duration;  // run.duration, e.g. "1d"
  std::string drain;     // run.drain
  nlohmann::ordered_json config = nlohmann::ordered_json::object();  // the effective config, every default
  std::vector<std::string> ignored;  // real keys given but not modelled
  std::vector<ExtremeSeed> extreme_seeds;
  // Importance sampling (run --importance): the tilt, and one weight per seed
  // (the likelihood ratio); empty tilt: plain Monte Carlo.
  std::string importance;
  std::vector<double> weights;
};

// {"pipesim_version", "config_digest", "seeds": {"first", "count"}, "metrics": {...},
//  "estimates": {...}, "duration", "drain", "config": {...}, "ignored": [...],
//  "extreme_seeds": [...], ["importance": {"tilt", "effective_sample_size", "weight_mean",
//  "weight_max"}], ["runs"]} (with importance, each run carries its "weight")
// Dotted metric names nest: duplicate_rows_by_entry.producer_retry ->
// "duplicate_rows_by_entry": {"producer_retry": {...}}.
nlohmann::ordered_json report_json(const RunReport& report);
// The "metrics" object of report_json: dotted names nest, each leaf is
// {"mean", "stddev", "ci95": [lo, hi], "p50", "p95", "p99"}.
nlohmann::ordered_json metrics_json(const std::vector<MetricSummary>& summaries);
// One run's metrics with the same nesting, plain numbers as leaves.
nlohmann::ordered_json metric_values_json(const Metrics& metrics);
std::string report_table(const RunReport& report);
// One line per metric: metric,mean,stddev,ci95_lo,ci95_hi,p50,p95,p99; then
// the estimates as "estimates.NAME" (value in mean, its interval), the
// effective config as "config.SECTION.KEY" (the value in mean) and the
// ignored keys as "ignored.PATH". With runs: one line per seed instead:
// seed,<metric>,<metric>,...
std::string report_csv(const RunReport& report);

// Shortest round-trip rendering of a number for tables and CSV.
std::string format_number(double v);
// "1 seed", "3 seeds": a count with its noun, plural when it is not 1.
std::string counted(double n, const std::string& noun);

}  // namespace pipesim::sim
