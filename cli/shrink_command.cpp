// pipesim shrink CONFIG --seed S --until EXPR (or --expect FILE): the few faults of a run that
// make it fail. The seed's realised fault timeline becomes an explicit
// scheduled list (checked to reproduce the run bit for bit), delta debugging
// (sim/experiment/ddmin) removes faults while the condition holds on the same
// seed, then each kept fault's window is halved while it still holds. The
// smallest config found is written; Ctrl-C keeps the best so far.
#include <functional>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/config_input.h"
#include "cli/interrupts.h"
#include "cli/shell_quote.h"
#include "cli/simulate.h"
#include "models/pipeline/expectations.h"
#include "models/pipeline/scenario.h"
#include "models/pipeline/shrink.h"
#include "sim/engine/interrupt.h"
#include "sim/report/output_file.h"
#include "sim/report/progress_line.h"
#include "sim/report/summary.h"

namespace pipesim::cli {
namespace {

struct ShrinkArgs {
  std::string config;
  std::uint64_t seed = 1;
  std::string until;
  std::string expect;  // or: the run breaks these expectations (check's format)
  std::string out;
  std::int64_t max_runs = 500;
  std::vector<std::string> overrides;
  pipeline::PropertiesFiles properties;
};

int execute(const ShrinkArgs& a) {
  pipeline::Config config;
  // The condition to keep: --until on the run's metrics, or --expect: the run
  // breaks an expectation of check's file (its own value beyond a bound).
  std::function<bool(const sim::Metrics&)> holds;
  std::function<std::string(const sim::Metrics&)> describe;
  std::string condition_text;
  try {
    if (a.until.empty() == a.expect.empty()) {
      throw sim::ConfigError(
          "give one of --until EXPR (e.g. \"lost_records > 0\") or --expect FILE");
    }
    config = load_config_input(a.config, a.overrides, a.properties);
    const double days = run_days(config);
    if (!a.until.empty()) {
      const auto condition =
          std::make_shared<pipeline::RunCondition>(pipeline::parse_run_condition(a.until));
      holds = [condition](const sim::Metrics& m) { return pipeline::holds(*condition, m); };
      describe = [condition](const sim::Metrics& m) { return pipeline::describe(*condition, m); };
      condition_text = a.until;
    } else {
      const auto expectations = std::make_shared<std::vector<pipeline::Expectation>>(
          pipeline::read_expectations(a.expect));
      pipeline::check_period(*expectations, days);
      holds = [expectations, days](const sim::Metrics& m) {
        return !pipeline::broken_expectations(*expectations, m, days).empty();
      };
      describe = [expectations, days](const sim::Metrics& m) {
        std::string s;
        for (const auto& b : pipeline::broken_expectations(*expectations, m, days))
          s += (s.empty() ? "" : ", ") + b;
        return s.empty() ? std::string("every expectation met") : s;
      };
      condition_text = "breaks " + a.expect;
    }
    if (!a.out.empty()) {
      sim::check_output_path(a.out);
      auto inputs = config_input_files(a.config, a.properties);
      inputs.emplace_back("expectations", a.expect);
      sim::check_not_an_input(a.out, inputs);
    }
  } catch (const std::exception& e) {
    std::cerr << "pipesim: " << e.what() << "\n";
    return 2;
  }
  const std::string where = "seed " + std::to_string(a.seed);
  sim::Metrics original;
  std::vector<sim::FaultSpec> all;
  try {
    original = pipeline::run_scenario(config, a.seed);
    if (!holds(original)) {
      std::cout << "pipesim shrink: the condition does not hold on " << where << " ("
                << describe(original) << "): nothing to shrink\n";
      return 1;
    }
    // The realised timeline as scheduled faults: it must give the same run.
    all = pipeline::realised_faults(config, a.seed);
    pipeline::Config explicit_config = config;
    explicit_config.faults = all;
    const sim::Metrics again = pipeline::run_scenario(
        pipeline::load_config(
            nlohmann::json::parse(pipeline::effective_config(explicit_config).dump())),
        a.seed);
    for (std::size_t i = 0; i < original.size(); ++i) {
      if (again[i].value != original[i].value) {
        std::cerr << "pipesim: internal error: the realised fault timeline of " << where
                  << " as scheduled faults does not reproduce the run (" << original[i].name << ": "
                  << sim::format_number(original[i].value) << " then "
                  << sim::format_number(again[i].value) << ")\n";
        return 3;
      }
    }
  } catch (const sim::Interrupted&) {
    throw;
  } catch (const std::exception& e) {
    std::cerr << "pipesim: internal error in " << where << ": " << e.what() << "\n";
    return 3;
  }
  std::cout << "pipesim shrink: " << where << " holds " << condition_text << " ("
            << describe(original) << ") with " << all.size()
            << " faults; the realised timeline as scheduled faults reproduces it"
            << std::endl;  // flushed: a long search follows

  std::unique_ptr<sim::ProgressLine> progress;
  if (sim::progress_wanted())
    progress = std::make_unique<sim::ProgressLine>("pipesim shrink", a.max_runs);
  pipeline::ShrinkResult found;
  try {
    found = pipeline::shrink_faults(
        config, a.seed, holds, all, a.max_runs, [&](std::int64_t runs, std::size_t kept) {
          if (progress) {
            progress->update(std::to_string(runs) + "/" + std::to_string(a.max_runs) + " runs  " +
                                 std::to_string(kept) + " faults kept",
                             static_cast<double>(runs));
          }
        });
  } catch (const std::exception& e) {
    sim::end_progress_line();
    std::cerr << "pipesim: internal error in " << where << ": " << e.what() << "\n";
    return 3;
  }
  sim::end_progress_line();
  if (found.signal != 0) sim::clear_interrupt();  // the best so far is still written
  std::string stopped;
  if (found.out_of_runs)
    stopped = "stopped after --max-runs " + std::to_string(a.max_runs) + ": the best so far";
  if (found.signal != 0) stopped = "interrupted: the best so far";

  const auto& best = found.kept;
  pipeline::Config result = config;
  result.faults = best;
  const std::string text = pipeline::effective_config(result).dump(2) + "\n";
  std::cout << "kept " << best.size() << " of " << all.size() << " faults (" << found.runs
            << " runs of seed " << a.seed << (stopped.empty() ? "" : "; " + stopped) << "):\n";
  for (const auto& f : best) std::cout << "  " << pipeline::describe(f) << "\n";
  std::cout << "removed " << all.size() - best.size() << ":";
  std::size_t j = 0;
  std::size_t shown = 0;
  for (const auto& f : all) {
    // `best` keeps the order of `all`: a kept fault matches the next of best by time and kind.
    if (j < best.size() && best[j].at == f.at && best[j].kind == f.kind) {
      ++j;
      continue;
    }
    if (shown++ < 20) std::cout << "\n  " << pipeline::describe(f);
  }
  if (shown > 20) std::cout << "\n  ... and " << shown - 20 << " more";
  std::cout << (shown == 0 ? " none\n" : "\n");
  if (a.out.empty()) {
    std::cout << "\n" << text;
  } else {
    try {
      sim::write_file_atomically(a.out, text);
    } catch (const std::exception& e) {
      std::cerr << "pipesim: " << e.what() << "\n";
      return 2;
    }
    std::cout << "wrote " << a.out << "; its story: pipesim explain " << shell_word(a.out)
              << " --seed " << a.seed << "\n";
  }
  return found.signal != 0 ? interrupted(found.signal, "the best so far written") : 0;
}

}  // namespace

Command register_shrink(CLI::App& app) {
  auto args = std::make_shared<ShrinkArgs>();
  CLI::App* cmd =
      app.add_subcommand("shrink", "reduce a failing run's faults to the few that make it fail");
  cmd->add_option("config", args->config, "config JSON (default: the production baseline)");
  cmd->add_option("--seed", args->seed, "the failing seed")
      ->required()
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{9007199254740991}));
  cmd->add_option("--until", args->until,
                  "the condition to keep, on the run's metrics: METRIC OP NUMBER [and ...], e.g. "
                  "\"lost_records > 0\"");
  cmd->add_option(
      "--expect", args->expect,
      "or keep the run breaking these expectations (check's format; the run's own values)");
  cmd->add_option("--out", args->out,
                  "write the smallest config here (atomically; default: standard output)");
  cmd->add_option("--max-runs", args->max_runs, "runs of the seed the search may make")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1000000}));
  cmd->add_option("--set", args->overrides, "override: section.key=value (repeatable)");
  add_properties_options(cmd, args->properties);
  return [args] { return execute(*args); };
}

}  // namespace pipesim::cli
