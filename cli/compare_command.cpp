// pipesim compare A B: both configs on the same seeds. Common random numbers
// (docs/model.md §2) give both the same workload and fault timeline per seed, so the
// per-seed differences B - A carry far less noise than two separate runs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <tuple>

#include "cli/commands.h"
#include "cli/config_input.h"
#include "cli/result_output.h"
#include "cli/simulate.h"
#include "models/pipeline/estimates.h"
#include "models/pipeline/fault_timeline.h"
#include "sim/config/duration.h"
#include "sim/experiment/importance.h"
#include "sim/experiment/statistics.h"
#include "sim/report/summary.h"

namespace pipesim::cli {
namespace {

struct CompareArgs {
  std::string a, b;
  std::string seeds;  // a number or "auto"
  std::int64_t max_seeds = 640;
  unsigned threads = 0;
  std::string format = "table";
  std::vector<std::string> overrides;
  pipeline::PropertiesFiles properties;
  std::string importance;  // KIND=FACTOR[,...] for both (run --importance)
  std::string out;         // --out: the result to this file
};

// Headline quantities, and whether lower is better for a user: fewer
// duplicates, losses, stops, downtime, lag and Keeper load are; more or fewer
// inserts for the same records is neither (a stalled sink makes fewer, a
// faster one bigger ones).
struct Headline {
  std::string name;
  bool lower_is_better = true;
};
const std::vector<Headline>& headline() {
  static const std::vector<Headline> names = {
      {"duplicate_rows_per_day"},
      {"duplicate_rows_by_entry.producer_retry_per_day"},
      {"duplicate_rows_by_entry.insert_timeout_redelivery_per_day"},
      {"duplicate_rows_by_entry.task_restart_replay_per_day"},
      {"duplicate_rows_by_entry.manual_resend_per_day"},
      {"duplicate_rows_by_entry.state_reset_per_day"},
      {"lost_records_per_day"},
      {"pending_records"},
      {"state_mismatch_throws_per_day"},
      {"task_failures_per_day"},
      {"task_downtime_s_per_day"},
      {"dlq_records_missing_per_day"},
      {"max_lag_records"},
      {"keeper_peak_in_flight"},
      {"inserts_per_day", false},
  };
  return names;
}

// Seeds that would likely decide a difference the paired interval does not:
// with the per-seed differences' spread sd, the interval excludes 0 with 80%
// power at the difference seen, d, once n >= ((1.96 + 0.84) sd / d)^2.
// 0: no difference seen at all.
double seeds_to_decide(const sim::SummaryStats& d) {
  if (d.mean == 0) return 0;
  const double n = std::ceil(std::pow((1.96 + 0.84) * d.stddev / std::fabs(d.mean), 2));
  return std::max(n, static_cast<double>(d.n) + 1);
}

// The verdict of one paired difference, worded by what is good for users.
// A difference the pairing shows but that lies inside A's own 95% interval
// (the seed-to-seed uncertainty of A's estimate) is named without a
// judgement: pairing can resolve differences too small to matter.
std::string verdict_of(const sim::SummaryStats& d, const sim::SummaryStats& a, const Headline& h) {
  const bool small = std::fabs(d.mean) <= (a.ci_hi - a.ci_lo) / 2;
  const std::string within = small ? ", within A's own interval" : "";
  const std::string lower =
      h.lower_is_better && !small ? "B is better (lower)" : "B is lower" + within;
  const std::string higher =
      h.lower_is_better && !small ? "B is worse (higher)" : "B is higher" + within;
  if (d.stddev == 0 && d.mean == 0) return "identical";
  if (d.n < 2) return (d.mean < 0 ? "B lower" : "B higher") + std::string(" (1 seed: no interval)");
  if (d.ci_hi < 0) return lower;
  if (d.ci_lo > 0) return higher;
  const double n = seeds_to_decide(d);
  if (n == 0) return "indistinguishable (no difference seen)";
  return "indistinguishable (~" + (n > 1e6 ? std::string("1,000,000+") : sim::format_number(n)) +
         " seeds would likely decide it)";
}

// Per-seed values of a headline quantity (a metric, a metric per day, or per
// window: per run). With importance weights, each seed's value times its
// weight (the paired difference of weighted values estimates the real rates'
// difference).
std::vector<double> per_seed(const std::vector<sim::Metrics>& runs, const std::string& name, double days,
                             const std::vector<double>& weights) {
  std::string metric = name;
  double scale = 1;
  for (const std::string suffix : {"_per_day", "_per_window"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      metric = name.substr(0, name.size() - suffix.size());
      scale = suffix == "_per_day" ? 1 / days : 1;
    }
  }
  auto v = pipeline::metric_column(runs, metric);
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] *= scale;
    if (!weights.empty()) v[i] *= weights[i];
  }
  return v;
}

