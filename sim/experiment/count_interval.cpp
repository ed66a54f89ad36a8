#include "sim/experiment/count_interval.h"

#include <algorithm>
#include <cmath>

#include "sim/experiment/statistics.h"

namespace pipesim::sim {
namespace {

// P(a, x) by its power series, for x < a + 1.
double gamma_p_series(double a, double x) {
  double term = 1.0 / a;
  double sum = term;
  for (int n = 1; n < 1000; ++n) {
    term *= x / (a + n);
    sum += term;
    if (std::fabs(term) < std::fabs(sum) * 1e-16) break;
  }
  return sum * std::exp(-x + a * std::log(x) - std::lgamma(a));
}

// Q(a, x) = 1 - P(a, x) by its continued fraction (modified Lentz), for x >= a + 1.
double gamma_q_fraction(double a, double x) {
  constexpr double kTiny = 1e-300;
  double b = x + 1.0 - a;
  double c = 1.0 / kTiny;
  double d = 1.0 / b;
  double h = d;
  for (int i = 1; i < 1000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < 1e-16) break;
  }
  return std::exp(-x + a * std::log(x) - std::lgamma(a)) * h;
}

}  // namespace

double gamma_p(double a, double x) {
  if (x <= 0) return 0;
  if (x < a + 1.0) return gamma_p_series(a, x);
  return 1.0 - gamma_q_fraction(a, x);
}

double chi_square_quantile(double p, double df) {
  if (p <= 0) return 0;
  // The chi-square CDF is P(df / 2, x / 2), increasing in x: bisect on a
  // bracket that grows until it holds p (deterministic, to double precision).
  const double a = df / 2.0;
  double lo = 0;
  double hi = std::max(1.0, df);
  while (gamma_p(a, hi / 2.0) < p) hi *= 2.0;
  for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; ++i) {
    const double mid = (lo + hi) / 2.0;
    if (gamma_p(a, mid / 2.0) < p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return (lo + hi) / 2.0;
}

std::pair<double, double> poisson_mean_interval(double total, double runs, double confidence) {
  if (runs <= 0) return {0.0, 0.0};
  const double alpha = 1.0 - confidence;
  const double lo = total > 0 ? chi_square_quantile(alpha / 2.0, 2.0 * total) / 2.0 : 0.0;
  const double hi = chi_square_quantile(1.0 - alpha / 2.0, 2.0 * total + 2.0) / 2.0;
  return {lo / runs, hi / runs};
}

bool is_count_sample(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(),
                     [](double v) { return v >= 0 && v == std::floor(v) && v < 9e15; });
}

std::pair<double, double> count_mean_interval(const std::vector<double>& values,
                                              double confidence) {
  double total = 0;
  for (const double v : values) total += v;
  const auto [p_lo, p_hi] =
      poisson_mean_interval(total, static_cast<double>(values.size()), confidence);
  if (values.size() < 2) return {p_lo, p_hi};
  const SummaryStats t = summarize(values, confidence);
  return {std::min(t.ci_lo, p_lo), std::max(t.ci_hi, p_hi)};
}

}  // namespace pipesim::sim
