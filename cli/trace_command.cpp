// pipesim trace CONFIG --seed S --out trace.json: a Chrome trace-event
// timeline of one run (open it in ui.perfetto.dev or chrome://tracing): one
// track per component — each task's puts and its inserts, a span on a
// fault's target's track while it is down, Keeper's in-flight requests as a
// counter, the story as instant events.
#include <iostream>
#include <memory>

#include "models/pipeline/scenario.h"
#include "models/pipeline/fault_timeline.h"
#include "cli/commands.h"
#include "cli/config_input.h"
#include "cli/simulate.h"
#include "sim/engine/interrupt.h"
#include "sim/report/progress_line.h"
#include "sim/config/duration.h"
#include "sim/report/chrome_trace.h"
#include "sim/report/output_file.h"

namespace pipesim::cli {
namespace {

// Timeline detail kept by default: an hour of the production baseline is some
// tens of MB of trace events, what a browser's trace viewer opens comfortably.
constexpr sim::Time kDefaultWindow = sim::Time::hours(1);
// A default trace's timeline records at most: ~40 MB of trace JSON (~130 bytes a
// record), which chrome://tracing and Perfetto open (the fault-dense 6 h's first hour,
// configs/scenarios/fault_dense_6h.json seed 1, is 560,421 records, 73 MB).
constexpr std::size_t kMaxDetail = 300'000;

}  // namespace

Command register_trace(CLI::App& app) {
  struct Args {
    std::string config;
    std::uint64_t seed = 1;
    std::string out;
    std::string from, to;
    std::vector<std::string> overrides;
    pipeline::PropertiesFiles properties;
    std::string importance;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("trace", "write a Perfetto / chrome://tracing timeline of one run");
  cmd->add_option("config", args->config, "config JSON (default: the production baseline)");
  cmd->add_option("--seed", args->seed, "the seed to replay")
      ->required()
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{9007199254740991}));  // run's --seed range
  cmd->add_option("--out", args->out, "trace file to write (atomically)")->required();
  cmd->add_option("--from", args->from, "keep timeline detail from this time (e.g. 1h; default 0s)");
  cmd->add_option("--to", args->to,
                  "keep timeline detail up to this time (e.g. 2h30m; default: the end, or 1h for a longer run "
                  "when neither is given)");
  cmd->add_option("--set", args->overrides, "override: section.key=value (repeatable)");
  add_properties_options(cmd, args->properties);
  cmd->add_option("--importance", args->importance,
                  "KIND=FACTOR[,...]: replay the seed as run --importance drew it (tilted fault rates)");
  return [args] {
    pipeline::Config config;
    sim::Time from{0}, to = sim::Time::max();
    try {
      config = load_config_input(args->config, args->overrides, args->properties);
      if (!args->importance.empty())
        config = pipeline::tilted_config(config, sim::parse_tilt(args->importance, pipeline::poisson_fault_kinds(config)));
      for (auto [text, field, flag] : {std::tuple{args->from, &from, "--from"}, std::tuple{args->to, &to, "--to"}}) {
        if (text.empty()) continue;
        const auto t = sim::parse_duration(text);
        if (!t) throw sim::ConfigError(std::string(flag) + " expects a duration such as \"1h\" or \"1h30m\", found \"" + text + "\"");
        *field = *t;
      }
      if (from > to) {
        throw sim::ConfigError("--from " + args->from + " is later than --to " + args->to);
      }
      const sim::Time end = config.run.duration + config.run.drain;
      if (from > end) {
        throw sim::ConfigError("--from " + args->from + " is after the run's end (" + sim::format_duration(end) +
                               ": run.duration + run.drain)");
      }
    } catch (const sim::ConfigError& e) {
      std::cerr << "pipesim: " << e.what() << "\n";
      return 2;
    }
    try {
      sim::check_output_path(args->out);  // before simulating, not after
      sim::check_not_an_input(args->out, config_input_files(args->config, args->properties));
    } catch (const std::exception& e) {
      std::cerr << "pipesim: " << e.what() << "\n";
      return 2;
    }
    // A long run's every put and insert makes a trace too big for a browser:
    // unless a window is asked for, timeline detail stays in the first
    // kDefaultWindow; the story (faults, what the framework did) stays whole.
    const sim::Time end = config.run.duration + config.run.drain;
    // The example window lies inside this run: an hour (or what there is) from its middle.
    const sim::Time unit = end >= sim::Time::hours(2) ? sim::Time::hours(1) : sim::Time::minutes(1);
    const sim::Time middle = sim::Time::micros(end.us / 2 / unit.us * unit.us);
    const std::string example = "--from " + sim::format_duration(middle) + " --to " +
                                sim::format_duration(std::min(end, middle + kDefaultWindow));
    const bool windowed = !args->from.empty() || !args->to.empty();
    if (!windowed && end > kDefaultWindow) {
      to = kDefaultWindow;
      std::cerr << "pipesim trace: the run is " << sim::format_wall_seconds(end.as_seconds())
                << " long: timeline detail kept for "
                << "0s.." << sim::format_duration(kDefaultWindow)
                << " only (the story is whole); choose the window with --from/--to, e.g. "
                << example << "\n";
    }
    // Without a window, at most kMaxDetail timeline records (~130 bytes each).
    sim::Trace trace(/*detail=*/true, from, to, windowed ? SIZE_MAX : kMaxDetail);
    try {
      const RunProgress progress("pipesim trace: seed " + std::to_string(args->seed), config);
      pipeline::run_scenario_traced(config, args->seed, trace);
    } catch (const sim::Interrupted&) {
      throw;  // main says so and exits 128 + signal
    } catch (const std::exception& e) {
      sim::end_progress_line();
      std::cerr << "pipesim: internal error in seed " << args->seed << ": " << e.what() << "\n";
      return 3;
    }
    try {
      sim::write_file_atomically(args->out, sim::chrome_trace_json(trace, "pipesim seed " + std::to_string(args->seed)));
    } catch (const sim::Interrupted&) {
      throw;
    } catch (const std::exception& e) {
      std::cerr << "pipesim: " << e.what() << "\n";
      return 2;
    }
    if (const auto cut = trace.detail_cut()) {
      std::cerr << "pipesim trace: timeline detail stopped at " << sim::format_clock(*cut)
                << " after " << kMaxDetail
                << " records, for a file a browser opens (the story is whole); choose a "
                << "window with --from/--to, e.g. " << example << "\n";
    }
    std::cerr << "pipesim: wrote " << trace.records().size() << " events to " << args->out << "\n";
    return 0;
  };
}

}  // namespace pipesim::cli
