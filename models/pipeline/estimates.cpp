#include "models/pipeline/estimates.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "models/pipeline/metrics.h"
#include "sim/config/duration.h"
#include "sim/experiment/count_interval.h"
#include "sim/experiment/statistics.h"
#include "sim/report/summary.h"

namespace pipesim::pipeline {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_metric(const std::string& name) {
  const auto& names = metric_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (const double x : v) s += x;
  return s;
}

// A mean over seeds. Counts (every seed's value a non-negative integer, no
// importance weights) take the hull of the Student-t and the exact Poisson
// interval of the total (sim/experiment/count_interval.h): all-zero counts
// do not prove a zero mean.
Estimate scaled_mean(const std::vector<double>& values, const std::string& name, double scale,
                     double confidence, bool may_be_counts) {
  const sim::SummaryStats s = sim::summarize(values, confidence);
  double lo = s.ci_lo;
  double hi = s.ci_hi;
  if (may_be_counts && values.size() >= 2 && sim::is_count_sample(values)) {
    std::tie(lo, hi) = sim::count_mean_interval(values, confidence);
  }
  return Estimate{name, s.mean * scale, lo * scale, hi * scale, "mean", 0, 0};
}

Estimate ratio(const std::vector<double>& num, const std::vector<double>& den,
               const std::string& name, double scale, double confidence) {
  const double d = sum(den);
  const double value = d > 0 ? sum(num) / d : 0.0;
  const auto [lo, hi] = sim::ratio_interval(num, den, confidence);
  return Estimate{name, value * scale, lo * scale, hi * scale, "ratio", sum(num), d};
}

// The column with each seed's value multiplied by its importance weight.
std::vector<double> weighted(std::vector<double> v, const std::vector<double>* weights) {
  if (weights == nullptr) return v;
  for (std::size_t i = 0; i < v.size(); ++i) v[i] *= (*weights)[i];
  return v;
}

std::string duration_of(double days) {
  return sim::format_duration(sim::Time::micros(std::llround(days * 86400e6)));
}

}  // namespace

std::vector<double> metric_column(const std::vector<sim::Metrics>& runs, const std::string& name) {
  std::vector<double> v;
  v.reserve(runs.size());
  for (const auto& run : runs) v.push_back(sim::value_of(run, name));
  return v;
}

bool whole_days(double days) {
  return days >= 1 - 1e-12 && std::abs(days - std::round(days)) < 1e-9;
}

std::string period_problem(const std::string& name, double days) {
  if (whole_days(days)) return "";
  for (const char* suffix : {"_per_day", "_per_month"}) {
    if (!ends_with(name, suffix)) continue;
    const std::string base = name.substr(0, name.size() - std::string(suffix).size());
    const std::string instead = ends_with(base, "_probability") ? base : base + "_per_window";
    return name + " needs whole days: run.duration is " + duration_of(days) +
           ", and a window's figure scaled to a day is not the day's (the traffic profile is not "
           "flat); use " +
           instead + ", or a run.duration of whole days";
  }
  return "";
}

std::string in_period(const std::string& name, double days) {
  const std::string suffix = "_per_day";
  if (whole_days(days) || !ends_with(name, suffix)) return name;
  return name.substr(0, name.size() - suffix.size()) + "_per_window";
}

std::string period_words(double days, double start_hour) {
  if (whole_days(days)) return "per day";
  std::string w = "per " + duration_of(days) + " window";
  if (start_hour > 0) {
    const int h = static_cast<int>(std::lround(start_hour));
    w += std::string(" from ") + (h < 10 ? "0" : "") + std::to_string(h) + ":00";
  }
  return w;
}

std::string no_interval(const Estimate& e, std::size_t seeds) {
  if (e.method == "ratio" && e.trials < 3) {
    return sim::format_number(e.trials) + (e.trials == 1 ? " episode gives" : " episodes give") +
           " no interval: it takes 3";
  }
  if (seeds < 2 && e.method != "proportion") return "one seed gives no interval";
  return "";
}