// One compared quantity over the seeds run so far.
struct Row {
  std::string name;  // as reported: "_per_window" for a window's figures
  const Headline* headline;
  sim::SummaryStats d, a;
  double mean_b;
  std::string verdict;
};

// A verdict more seeds could change: an undecided difference with a hint.
bool undecided(const Row& r) { return r.verdict.starts_with("indistinguishable (~"); }

std::vector<Row> compare_rows(const std::vector<sim::Metrics>& runs_a,
                              const std::vector<sim::Metrics>& runs_b, double days_a, double days_b,
                              const std::vector<double>& weights_a,
                              const std::vector<double>& weights_b) {
  std::vector<Row> rows;
  for (const auto& h : headline()) {
    const std::string name = pipeline::in_period(h.name, days_a);
    const auto va = per_seed(runs_a, name, days_a, weights_a);
    const auto vb = per_seed(runs_b, name, days_b, weights_b);
    Row r{name, &h, sim::paired_difference(va, vb), sim::summarize(va), sim::summarize(vb).mean,
          ""};
    r.verdict = verdict_of(r.d, r.a, h);
    rows.push_back(std::move(r));
  }
  return rows;
}

// Per-day figures compare over any whole days; a window's figures only with
// the same window. "" when A and B compare.
std::string period_mismatch(const pipeline::Config& a, const pipeline::Config& b) {
  if (pipeline::whole_days(run_days(a)) && pipeline::whole_days(run_days(b))) return "";
  if (a.run.duration == b.run.duration && a.run.start == b.run.start) return "";
  const auto window = [](const pipeline::Config& c) {
    return "run.duration " + sim::format_duration(c.run.duration) + " from run.start " +
           sim::format_duration(c.run.start);
  };
  return "A and B cover different windows (A " + window(a) + ", B " + window(b) +
         "): a window shorter than whole days is compared per window, so both need the same "
         "window, or both whole days";
}

