// `pipesim sweep`: the cartesian product of listed values for config keys,
// each point over the same seeds, written to an output directory that
// survives kill -9 (--resume) and splits into shards (--shard K/N, then
// `pipesim merge`). See sim/report/sweep_directory.h for the files.
#include <unistd.h>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <thread>
#include <tuple>
#include <utility>

#include "cli/commands.h"
#include "cli/config_input.h"
#include "cli/interrupts.h"
#include "cli/shell_quote.h"
#include "models/pipeline/fault_timeline.h"
#include "models/pipeline/metrics.h"
#include "models/pipeline/scenario.h"
#include "sim/config/options.h"
#include "sim/engine/interrupt.h"
#include "sim/experiment/importance.h"
#include "sim/experiment/statistics.h"
#include "sim/experiment/sweep_grid.h"
#include "sim/experiment/sweep_runner.h"
#include "sim/report/progress_line.h"
#include "sim/report/sweep_directory.h"
#include "sim/report/sweep_output.h"

namespace pipesim::cli {
namespace {

using OrderedJson = nlohmann::ordered_json;

struct SweepArgs {
  std::string config;
  std::string grid;
  std::string out;
  std::int64_t seeds = 0;
  unsigned threads = 0;
  bool per_seed = false;
  std::vector<std::string> overrides;
  pipeline::PropertiesFiles properties;
  std::string shard;
  bool resume = false;
  bool dry_run = false;
  std::string importance;  // KIND=FACTOR[,...] (run --importance), for every point
};

// A JSON file with its keys in file order (the grid's order numbers the
// points), and the same as a plain config, from one read of the file.
std::pair<OrderedJson, nlohmann::json> read_ordered_json(const std::string& path) {
  const std::string text = pipeline::read_config_text(path);
  // The readable errors (file, line, column), and a Connect REST body on its own as the connector
  // section.
  nlohmann::json plain = pipeline::connect_rest_document(pipeline::parse_config_text(text, path));
  return {OrderedJson::parse(text), std::move(plain)};
}

std::string assignment(const std::string& key, const OrderedJson& value) {
  return key + "=" + value.dump();
}

std::string describe_point(std::size_t p,
                           const std::vector<std::pair<std::string, OrderedJson>>& point) {
  std::string s = "sweep point " + std::to_string(p) + " (";
  for (std::size_t i = 0; i < point.size(); ++i)
    s += (i ? ", " : "") + assignment(point[i].first, point[i].second);
  return s + ")";
}

// This sweep's command line, to finish it with --resume after an interrupt.
std::string sweep_command(const SweepArgs& a) {
  std::string c = "pipesim sweep";
  if (!a.config.empty()) c += " " + shell_quote(a.config);
  if (!a.grid.empty()) c += " --grid " + shell_quote(a.grid);
  for (const auto& o : a.overrides) c += " --set " + shell_quote(o);
  if (!a.properties.worker.empty()) c += " --worker-properties " + shell_quote(a.properties.worker);
  if (!a.properties.producer.empty())
    c += " --producer-properties " + shell_quote(a.properties.producer);
  if (!a.properties.consumer.empty())
    c += " --consumer-properties " + shell_quote(a.properties.consumer);
  if (a.seeds > 0) c += " --seeds " + std::to_string(a.seeds);
  if (a.per_seed) c += " --per-seed";
  if (!a.shard.empty()) c += " --shard " + shell_quote(a.shard);
  if (!a.importance.empty()) c += " --importance " + shell_quote(a.importance);
  return c + " --out " + shell_quote(a.out);
}

struct Plan {
  pipeline::Config base;
  sim::SweepGrid grid;
  sim::Shard shard;
  std::uint64_t first_seed = 1;
  std::uint64_t seeds = 1;
  std::vector<pipeline::Config> configs;  // of the shard's points, in order
  OrderedJson manifest;
  sim::Tilt tilt;  // --importance: every point's faults drawn tilted, its seeds weighted
};

// Reads config, grid and overrides and checks every point; ConfigError otherwise.
Plan make_plan(const SweepArgs& a) {
  OrderedJson ordered = OrderedJson::object();
  nlohmann::json raw = nlohmann::json::object();
  if (!a.config.empty()) {
    try {
      std::tie(ordered, raw) = read_ordered_json(a.config);
      if (raw.is_null())
        sim::throw_config_error("(top level)", "expected an object with sections, found null");
    } catch (const sim::ConfigError& e) {
      throw sim::ConfigError(name_origins(e.what(), a.config, {}));
    }
  }
  reject_sweep_manifest(raw, a.config);
  OrderedJson grid_json;
  std::string where;
  if (!a.grid.empty()) {
    grid_json = read_ordered_json(a.grid).first;
    where = a.grid;
  } else if (raw.is_object() && raw.contains("sweep")) {
    grid_json = ordered["sweep"];
    where = "sweep";
  } else {
    throw sim::ConfigError(
        "no grid: give --grid GRID.json or a \"sweep\" section in the config, e.g. "
        "{\"connect.max.poll.records\": [200, 500, 1000]}");
  }
  if (raw.is_object()) raw.erase("sweep");
  std::vector<std::string> ignored;
  pipeline::Config base;
  try {
    ignored = pipeline::apply_properties_files(raw, a.properties);
    for (const auto& o : a.overrides) pipeline::apply_override(raw, o);
    base = pipeline::load_config(raw);
  } catch (const sim::ConfigError& e) {
    throw sim::ConfigError(name_origins(e.what(), a.config, a.overrides));
  }
  Plan plan{std::move(base), sim::SweepGrid::parse(grid_json, where), {}, 1, 1, {}, {}, {}};
  if (!a.importance.empty())
    plan.tilt = sim::parse_tilt(a.importance, pipeline::poisson_fault_kinds(plan.base));
  plan.base.ignored.insert(plan.base.ignored.end(), ignored.begin(), ignored.end());
  for (const auto& [key, values] : grid_json.items()) {
    if (key == "run.seeds" || key == "run.first_seed") {
      throw sim::ConfigError("config error at " + where + "[\"" + key +
                             "\"]: every point runs the same seeds; set them with --seeds or run." +
                             key.substr(4) + " in the config");
    }
  }
  plan.shard = sim::parse_shard(a.shard.empty() ? "1/1" : a.shard);
  plan.first_seed = static_cast<std::uint64_t>(plan.base.run.first_seed);
  plan.seeds = static_cast<std::uint64_t>(a.seeds > 0 ? a.seeds : plan.base.run.seeds);

  // Every point is checked, also those of other shards: a bad grid fails on
  // every machine before any of them runs.
  const std::vector<std::size_t> mine = sim::shard_points(plan.grid.point_count(), plan.shard);
  std::size_t next_mine = 0;
  for (std::size_t p = 0; p < plan.grid.point_count(); ++p) {
    const auto point = plan.grid.point(p);
    nlohmann::json point_raw = raw;
    try {
      for (const auto& [key, value] : point)
        pipeline::apply_override(point_raw, assignment(key, value));
      pipeline::Config c = pipeline::load_config(point_raw);
      if (next_mine < mine.size() && mine[next_mine] == p) {
        plan.configs.push_back(std::move(c));
        ++next_mine;
      }
    } catch (const sim::ConfigError& e) {
      throw sim::ConfigError(describe_point(p, point) + ": " + e.what());
    }
  }

  OrderedJson& m = plan.manifest;
  m["pipesim_version"] = PIPESIM_VERSION;
  m["base_config_digest"] = pipeline::config_digest(plan.base);
  m["grid"] = plan.grid.to_json();
  m["points"] = plan.grid.point_count();
  m["seeds"] = {{"first", plan.first_seed}, {"count", plan.seeds}};
  m["per_seed"] = a.per_seed;
  m["metrics_not_modelled"] = pipeline::metrics_not_modelled();
  m["base_config"] = pipeline::effective_config(plan.base);
  if (!plan.tilt.empty())
    m["importance"] = sim::format_tilt(plan.tilt);  // a resume must weight alike
  if (plan.shard.count > 1) m["shard"] = {{"index", plan.shard.index}, {"count", plan.shard.count}};
  return plan;
}

OrderedJson params_json(const sim::SweepGrid& grid, std::size_t p) {
  OrderedJson params = OrderedJson::object();
  for (const auto& [key, value] : grid.point(p)) params[key] = value;
  return params;
}

int execute(const SweepArgs& a) {
  Plan plan;
  try {
    plan = make_plan(a);
  } catch (const sim::ConfigError& e) {
    std::cerr << "pipesim: " << e.what() << "\n";
    return 2;
  }
  const std::vector<std::size_t> mine = sim::shard_points(plan.grid.point_count(), plan.shard);
  if (a.dry_run) {
    for (std::size_t i = 0; i < mine.size(); ++i) {
      OrderedJson line;
      line["point"] = mine[i];
      line["params"] = params_json(plan.grid, mine[i]);
      line["config_digest"] = pipeline::config_digest(plan.configs[i]);
      std::cout << line.dump() << "\n";
    }
    std::cerr << "pipesim sweep: " << mine.size() << " of " << plan.grid.point_count()
              << " points x " << plan.seeds << " seeds = " << mine.size() * plan.seeds
              << " runs (dry run: nothing ran)\n";
    return 0;
  }
  if (a.out.empty()) {
    std::cerr << "pipesim: sweep needs --out DIR (the directory for sweep.json, points.jsonl, "
                 "summary.csv)\n";
    return 2;
  }

  std::unique_ptr<sim::SweepDirectory> dir;
  try {
    dir = std::make_unique<sim::SweepDirectory>(a.out, plan.manifest, a.resume);
  } catch (const sim::SweepFileError& e) {
    std::cerr << "pipesim: " << e.what() << "\n";
    return 2;
  }
  const std::size_t already = dir->done();
  if (a.resume && already > 0) {
    std::cerr << "pipesim sweep: resuming " << a.out << ": " << already << " of " << mine.size()
              << " points were finished"
              << (dir->cut_unfinished() ? " (an unfinished write was cut off)" : "") << "\n";
  }

  const auto start = std::chrono::steady_clock::now();
  const std::size_t todo = mine.size() - already;
  // The ETA weighs each run by its point's cost: simulated seconds x
  // (records/s)^1.5, the growth of CPU time with throughput that bench/
  // measures (10x the records, ~33x the time).
  std::vector<double> cost(todo);
  double total_cost = 0;
  for (std::size_t p = 0; p < todo; ++p) {
    const pipeline::Config& c = plan.configs[already + p];
    const double rate = std::max(1.0, static_cast<double>(c.workload.records_per_day) / 86400.0);
    cost[p] = (c.run.duration + c.run.drain).as_seconds() * std::pow(rate, 1.5);
    total_cost += cost[p] * static_cast<double>(plan.seeds);
  }
  std::unique_ptr<sim::ProgressLine> progress;
  if (sim::progress_wanted() && todo > 0)
    progress = std::make_unique<sim::ProgressLine>("pipesim sweep", total_cost);
  std::uint64_t points_done = 0;
  std::uint64_t runs_done = 0;
  double cost_done = 0;
  const auto show = [&] {
    if (!progress) return;
    progress->update(std::to_string(points_done) + "/" + std::to_string(todo) + " points  " +
                         std::to_string(runs_done) + "/" + std::to_string(todo * plan.seeds) +
                         " runs",
                     points_done == todo ? total_cost : cost_done);
  };

  sim::SweepRunOptions options;
  options.first_seed = plan.first_seed;
  options.seeds = plan.seeds;
  options.threads = a.threads > 0 ? a.threads : std::max(1u, std::thread::hardware_concurrency());
  try {
    sim::run_sweep(
        todo, options,
        [&](std::size_t position, std::uint64_t seed) {
          return pipeline::run_scenario(
              pipeline::tilted_config(plan.configs[already + position], plan.tilt), seed);
        },
        [&](std::size_t position, const std::vector<sim::Metrics>& runs) {
          const std::size_t i = already + position;
          const OrderedJson params = params_json(plan.grid, mine[i]);
          const std::string digest = pipeline::config_digest(plan.configs[i]);
          // With --importance each seed is weighted by its timeline's likelihood ratio.
          std::vector<double> weights;
          for (std::uint64_t s = 0; s < plan.seeds && !plan.tilt.empty(); ++s)
            weights.push_back(
                pipeline::importance_weight(plan.configs[i], plan.tilt, plan.first_seed + s));
          const std::vector<double>* weighted = plan.tilt.empty() ? nullptr : &weights;
          dir->append(sim::point_line(mine[i], params, digest, plan.first_seed, plan.seeds,
                                      sim::summarize_runs(runs, 0.95, weighted)),
                      a.per_seed ? sim::seed_lines(mine[i], params, plan.first_seed, runs, weighted)
                                 : std::string());
          ++points_done;
          show();
        },
        [&](std::size_t position) {
          ++runs_done;
          cost_done += cost[position];
          show();
        });
    dir->finish();
  } catch (const sim::Interrupted& e) {
    // Finished points are in points.jsonl; --resume runs only the rest.
    return interrupted(e.signal(), std::to_string(already + points_done) + " of " +
                                       std::to_string(mine.size()) + " points are in " + a.out +
                                       "; finish with: " + sweep_command(a) + " --resume");
  } catch (const sim::SweepRunFailure& e) {
    sim::end_progress_line();
    const std::size_t p = mine[already + e.position()];
    std::string command = "pipesim run";
    if (!a.config.empty()) command += " " + shell_quote(a.config);
    for (const auto& o : a.overrides) command += " --set " + shell_quote(o);
    for (const auto& [key, value] : plan.grid.point(p))
      command += " --set " + shell_quote(assignment(key, value));
    std::cerr << "pipesim: internal error in sweep point " << p << ", seed " << e.seed() << ": "
              << e.what() << "\nreproduce with: " << command << " --seed " << e.seed() << "\n";
    return 3;
  } catch (const sim::SweepFileError& e) {
    sim::end_progress_line();
    std::cerr << "pipesim: " << e.what() << "\n";
    return 2;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  char took[32];
  std::snprintf(took, sizeof took, "%.1f s", seconds);
  std::cerr << "pipesim sweep: " << mine.size() << " points x " << plan.seeds << " seeds"
            << (plan.shard.count > 1 ? " (shard " + a.shard + " of " +
                                           std::to_string(plan.grid.point_count()) + " points)"
                                     : "")
            << " in " << a.out << " (" << todo << " points run now, " << took << ")\n";
  return 0;
}

}  // namespace

Command register_sweep(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "run every combination of listed config values over seeds (resumable, shardable)");
  cmd->add_option("config", args->config,
                  "config JSON, may hold a \"sweep\" grid (default: the production baseline)");
  cmd->add_option("--grid", args->grid,
                  "grid JSON: {\"section.key\": [values...], ...} (replaces a \"sweep\" section)");
  cmd->add_option(
      "--out", args->out,
      "REQUIRED: output directory: sweep.json, points.jsonl, [seeds.jsonl], summary.csv");
  cmd->add_option("--seeds", args->seeds, "seeds per point (default: run.seeds)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000000}));
  cmd->add_option("--threads", args->threads,
                  "worker threads (default: one per core; results do not depend on it)")
      ->check(CLI::Range(1, 1024));
  cmd->add_flag("--per-seed", args->per_seed,
                "also write seeds.jsonl: one line per point and seed");
  cmd->add_option("--set", args->overrides,
                  "override of the base config: section.key=value (repeatable)");
  add_properties_options(cmd, args->properties);
  cmd->add_option(
      "--importance", args->importance,
      "KIND=FACTOR[,...]: importance sampling of those Poisson faults at every point (as run "
      "--importance)");
  cmd->add_option("--shard", args->shard,
                  "run only shard K of N (points p with p mod N = K-1); join with `pipesim merge`");
  cmd->add_flag("--resume", args->resume,
                "finish the sweep in --out (after a kill); starts it if --out is empty");
  cmd->add_flag("--dry-run", args->dry_run,
                "check every point and print them as JSON lines; run nothing");
  return [args] { return execute(*args); };
}

}  // namespace pipesim::cli