std::optional<Estimate> estimate(const std::vector<sim::Metrics>& runs, const std::string& name,
                                 double days, double confidence,
                                 const std::vector<double>* weights) {
  const auto column = [&](const std::string& metric) {
    return weighted(metric_column(runs, metric), weights);
  };
  const bool unweighted = weights == nullptr;
  if (is_metric(name)) return scaled_mean(column(name), name, 1.0, confidence, unweighted);
  for (const char* end : {"state_mismatch", "state_contains", "error_state", "stopped"}) {
    for (const char* kind : {"crash", "rebalance"}) {
      if (name != std::string(end) + "_per_" + kind) continue;
      const std::string episodes = std::string(kind) + "_episodes";
      if (weights != nullptr) {  // a ratio of weighted sums: no binomial count to give Wilson
        Estimate e = ratio(column(episodes + "_" + end), column(episodes), name, 1.0, confidence);
        e.method = "proportion";
        return e;
      }
      const double x = sum(metric_column(runs, episodes + "_" + end));
      const double n = sum(metric_column(runs, episodes));
      const auto [lo, hi] = sim::wilson_interval(x, n, confidence);
      return Estimate{name, n > 0 ? x / n : 0.0, lo, hi, "proportion", x, n};
    }
  }
  // Per day and per month only over whole days (period_problem says why).
  if (!period_problem(name, days).empty()) return std::nullopt;
  // The same for a month of 30 days taken as 30/days independent runs:
  // 1 - (1 - p)^(30/days), its interval mapped the same way (it is monotone).
  if (const std::string suffix = "_probability_per_month"; ends_with(name, suffix)) {
    const std::string per_run = name.substr(0, name.size() - std::string("_per_month").size());
    auto e = estimate(runs, per_run, days, confidence, weights);
    if (!e || days <= 0) return std::nullopt;
    const auto month = [days](double p) {
      return 1.0 - std::pow(1.0 - std::clamp(p, 0.0, 1.0), 30.0 / days);
    };
    return Estimate{name,      month(e->value), month(e->lo), month(e->hi),
                    e->method, e->successes,    e->trials};
  }
  // The share of runs in which a metric is above 0 (e.g. lost_records_probability:
  // how often a run of run.duration loses any record).
  if (const std::string suffix = "_probability"; ends_with(name, suffix)) {
    const std::string base = name.substr(0, name.size() - suffix.size());
    if (!is_metric(base)) return std::nullopt;
    std::vector<double> any = metric_column(runs, base);
    for (double& x : any) x = x > 0 ? 1.0 : 0.0;
    if (weights != nullptr)
      return scaled_mean(weighted(any, weights), name, 1.0, confidence, false);
    const double x = sum(any);
    const auto n = static_cast<double>(any.size());
    const auto [lo, hi] = sim::wilson_interval(x, n, confidence);
    return Estimate{name, n > 0 ? x / n : 0.0, lo, hi, "proportion", x, n};
  }
  // Per window: the mean per run, whatever run.duration is.
  if (const std::string suffix = "_per_window"; ends_with(name, suffix)) {
    const std::string base = name.substr(0, name.size() - suffix.size());
    if (!is_metric(base)) return std::nullopt;
    return scaled_mean(column(base), name, 1.0, confidence, unweighted);
  }
  const std::vector<std::pair<std::string, double>> per_time = {{"_per_day", 1.0},
                                                                {"_per_month", 30.0}};
  for (const auto& [suffix, factor] : per_time) {
    if (!ends_with(name, suffix)) continue;
    const std::string base = name.substr(0, name.size() - suffix.size());
    if (!is_metric(base) || days <= 0) return std::nullopt;
    return scaled_mean(column(base), name, factor / days, confidence, unweighted);
  }
  const std::vector<std::pair<std::string, std::string>> per_unit = {
      {"_per_million", "records_produced"},
      {"_per_crash", "crash_episodes"},
      {"_per_rebalance", "rebalance_episodes"}};
  for (const auto& [suffix, denominator] : per_unit) {
    if (!ends_with(name, suffix)) continue;
    const std::string base = name.substr(0, name.size() - suffix.size());
    if (!is_metric(base)) return std::nullopt;
    const double scale = suffix == "_per_million" ? 1e6 : 1.0;
    return ratio(column(base), column(denominator), name, scale, confidence);
  }
  return std::nullopt;
}

}  // namespace pipesim::pipeline
