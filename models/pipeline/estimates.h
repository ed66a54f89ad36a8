// Answers users ask for directly, estimated over seeds (docs/model.md §1, §6):
//   <metric>                 mean per run, Student-t interval (for counts, its hull with the
//                            exact Poisson interval of the total: sim/experiment/count_interval.h)
//   <metric>_per_day         per simulated day, when run.duration is whole days (also
//                            _per_month: 30 days); none for a shorter or partial window
//   <metric>_per_window      per run.duration (the mean per run): what a window shorter than a
//                            day gives. The day's profile is not flat and faults' effects
//                            depend on the traffic they meet, so scaling a window's figure to a
//                            day is not exact anywhere but over whole days; it is not done.
//   <metric>_per_million     per million records produced (ratio, bootstrap interval)
//   <metric>_per_crash       per worker crash (ratio, bootstrap); _per_rebalance likewise
//   state_mismatch_per_crash share of worker crashes whose episode ended in State MISMATCH
//   (also state_contains_, error_state_; _per_rebalance): Wilson interval over all episodes.
//   stopped_per_crash        share of worker crashes whose episode stopped the connector at
//   (stopped_per_rebalance)  all, whatever the message (the per-message shares overlap).
//   <metric>_probability     share of runs in which the metric is above 0 (Wilson interval),
//                            e.g. lost_records_probability: how often a run loses any record.
//   <metric>_probability_per_month  the same for 30 days of runs: 1 - (1 - p)^(30 / days)
//                            (whole days only)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/experiment/metrics.h"

namespace pipesim::pipeline {

struct Estimate {
  std::string name;
  double value = 0;
  double lo = 0;
  double hi = 0;
  std::string method;  // "mean", "proportion" or "ratio"
  double successes = 0;  // proportions: x of n
  double trials = 0;
};

// Why `e`, from `seeds` seeds, has no interval: one seed gives none (but a
// proportion's Wilson interval), nor does a ratio over fewer than 3
// episodes; "" when it has one.
std::string no_interval(const Estimate& e, std::size_t seeds);

// nullopt when `name` is not a metric or a derived quantity of one. With
// `weights` (importance sampling: one likelihood ratio per seed) every
// estimate is of the real rates: means of w·x, ratios of weighted sums.
std::optional<Estimate> estimate(const std::vector<sim::Metrics>& runs, const std::string& name,
                                 double days, double confidence = 0.95,
                                 const std::vector<double>* weights = nullptr);

// Whether `days` (run.duration in days) is a whole number of days, at least
// one: only then does a run report figures per day (and per month).
bool whole_days(double days);

// Why `name` has no estimate over runs of `days` days, with what to ask for
// instead; "" when it has one (or is no estimate at all: estimate() says).
std::string period_problem(const std::string& name, double days);

// `name` as the runs of `days` days report it: "x_per_day" is "x_per_window"
// when the run is not whole days; other names are unchanged.
std::string in_period(const std::string& name, double days);
// "per day", or "per 6h window" (with " from 18:00" when run.start is not 0).
std::string period_words(double days, double start_hour = 0);

// One value per seed of a metric (0 if absent).
std::vector<double> metric_column(const std::vector<sim::Metrics>& runs, const std::string& name);

}  // namespace pipesim::pipeline
