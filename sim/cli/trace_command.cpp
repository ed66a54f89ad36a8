// pipesim trace CONFIG --seed S --out trace.json: a Chrome trace-event
// timeline of one run (open it in ui.perfetto.dev or chrome://tracing): one
// track per component — faults as spans, each task's puts, the inserts,
// Keeper's in-flight requests as a counter, the story as instant events.
#include <iostream>
#include <memory>

#include "models/pipeline/scenario.h"
#include "sim/cli/commands.h"
#include "sim/cli/config_input.h"
#include "sim/config/duration.h"
#include "sim/report/chrome_trace.h"
#include "sim/report/output_file.h"

namespace pipesim::cli {

Command register_trace(CLI::App& app) {
  struct Args {
    std::string config;
    std::uint64_t seed = 1;
    std::string out;
    std::string from, to;
    std::vector<std::string> overrides;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("trace", "write a Perfetto / chrome://tracing timeline of one run");
  cmd->add_option("config", args->config, "config JSON (default: the production baseline)");
  cmd->add_option("--seed", args->seed, "the seed to replay")->required();
  cmd->add_option("--out", args->out, "trace file to write (atomically)")->required();
  cmd->add_option("--from", args->from, "keep timeline detail from this time (e.g. 1h)");
  cmd->add_option("--to", args->to, "keep timeline detail up to this time (e.g. 2h)");
  cmd->add_option("--set", args->overrides, "override: section.key=value (repeatable)");
  return [args] {
    pipeline::Config config;
    sim::Time from{0}, to = sim::Time::max();
    try {
      config = load_config_input(args->config, args->overrides);
      for (auto [text, field, flag] : {std::tuple{args->from, &from, "--from"}, std::tuple{args->to, &to, "--to"}}) {
        if (text.empty()) continue;
        const auto t = sim::parse_duration(text);
        if (!t) throw sim::ConfigError(std::string(flag) + " expects a duration such as \"1h\" or \"1h30m\", found \"" + text + "\"");
        *field = *t;
      }
    } catch (const sim::ConfigError& e) {
      std::cerr << "pipesim: " << e.what() << "\n";
      return 2;
    }
    sim::Trace trace(/*detail=*/true, from, to);
    try {
      pipeline::run_scenario_traced(config, args->seed, trace);
    } catch (const std::exception& e) {
      std::cerr << "pipesim: internal error in seed " << args->seed << ": " << e.what() << "\n";
      return 3;
    }
    try {
      sim::write_file_atomically(args->out, sim::chrome_trace_json(trace, "pipesim seed " + std::to_string(args->seed)));
    } catch (const std::exception& e) {
      std::cerr << "pipesim: " << e.what() << "\n";
      return 2;
    }
    std::cerr << "pipesim: wrote " << trace.records().size() << " events to " << args->out << "\n";
    return 0;
  };
}

}  // namespace pipesim::cli
