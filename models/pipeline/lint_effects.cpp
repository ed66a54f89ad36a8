#include "models/pipeline/lint_effects.h"

#include <cstdio>
#include <map>
#include <thread>

#include "models/pipeline/estimates.h"
#include "models/pipeline/scenario.h"
#include "models/workload/workload.h"
#include "sim/experiment/monte_carlo.h"

namespace pipesim::pipeline {
namespace {

constexpr double kStressRatePerDay = 48;  // twice an hour

double mean_of(const std::vector<sim::Metrics>& runs, const std::string& metric) {
  double total = 0;
  for (const double x : metric_column(runs, metric)) total += x;
  return runs.empty() ? 0 : total / static_cast<double>(runs.size());
}

// Seeds 1..seeds on every core (results do not depend on the thread count).
std::vector<sim::Metrics> run_seeds(const Config& c, int seeds) {
  sim::MonteCarloOptions mc;
  mc.first_seed = 1;
  mc.seeds = static_cast<std::uint64_t>(seeds);
  mc.threads = std::max(1u, std::thread::hardware_concurrency());
  return sim::run_monte_carlo(mc, [&c](std::uint64_t seed) { return run_scenario(c, seed); });
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 || v == 0 ? "%.0f" : "%.2g", v);
  return buf;
}

}  // namespace

Config stress_config(const Config& config) {
  Config quick = config;
  const double peak = workload::Workload(config.workload, 1, 0).peak_multiplier();
  quick.workload.profile = "constant";
  quick.workload.records_per_day = static_cast<std::int64_t>(static_cast<double>(config.workload.records_per_day) * peak);
  quick.run.duration = sim::Time::hours(1);
  quick.run.drain = sim::Time::minutes(30);
  quick.faults.clear();
  bool crashes = false;
  for (const auto& f : config.faults) {
    if (f.at || f.rate_per_day <= 0) continue;  // scheduled ones belong to the real run's timeline
    sim::FaultSpec s = f;
    s.rate_per_day = std::max(f.rate_per_day, kStressRatePerDay);
    crashes = crashes || f.kind == "worker_crash";
    quick.faults.push_back(s);
  }
  if (!crashes) {
    sim::FaultSpec crash;
    crash.kind = "worker_crash";
    crash.rate_per_day = kStressRatePerDay;
    quick.faults.push_back(crash);
  }
  return quick;
}

void estimate_effects(const Config& config, std::vector<Finding>& findings, int seeds) {
  if (seeds <= 0) return;
  const std::vector<sim::Metrics> base = run_seeds(stress_config(config), seeds);
  std::map<std::vector<std::string>, std::vector<sim::Metrics>> fixed;  // one paired run per distinct fix
  const std::string how = " per hour (paired: " + std::to_string(seeds) +
                          " seeds x 1 h at the peak hour's rate, each fault kind at least twice an hour)";
  for (auto& f : findings) {
    if (f.closed_by.empty() || f.metric.empty()) continue;
    auto it = fixed.find(f.closed_by);
    if (it == fixed.end()) {
      nlohmann::json raw = effective_config(config);
      try {
        for (const auto& assignment : f.closed_by) apply_override(raw, assignment);
        it = fixed.emplace(f.closed_by, run_seeds(stress_config(load_config(raw, /*lint=*/true)), seeds)).first;
      } catch (const sim::ConfigError& e) {
        f.effect = std::string("closing it cannot be simulated here: ") + e.what();
        continue;
      }
    }
    f.effect = f.metric + " " + number(mean_of(base, f.metric)) + " -> " + number(mean_of(it->second, f.metric)) + how;
  }
}

}  // namespace pipesim::pipeline
