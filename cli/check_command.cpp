// pipesim check CONFIG --expect EXPECT.json: a config regression test for CI.
// Each expectation bounds an estimate at a confidence level; an expectation
// holds when the one-sided bound at that confidence is inside the limit,
// fails when the opposite bound is outside, and is undecided otherwise
// (with --seeds auto, seeds are doubled until every decision is clear or
// --max-seeds is reached; still undecided then counts as a failure). A
// sample that cannot give a bound (one seed, fewer than 3 episodes of a
// ratio, no spread) is never a PASS.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/config_input.h"
#include "cli/result_output.h"
#include "cli/simulate.h"
#include "models/pipeline/estimates.h"
#include "models/pipeline/expectations.h"
#include "models/pipeline/fault_timeline.h"
#include "models/pipeline/metrics.h"
#include "sim/config/duration.h"
#include "sim/experiment/importance.h"
#include "sim/report/summary.h"

namespace pipesim::cli {
namespace {

struct CheckArgs {
  std::string config;
  std::string expect;
  std::string seeds;  // a number or "auto"
  std::int64_t max_seeds = 640;
  unsigned threads = 0;
  std::string format = "table";
  std::vector<std::string> overrides;
  pipeline::PropertiesFiles properties;
  std::string importance;  // KIND=FACTOR[,...] (run --importance)
  std::string out;         // --out: the result to this file
};

enum class Verdict { PASS, FAIL, UNDECIDED };


struct Decision {
  Verdict verdict;
  pipeline::Estimate estimate;
  std::string reason;  // why a bound that looks inside the limit is not a PASS
};

// A bound needs a sample that can give one: a mean needs two seeds, a ratio
// per episode three episodes, and any interval some width (a zero-width one
// is a sample without spread, not certainty). Counts seen nowhere still get
// a width (estimates.cpp: the exact Poisson bound).
std::string cannot_bound(const pipeline::Estimate& e, std::size_t seeds) {
  if (seeds < 2) return "one seed gives no interval";
  std::string reason = pipeline::no_interval(e, seeds);
  if (reason.empty() && !(e.hi > e.lo)) reason = "no spread over the seeds gives no interval";
  return reason;
}

// One-sided bounds at confidence c are the two-sided bounds at 2c - 1.
Decision decide(const pipeline::Expectation& x, const std::vector<sim::Metrics>& runs, double days,
                const std::vector<double>* weights) {
  const pipeline::Estimate e = *pipeline::estimate(runs, x.metric, days, 2 * x.confidence - 1, weights);
  bool pass = true, fail = false;
  if (x.max) {
    pass = pass && e.hi <= *x.max;
    fail = fail || e.lo > *x.max;
  }
  if (x.min) {
    pass = pass && e.lo >= *x.min;
    fail = fail || e.hi < *x.min;
  }
  if (fail) return {Verdict::FAIL, e, ""};
  std::string reason = cannot_bound(e, runs.size());
  if (pass && reason.empty()) return {Verdict::PASS, e, ""};
  return {Verdict::UNDECIDED, e, std::move(reason)};
}

int execute(const CheckArgs& args) {
  pipeline::Config config;
  sim::Tilt tilt;
  std::vector<pipeline::Expectation> expectations;
  try {
    config = load_config_input(args.config, args.overrides, args.properties);
    if (!args.importance.empty()) tilt = sim::parse_tilt(args.importance, pipeline::poisson_fault_kinds(config));
    expectations = pipeline::read_expectations(args.expect);
    pipeline::check_period(expectations, run_days(config));
  } catch (const sim::ConfigError& e) {
    std::cerr << "pipesim: " << e.what() << "\n";
    return 2;
  }
  {
    auto inputs = config_input_files(args.config, args.properties);
    inputs.emplace_back("expectations", args.expect);
    if (!result_out_usable(args.out, inputs)) return 2;
  }
  const bool automatic = args.seeds == "auto";
  std::uint64_t target = 0;
  if (automatic) {
    target = std::min<std::uint64_t>(20, static_cast<std::uint64_t>(args.max_seeds));
  } else if (!args.seeds.empty()) {
    try {
      target = std::stoull(args.seeds);
    } catch (const std::exception&) {
      target = 0;
    }
    if (target == 0) {
      std::cerr << "pipesim: --seeds expects a positive number or \"auto\", found \"" << args.seeds << "\"\n";
      return 2;
    }
  } else {
    target = static_cast<std::uint64_t>(config.run.seeds);
  }
  const double days = run_days(config);
  std::vector<sim::Metrics> runs;
  std::vector<double> weights;  // with --importance: each seed's likelihood ratio
  const std::vector<double>* weighted = tilt.empty() ? nullptr : &weights;
  const pipeline::Config simulated = pipeline::tilted_config(config, tilt);
  std::vector<Decision> decisions;
  for (;;) {
    SimulateRequest request;
    request.first_seed = static_cast<std::uint64_t>(config.run.first_seed) + runs.size();
    request.seeds = target - runs.size();
    request.threads = args.threads;
    request.reproduce = "pipesim run " + args.config;
    request.progress = "pipesim check: seeds " + std::to_string(request.first_seed) + ".." +
                       std::to_string(request.first_seed + request.seeds - 1);
    const auto more = simulate(simulated, request);
    if (!more) return 3;
    for (std::uint64_t i = 0; i < request.seeds && !tilt.empty(); ++i)
      weights.push_back(pipeline::importance_weight(config, tilt, request.first_seed + i));
    runs.insert(runs.end(), more->begin(), more->end());
    decisions.clear();
    bool undecided = false;
    for (const auto& x : expectations) {
      decisions.push_back(decide(x, runs, days, weighted));
      undecided = undecided || decisions.back().verdict == Verdict::UNDECIDED;
    }
    if (!automatic || !undecided || target >= static_cast<std::uint64_t>(args.max_seeds)) break;
    target = std::min<std::uint64_t>(target * 2, static_cast<std::uint64_t>(args.max_seeds));
  }
  bool all_pass = true;
  nlohmann::ordered_json checked = nlohmann::ordered_json::array();
  std::ostringstream text;
  for (std::size_t i = 0; i < expectations.size(); ++i) {
    const pipeline::Expectation& x = expectations[i];
    const Decision& d = decisions[i];
    const char* word = d.verdict == Verdict::PASS ? "PASS" : d.verdict == Verdict::FAIL ? "FAIL" : "UNDECIDED";
    all_pass = all_pass && d.verdict == Verdict::PASS;
    std::string limit;
    if (x.max) limit += " <= " + sim::format_number(*x.max);
    if (x.min) limit += std::string(x.max ? " and" : "") + " >= " + sim::format_number(*x.min);
    const int pct = static_cast<int>(std::lround(x.confidence * 100));
    if (args.format == "json") {
      nlohmann::ordered_json one = {{"metric", x.metric}, {"verdict", word}, {"estimate", d.estimate.value},
                                    {"lower", d.estimate.lo}, {"upper", d.estimate.hi},
                                    {"confidence", x.confidence}, {"seeds", runs.size()}};
      if (x.max) one["max"] = *x.max;
      if (x.min) one["min"] = *x.min;
      if (!d.reason.empty()) one["reason"] = d.reason;
      checked.push_back(one);
      continue;
    }
    text << word << "  " << x.metric << limit << " at " << pct << "% confidence: estimate "
         << sim::format_number(d.estimate.value) << ", one-sided " << pct << "% bounds ["
         << sim::format_number(d.estimate.lo) << ", " << sim::format_number(d.estimate.hi) << "]";
    if (d.estimate.method == "proportion") {
      text << " (" << sim::format_number(d.estimate.successes) << " of "
           << sim::format_number(d.estimate.trials) << ")";
    }
    text << ", " << sim::counted(static_cast<double>(runs.size()), "seed");
    if (!tilt.empty())
      text << " (importance " << sim::format_tilt(tilt) << ", effective sample size "
           << sim::format_number(sim::effective_sample_size(weights)) << ")";
    if (d.verdict == Verdict::UNDECIDED) {
      text << " (" << (d.reason.empty() ? "not statistically clear" : d.reason)
           << ": counts as a failure)";
    }
    text << "\n";
  }
  if (args.format == "json") {
    // What ran, under run's names, then each expectation with its bound and verdict.
    nlohmann::ordered_json json;
    json["pipesim_version"] = PIPESIM_VERSION;
    json["config_digest"] = pipeline::config_digest(config);
    json["seeds"] = {{"first", config.run.first_seed}, {"count", runs.size()}};
    json["passed"] = all_pass;
    json["expectations"] = checked;
    json["file"] = args.config.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(args.config);
    json["expect_file"] = args.expect;
    json["duration"] = sim::format_duration(config.run.duration);
    json["drain"] = sim::format_duration(config.run.drain);
    json["config"] = pipeline::effective_config(config);
    json["ignored"] = config.ignored;
    if (!tilt.empty()) {
      json["importance"] = {{"tilt", sim::format_tilt(tilt)},
                            {"effective_sample_size", sim::effective_sample_size(weights)}};
    }
    text << json.dump(2) << "\n";
  }
  if (const int written = emit_result(text.str(), args.out); written != 0) return written;
  return all_pass ? 0 : 1;
}

}  // namespace

Command register_check(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand("check", "fail (exit 1) when a config breaks its expectations");
  cmd->add_option("config", args->config, "config JSON (default: the production baseline)");
  cmd->add_option("--expect", args->expect, "expectations JSON")->required();
  cmd->add_option("--seeds", args->seeds,
                  "seeds (default: run.seeds), or \"auto\": add seeds until every decision is clear");
  cmd->add_option("--max-seeds", args->max_seeds, "cap for --seeds auto")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000000}));
  cmd->add_option("--threads", args->threads,
                  "worker threads (default: one per core; results do not depend on it)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--format", args->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--set", args->overrides, "override: section.key=value (repeatable)");
  add_properties_options(cmd, args->properties);
  cmd->add_option("--out", args->out, "write the result to this file (atomically)");
  cmd->add_option("--importance", args->importance,
                  "KIND=FACTOR[,...]: importance sampling of those Poisson faults (as run --importance)");
  return [args] { return execute(*args); };
}

}  // namespace pipesim::cli