int execute(const CompareArgs& args) {
  pipeline::Config a, b;
  sim::Tilt tilt_a, tilt_b;
  if (args.a == "-" && args.b == "-") {
    std::cerr << "pipesim: A and B cannot both be - (standard input holds one config)\n";
    return 2;
  }
  // Which of the two files is wrong, named.
  for (auto [config, tilt, path, which] :
       {std::tuple{&a, &tilt_a, &args.a, "A"}, std::tuple{&b, &tilt_b, &args.b, "B"}}) {
    try {
      *config = load_config_input(*path, args.overrides, args.properties);
      if (!args.importance.empty()) *tilt = sim::parse_tilt(args.importance, pipeline::poisson_fault_kinds(*config));
    } catch (const sim::ConfigError& e) {
      std::cerr << "pipesim: " << which << (path->empty() ? " (the production baseline)" : "") << ": "
                << e.what() << "\n";
      return 2;
    }
  }
  {
    auto inputs = config_input_files(args.a, args.properties);
    for (const auto& in : config_input_files(args.b, args.properties)) inputs.push_back(in);
    if (!result_out_usable(args.out, inputs)) return 2;
  }
  if (const std::string mismatch = period_mismatch(a, b); !mismatch.empty()) {
    std::cerr << "pipesim: " << mismatch << "\n";
    return 2;
  }
  // --seeds auto: 20 seeds (or --max-seeds), doubled until no difference is
  // undecided or --max-seeds is reached.
  const bool automatic = args.seeds == "auto";
  std::uint64_t target = static_cast<std::uint64_t>(a.run.seeds);
  if (automatic) {
    target = std::min<std::uint64_t>(20, static_cast<std::uint64_t>(args.max_seeds));
  } else if (!args.seeds.empty()) {
    target = 0;
    if (args.seeds.find_first_not_of("0123456789") == std::string::npos && args.seeds.size() < 10)
      target = std::stoull(args.seeds);
    if (target == 0 || target > 100000000) {
      std::cerr
          << "pipesim: --seeds expects a positive number (at most 100000000) or \"auto\", found \""
          << args.seeds << "\"\n";
      return 2;
    }
  }
  const double days_a = run_days(a), days_b = run_days(b);
  const std::uint64_t first_seed = static_cast<std::uint64_t>(a.run.first_seed);
  std::vector<sim::Metrics> runs_a, runs_b;
  std::vector<double> weights_a, weights_b;
  std::vector<Row> rows;
  for (;;) {
    SimulateRequest request;
    request.first_seed = first_seed + runs_a.size();
    request.seeds = target - runs_a.size();
    request.threads = args.threads;
    for (auto [config, tilt, runs, weights, path, which] :
         {std::tuple{&a, &tilt_a, &runs_a, &weights_a, &args.a, "A"},
          std::tuple{&b, &tilt_b, &runs_b, &weights_b, &args.b, "B"}}) {
      request.reproduce = "pipesim run " + *path;
      request.progress = std::string("pipesim compare: ") + which;
      const auto more = simulate(pipeline::tilted_config(*config, *tilt), request);
      if (!more) return 3;
      runs->insert(runs->end(), more->begin(), more->end());
      for (std::uint64_t i = 0; i < request.seeds && !args.importance.empty(); ++i)
        weights->push_back(pipeline::importance_weight(*config, *tilt, request.first_seed + i));
    }
    rows = compare_rows(runs_a, runs_b, days_a, days_b, weights_a, weights_b);
    const bool open = std::any_of(rows.begin(), rows.end(), undecided);
    if (!automatic || !open || target >= static_cast<std::uint64_t>(args.max_seeds)) break;
    target = std::min<std::uint64_t>(target * 2, static_cast<std::uint64_t>(args.max_seeds));
  }
  const std::uint64_t seeds = runs_a.size();

  nlohmann::ordered_json json;
  json["pipesim_version"] = PIPESIM_VERSION;
  // Each side says what ran, under run's names: its file (null: the baseline), digest, duration,
  // drain, effective config (every default) and the keys it ignored.
  for (auto [config, path, key] : {std::tuple{&a, &args.a, "a"}, std::tuple{&b, &args.b, "b"}}) {
    json[key] = {{"file", path->empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(*path)},
                 {"config_digest", pipeline::config_digest(*config)},
                 {"duration", sim::format_duration(config->run.duration)},
                 {"drain", sim::format_duration(config->run.drain)},
                 {"config", pipeline::effective_config(*config)},
                 {"ignored", config->ignored}};
  }
  json["seeds"] = {{"first", first_seed}, {"count", seeds}};
  const auto still_open =
      static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), undecided));
  if (automatic) json["seeds"]["auto"] = {{"max_seeds", args.max_seeds}, {"undecided", still_open}};
  if (!args.importance.empty()) {
    json["importance"] = {{"tilt", sim::format_tilt(tilt_a)},
                          {"effective_sample_size_a", sim::effective_sample_size(weights_a)},
                          {"effective_sample_size_b", sim::effective_sample_size(weights_b)}};
  }
  nlohmann::ordered_json metrics = nlohmann::ordered_json::object();
  std::string table;
  char line[320];
  std::snprintf(line, sizeof line, "%-62s %13s %13s %13s  %-29s %s\n", "metric", "A mean", "B mean",
                "B - A", "95% CI of B - A (paired)", "verdict");
  table += line;
  for (const Row& r : rows) {
    const sim::SummaryStats& d = r.d;
    metrics[r.name] = {{"a_mean", r.a.mean},   {"b_mean", r.mean_b},
                       {"difference", d.mean}, {"ci95", {d.ci_lo, d.ci_hi}},
                       {"verdict", r.verdict}, {"lower_is_better", r.headline->lower_is_better}};
    if (d.n >= 2 && d.ci_lo <= 0 && d.ci_hi >= 0 && d.mean != 0)
      metrics[r.name]["seeds_to_decide"] = seeds_to_decide(d);
    // One seed gives no interval: none is printed.
    const std::string ci =
        d.n < 2 ? std::string("-")
                : "[" + sim::format_number(d.ci_lo) + ", " + sim::format_number(d.ci_hi) + "]";
    std::snprintf(line, sizeof line, "%-62s %13s %13s %13s  %-29s %s\n", r.name.c_str(),
                  sim::format_number(r.a.mean).c_str(), sim::format_number(r.mean_b).c_str(),
                  sim::format_number(d.mean).c_str(), ci.c_str(), r.verdict.c_str());
    table += line;
  }
  json["metrics"] = metrics;
  std::ostringstream text;
  if (args.format == "json") {
    text << json.dump(2) << "\n";
  } else {
    text << "pipesim compare  A " << args.a << " (" << pipeline::config_digest(a) << ")  B "
         << args.b << " (" << pipeline::config_digest(b) << ")\nseeds " << first_seed << ".."
         << first_seed + seeds - 1
         << ": the same seeds for both, so the same workload and fault timeline per seed\n";
    if (automatic) {
      text << "--seeds auto: " << sim::counted(static_cast<double>(seeds), "seed")
           << (still_open == 0
                   ? ", every difference decided or none seen"
                   : ", --max-seeds reached with " +
                         sim::counted(static_cast<double>(still_open), "difference") + " undecided")
           << "\n";
    }
    if (!pipeline::whole_days(days_a)) {
      text << "figures per window (run.duration " << sim::format_duration(a.run.duration)
           << " is not whole days): "
           << pipeline::period_words(days_a, a.run.start.as_seconds() / 3600.0) << "\n";
    }
    if (!args.importance.empty()) {
      text << "importance sampling: faults drawn at " << sim::format_tilt(tilt_a)
           << " x their rates, each seed weighted; effective sample size A "
           << sim::format_number(sim::effective_sample_size(weights_a)) << ", B "
           << sim::format_number(sim::effective_sample_size(weights_b)) << " of " << seeds << "\n";
    }
    text << "\n" << table;
  }
  return emit_result(text.str(), args.out);
}

}  // namespace

Command register_compare(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand("compare", "run two configs on the same seeds and compare them");
  cmd->add_option("a", args->a, "config A (the baseline)")->required();
  cmd->add_option("b", args->b, "config B (the what-if)")->required();
  cmd->add_option(
      "--seeds", args->seeds,
      "seeds (default: A's run.seeds), or \"auto\": add seeds until no difference is undecided");
  cmd->add_option("--max-seeds", args->max_seeds, "cap for --seeds auto")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000000}));
  cmd->add_option("--threads", args->threads,
                  "worker threads (default: one per core; results do not depend on it)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--format", args->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--set", args->overrides, "override applied to both: section.key=value");
  add_properties_options(cmd, args->properties);
  cmd->add_option("--out", args->out, "write the result to this file (atomically)");
  cmd->add_option("--importance", args->importance,
                  "KIND=FACTOR[,...]: importance sampling of those Poisson faults, for both (as run --importance)");
  return [args] { return execute(*args); };
}

}  // namespace pipesim::cli
