// Statistics over seeds (docs/model.md §6): mean, standard deviation, Student-t
// confidence interval of the mean, percentiles; Wilson intervals for
// proportions. Our own numerics (incomplete beta for the t distribution), so
// results are the same on every machine.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "sim/experiment/metrics.h"

namespace pipesim::sim {

struct SummaryStats {
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1)
  double ci_lo = 0;
  double ci_hi = 0;
  double p50 = 0;
  double p95 = 0;
  double p99 = 0;
  std::size_t n = 0;
};

// Quantile of Student's t distribution with `df` degrees of freedom (df >= 1).
double student_t_quantile(double p, double df);
// Standard normal quantile.
double normal_quantile(double p);
// Percentile with linear interpolation between order statistics (type 7).
double percentile(std::vector<double> values, double q);
// Mean, sd, CI (two-sided, `confidence`) and percentiles of one sample.
SummaryStats summarize(const std::vector<double>& values, double confidence = 0.95);
// Importance-weighted sample (one likelihood ratio per seed): mean, sd and
// Student-t interval of w·x (unbiased for E[x] under the real distribution);
// percentiles of x under the normalised weights.
SummaryStats summarize_weighted(const std::vector<double>& values, const std::vector<double>& weights,
                                double confidence = 0.95);
// Wilson score interval of a proportion successes/trials.
std::pair<double, double> wilson_interval(double successes, double trials, double confidence = 0.95);

// Percentile-bootstrap interval of the ratio sum(numerators) / sum(denominators)
// over seeds (resampling seeds), from a seeded stream: deterministic.
std::pair<double, double> ratio_interval(const std::vector<double>& numerators,
                                         const std::vector<double>& denominators,
                                         double confidence = 0.95, int resamples = 2000);

// Mean of per-seed differences b - a and its Student-t interval (paired: the
// same seeds, so the same workload and fault timeline in both).
SummaryStats paired_difference(const std::vector<double>& a, const std::vector<double>& b,
                               double confidence = 0.95);
// Welch interval of mean(b) - mean(a) for independent samples (for contrast).
std::pair<double, double> welch_difference_interval(const std::vector<double>& a,
                                                    const std::vector<double>& b,
                                                    double confidence = 0.95);

// Per-metric statistics over runs that all report the same metric names.
struct MetricSummary {
  std::string name;
  SummaryStats stats;
};
// With `weights` (importance sampling, sim/experiment/importance.h): each
// metric as summarize_weighted gives it.
std::vector<MetricSummary> summarize_runs(const std::vector<Metrics>& runs, double confidence = 0.95,
                                          const std::vector<double>* weights = nullptr);

}  // namespace pipesim::sim
