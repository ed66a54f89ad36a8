#include <unistd.h>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "cli/config_input.h"
#include "cli/interrupts.h"
#include "cli/result_output.h"
#include "cli/shell_quote.h"
#include "cli/simulate.h"
#include "models/pipeline/estimates.h"
#include "models/pipeline/fault_timeline.h"
#include "models/pipeline/headline.h"
#include "models/pipeline/lint.h"
#include "models/pipeline/metrics.h"
#include "models/pipeline/scenario.h"
#include "sim/config/duration.h"
#include "sim/engine/interrupt.h"
#include "sim/engine/invariant.h"
#include "sim/experiment/importance.h"
#include "sim/experiment/monte_carlo.h"
#include "sim/report/summary.h"

namespace pipesim::cli {
namespace {

struct RunArgs {
  std::string config;
  std::int64_t seed = -1;
  std::int64_t seeds = 0;
  unsigned threads = 0;
  std::string format = "table";
  bool per_seed = false;
  std::vector<std::string> overrides;
  pipeline::PropertiesFiles properties;
  std::string out;
  std::string importance;  // KIND=FACTOR[,...]: importance sampling of those faults
};

std::string quote_args(const RunArgs& a) {
  std::string s = a.config.empty() ? "" : " " + shell_word(a.config);
  for (const auto& o : a.overrides) s += " --set " + shell_quote(o);
  if (!a.properties.worker.empty()) s += " --worker-properties " + shell_word(a.properties.worker);
  if (!a.properties.producer.empty())
    s += " --producer-properties " + shell_word(a.properties.producer);
  if (!a.properties.consumer.empty())
    s += " --consumer-properties " + shell_word(a.properties.consumer);
  if (!a.importance.empty()) s += " --importance " + shell_word(a.importance);
  return s;
}

// The seeds where duplicates and losses were largest, with the explain
// command that tells each one's story.
std::vector<sim::ExtremeSeed> extreme_seeds(const std::vector<sim::Metrics>& runs,
                                            std::uint64_t first_seed, const RunArgs& a) {
  std::vector<sim::ExtremeSeed> out;
  for (const char* metric : {"duplicate_rows", "lost_records"}) {
    std::optional<std::size_t> best;
    double value = 0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      for (const auto& m : runs[i]) {
        if (m.name == metric && m.value > value) {  // the first seed of the largest value
          value = m.value;
          best = i;
        }
      }
    }
    if (!best) continue;
    const std::uint64_t seed = first_seed + *best;
    out.push_back({metric, seed, value,
                   "pipesim explain" + quote_args(a) + " --seed " + std::to_string(seed)});
  }
  return out;
}

// The answers of docs/model.md §1 first: duplicates and losses per day by entry point
// and cause, how often a disruption stops the connector, the DLQ split.
void add_headline(sim::RunReport& report, const std::vector<sim::Metrics>& runs,
                  const pipeline::Config& config, const std::vector<double>* weights) {
  const double days = config.run.duration.as_seconds() / 86400.0;
  const auto add = [&](const std::string& label, const std::string& name) {
    const auto e = pipeline::estimate(runs, name, days, 0.95, weights);
    if (!e) return;
    std::string note;
    if (e->method == "proportion") {
      if (e->trials == 0) return;
      note = sim::format_number(e->successes) + " of " +
             sim::counted(e->trials,
                          name.find("_probability") != std::string::npos ? "run" : "episode") +
             (weights ? " (weighted)" : "");
    }
    report.headline.push_back(
        {label, name, e->value, e->lo, e->hi, note, pipeline::no_interval(*e, runs.size())});
  };
  // A window shorter than whole days reports its figures per window, named so.
  for (const auto& row : pipeline::headline_rows_for(days, config.run.start.as_seconds() / 3600.0))
    add(row.label, row.estimate);
  const auto inserts = pipeline::estimate(runs, "inserts", days, 0.95, weights);
  const double inserts_per_s =
      inserts ? inserts->value / std::max(1.0, config.run.duration.as_seconds()) : 0.0;
  std::string open;
  for (const auto& e : pipeline::open_entry_points(config, inserts_per_s))
    open += (open.empty() ? "" : ", ") + e;
  report.headline_notes.push_back(
      "open in this config (duplicate entry points, loss causes, stops): " +
      (open.empty() ? "none" : open) + "  (details: pipesim lint)");
}

int execute(const RunArgs& a) {
  pipeline::Config config;
  sim::Tilt tilt;
  try {
    config = load_config_input(a.config, a.overrides, a.properties);
    if (!a.importance.empty())
      tilt = sim::parse_tilt(a.importance, pipeline::poisson_fault_kinds(config));
  } catch (const sim::ConfigError& e) {
    std::cerr << "pipesim: " << e.what() << "\n";
    return 2;
  }
  // Before simulating, not after.
  if (!result_out_usable(a.out, config_input_files(a.config, a.properties))) return 2;
  if (a.per_seed && a.format == "table") {
    std::cerr
        << "pipesim: --per-seed needs --format json or csv (a table shows the summary only)\n";
    return 2;
  }
  sim::MonteCarloOptions mc;
  mc.first_seed = static_cast<std::uint64_t>(a.seed >= 0 ? a.seed : config.run.first_seed);
  mc.seeds =
      static_cast<std::uint64_t>(a.seed >= 0 ? 1 : (a.seeds > 0 ? a.seeds : config.run.seeds));
  mc.threads = a.threads > 0 ? a.threads : std::max(1u, std::thread::hardware_concurrency());
  const auto progress = seeds_progress("pipesim run", mc.seeds);
  if (progress) mc.seed_done = *progress;

  // With --importance the runs draw the tilted kinds' faults more often and
  // each seed is weighted by its timeline's likelihood ratio (fault_timeline.h).
  const pipeline::Config simulated = pipeline::tilted_config(config, tilt);
  std::vector<sim::Metrics> runs;
  try {
    runs = sim::run_monte_carlo(
        mc, [&simulated](std::uint64_t seed) { return pipeline::run_scenario(simulated, seed); });
  } catch (const sim::Interrupted& e) {
    return interrupted(e.signal());
  } catch (const sim::RunFailure& e) {
    std::cerr << "pipesim: internal error in seed " << e.seed() << ": " << e.what()
              << "\nreproduce with: pipesim run" << quote_args(a) << " --seed " << e.seed() << "\n";
    return 3;
  }

  sim::RunReport report;
  report.version = PIPESIM_VERSION;
  report.config_digest = pipeline::config_digest(config);
  report.first_seed = mc.first_seed;
  report.seeds = mc.seeds;
  report.scenario_line =
      sim::format_duration(config.run.duration) + " simulated" +
      (config.run.start.us > 0 ? " from " + sim::format_duration(config.run.start) + " of the day"
                               : "") +
      " + " + sim::format_duration(config.run.drain) + " drain";
  if (!tilt.empty()) {
    report.importance = sim::format_tilt(tilt);
    for (std::uint64_t i = 0; i < mc.seeds; ++i)
      report.weights.push_back(pipeline::importance_weight(config, tilt, mc.first_seed + i));
  }
  const std::vector<double>* weights = tilt.empty() ? nullptr : &report.weights;
  report.summaries = sim::summarize_runs(runs, 0.95, weights);
  if (a.per_seed) report.runs = runs;
  report.not_modelled = pipeline::metrics_not_modelled();
  for (const auto& f : config.faults) {
    const auto& nm = pipeline::faults_not_modelled();
    if (std::find(nm.begin(), nm.end(), f.kind) != nm.end()) {
      report.not_modelled.push_back("faults_fired." + f.kind);
      report.notes.push_back("fault " + f.kind +
                             " fires (counted) but is not modelled yet: it has no effect");
    }
  }
  // The ignored keys go to stderr (and into the JSON and CSV), not into the table.
  for (const auto& path : config.ignored) {
    std::cerr << "pipesim: ignored (a real property pipesim does not model): " << path << "\n";
  }
  report.duration = sim::format_duration(config.run.duration);
  report.drain = sim::format_duration(config.run.drain);
  report.config = pipeline::effective_config(config);
  report.ignored = config.ignored;
  report.extreme_seeds = extreme_seeds(runs, mc.first_seed, a);
  add_headline(report, runs, config, weights);

  std::string text;
  if (a.format == "json") {
    text = sim::report_json(report).dump(2) + "\n";
  } else if (a.format == "csv") {
    text = sim::report_csv(report);
  } else {
    text = sim::report_table(report);
  }
  return emit_result(text, a.out);
}

}  // namespace

