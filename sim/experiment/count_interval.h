// Intervals for the mean of a count over seeds (lost records, redeliveries,
// crashes: non-negative integers per run) that stay valid when little or
// nothing was seen. A Student-t interval of all-zero counts is [0, 0] and
// claims certainty from silence; the exact Poisson (Garwood) interval of the
// total count is [0, -ln(alpha) / n] then. Counts over seeds are often
// overdispersed (a crash's duplicates come in thousands), so neither alone
// is sound: the interval used is the hull of both.
#pragma once

#include <utility>
#include <vector>

namespace pipesim::sim {

// Regularized lower incomplete gamma P(a, x), a > 0, x >= 0.
double gamma_p(double a, double x);
// Quantile of the chi-square distribution with `df` > 0 degrees of freedom.
double chi_square_quantile(double p, double df);
// Exact two-sided interval at `confidence` of the mean count per run, given
// `total` counted over `runs` runs of a Poisson process (Garwood 1936).
std::pair<double, double> poisson_mean_interval(double total, double runs, double confidence);
// True when every value is a non-negative integer (a count).
bool is_count_sample(const std::vector<double>& values);
// The mean's interval for a sample of counts: the hull of the Student-t
// interval and the exact Poisson interval of the total (nothing else for
// one run: the Poisson one).
std::pair<double, double> count_mean_interval(const std::vector<double>& values, double confidence);

}  // namespace pipesim::sim
