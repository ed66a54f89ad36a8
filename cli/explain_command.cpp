// pipesim explain CONFIG --seed S: the story of one run in plain language and
// time order — each fault, what the framework and the connector did about
// it — then every group of records that ended duplicated, lost or pending.
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/config_input.h"
#include "cli/explain_story.h"
#include "cli/result_output.h"
#include "cli/simulate.h"
#include "models/pipeline/fault_timeline.h"
#include "models/pipeline/scenario.h"
#include "sim/engine/interrupt.h"
#include "sim/report/progress_line.h"
#include "sim/report/summary.h"

namespace pipesim::cli {
namespace {

struct ExplainArgs {
  std::string config;
  std::uint64_t seed = 1;
  std::string format = "table";
  std::vector<std::string> overrides;
  pipeline::PropertiesFiles properties;
  std::size_t max_groups = 50;
  std::string importance;  // replay the seed of a run --importance (its tilted fault rates)
  std::string out;         // --out: the story to this file
};

int execute(const ExplainArgs& args) {
  pipeline::Config config;
  try {
    config = load_config_input(args.config, args.overrides, args.properties);
    if (!args.importance.empty()) {
      // The seed's run as `run --importance` simulated it: the tilted rates.
      const sim::Tilt tilt = sim::parse_tilt(args.importance, pipeline::poisson_fault_kinds(config));
      std::cerr << "pipesim explain: faults drawn at " << sim::format_tilt(tilt)
                << " x their rates (run --importance); this seed's weight is "
                << sim::format_number(pipeline::importance_weight(config, tilt, args.seed)) << "\n";
      config = pipeline::tilted_config(config, tilt);
    }
  } catch (const sim::ConfigError& e) {
    std::cerr << "pipesim: " << e.what() << "\n";
    return 2;
  }
  if (!result_out_usable(args.out, config_input_files(args.config, args.properties))) return 2;
  sim::Trace trace(/*detail=*/false);
  pipeline::TracedRun run;
  try {
    const RunProgress progress("pipesim explain: seed " + std::to_string(args.seed), config);
    run = pipeline::run_scenario_traced(config, args.seed, trace);
  } catch (const sim::Interrupted&) {
    throw;  // main says so and exits 128 + signal
  } catch (const std::exception& e) {
    sim::end_progress_line();
    std::cerr << "pipesim: internal error in seed " << args.seed << ": " << e.what() << "\n";
    return 3;
  }
  std::ostringstream text;
  if (args.format == "json") {
    nlohmann::ordered_json out;
    out["config_digest"] = pipeline::config_digest(config);
    out["seed"] = args.seed;
    nlohmann::ordered_json story = nlohmann::ordered_json::array();
    for (const auto& r : trace.records()) {
      if (r.story.empty()) continue;
      story.push_back({{"at_us", r.at.us}, {"clock", sim::format_clock(r.at)}, {"track", r.track},
                       {"what", r.name}, {"text", r.story}});
    }
    out["story"] = story;
    nlohmann::ordered_json groups = nlohmann::ordered_json::array();
    for (const auto& g : run.groups) {
      if (g.fate == "pending" && g.ids.count == 0) continue;
      groups.push_back({{"partition", g.partition}, {"first_id", g.ids.first}, {"count", g.ids.count},
                        {"fate", g.fate}, {"detail", g.detail}, {"rows_per_id", g.rows_per_id}});
    }
    out["groups"] = groups;
    nlohmann::ordered_json metrics = nlohmann::ordered_json::object();
    for (const auto& m : run.metrics) metrics[m.name] = m.value;
    out["metrics"] = metrics;
    text << out.dump(2) << "\n";
    return emit_result(text.str(), args.out);
  }
  text << "pipesim explain  config " << pipeline::config_digest(config) << "  seed " << args.seed
       << "\n\n";
  const ExplainStory story = tell_story(trace, run, args.max_groups);
  for (const auto& line : story.lines) text << line << "\n";
  text << "\n" << story.outcome << "\n";
  for (const auto& g : story.groups) text << "  " << g << "\n";
  if (story.hidden_groups > 0) {
    text << "  ... and " << story.hidden_groups << " more groups (--format json lists all)\n";
  }
  return emit_result(text.str(), args.out);
}

}  // namespace

Command register_explain(CLI::App& app) {
  auto args = std::make_shared<ExplainArgs>();
  CLI::App* cmd = app.add_subcommand("explain", "tell the story of one run, event by event");
  cmd->add_option("config", args->config, "config JSON (default: the production baseline)");
  cmd->add_option("--seed", args->seed, "the seed to replay")
      ->required()
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{9007199254740991}));  // run's --seed range
  cmd->add_option("--format", args->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--set", args->overrides, "override: section.key=value (repeatable)");
  add_properties_options(cmd, args->properties);
  cmd->add_option("--max-groups", args->max_groups, "record groups listed in the table")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1000000}));
  cmd->add_option("--out", args->out, "write the story to this file (atomically)");
  cmd->add_option("--importance", args->importance,
                  "KIND=FACTOR[,...]: replay the seed as run --importance drew it (tilted fault rates)");
  return [args] { return execute(*args); };
}

}  // namespace pipesim::cli