Command register_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "simulate the pipeline over seeds and print estimates");
  cmd->add_option("config", args->config, "config JSON (default: the production baseline)");
  // The ranges of run.first_seed and run.seeds (CLI11's NonNegativeNumber and
  // PositiveNumber printed DBL_MAX in full as the upper bound).
  // UINT, as explain's, trace's and shrink's --seed (-1 only says none was given).
  auto* seed = cmd->add_option("--seed", args->seed, "run this one seed")
                   ->type_name("UINT")
                   ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{9007199254740991}));
  cmd->add_option("--seeds", args->seeds, "number of seeds (default: run.seeds)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000000}))
      ->excludes(seed);
  cmd->add_option("--threads", args->threads,
                  "worker threads (default: one per core; results do not depend on it)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--format", args->format, "table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_flag("--per-seed", args->per_seed, "also report every seed's metrics");
  cmd->add_option("--set", args->overrides, "override: section.key=value (repeatable)");
  add_properties_options(cmd, args->properties);
  cmd->add_option("--out", args->out, "write the result to this file (atomically)");
  cmd->add_option(
      "--importance", args->importance,
      "KIND=FACTOR[,...]: draw those Poisson faults FACTOR x as often and weight each seed by its "
      "likelihood ratio (importance sampling of rare faults)");
  return [args] { return execute(*args); };
}

}  // namespace pipesim::cli
