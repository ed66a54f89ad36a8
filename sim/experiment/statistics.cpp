#include "sim/experiment/statistics.h"

#include <algorithm>
#include <cmath>

#include <Eigen/Dense>

#include "sim/engine/invariant.h"
#include "sim/engine/random.h"

namespace pipesim::sim {
namespace {

// Continued fraction of the regularized incomplete beta (modified Lentz).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  double c = 1.0;
  double d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < 1e-15) break;
  }
  return h;
}

double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log(1.0 - x));
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_continued_fraction(a, b, x) / a;
  return 1.0 - front * beta_continued_fraction(b, a, 1.0 - x) / b;
}

double student_t_cdf(double t, double df) {
  const double x = df / (df + t * t);
  const double tail = 0.5 * incomplete_beta(df / 2.0, 0.5, x);
  return t >= 0 ? 1.0 - tail : tail;
}

}  // namespace

double normal_quantile(double p) {
  // Acklam's rational approximation, refined by one Newton step on erfc.
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  double x;
  if (p < 0.02425) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - 0.02425) {
    const double q = p - 0.5;
    const double r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  const double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

double student_t_quantile(double p, double df) {
  PIPESIM_INVARIANT(p > 0 && p < 1 && df >= 1, "t quantile out of domain");
  if (p == 0.5) return 0;
  // Bisection on the CDF: slow but exact to 1e-12 and plain.
  double lo = -1e6, hi = 1e6;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (student_t_cdf(mid, df) < p) {
      lo = mid;
    } else {
      hi = mid;
    }
    if (hi - lo < 1e-12) break;
  }
  return 0.5 * (lo + hi);
}

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(pos));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  const double frac = pos - static_cast<double>(below);
  return values[below] + (values[above] - values[below]) * frac;
}

SummaryStats summarize(const std::vector<double>& values, double confidence) {
  SummaryStats s;
  s.n = values.size();
  if (values.empty()) return s;
  const Eigen::Map<const Eigen::VectorXd> v(values.data(), static_cast<Eigen::Index>(values.size()));
  s.mean = v.mean();
  if (s.n > 1) {
    s.stddev = std::sqrt((v.array() - s.mean).square().sum() / static_cast<double>(s.n - 1));
    const double t = student_t_quantile(0.5 + confidence / 2.0, static_cast<double>(s.n - 1));
    const double half = t * s.stddev / std::sqrt(static_cast<double>(s.n));
    s.ci_lo = s.mean - half;
    s.ci_hi = s.mean + half;
    // Counts cannot be negative: the interval is clipped to the sample's support.
    if (v.minCoeff() >= 0.0) s.ci_lo = std::max(s.ci_lo, 0.0);
  } else {
    s.ci_lo = s.ci_hi = s.mean;
  }
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  s.p50 = percentile(sorted, 0.50);
  s.p95 = percentile(sorted, 0.95);
  s.p99 = percentile(sorted, 0.99);
  return s;
}

std::pair<double, double> wilson_interval(double successes, double trials, double confidence) {
  if (trials <= 0) return {0.0, 1.0};
  const double z = normal_quantile(0.5 + confidence / 2.0);
  const double p = successes / trials;
  const double z2n = z * z / trials;
  const double center = (p + z2n / 2.0) / (1.0 + z2n);
  const double half = z * std::sqrt(p * (1 - p) / trials + z2n / (4.0 * trials)) / (1.0 + z2n);
  // None seen (all seen): the bound is exactly 0 (1), not rounding's 1e-17.
  const double lo = successes <= 0 ? 0.0 : std::max(0.0, center - half);
  const double hi = successes >= trials ? 1.0 : std::min(1.0, center + half);
  return {lo, hi};
}

std::pair<double, double> ratio_interval(const std::vector<double>& numerators,
                                         const std::vector<double>& denominators, double confidence,
                                         int resamples) {
  PIPESIM_INVARIANT(numerators.size() == denominators.size(), "ratio samples differ in size");
  const std::size_t n = numerators.size();
  if (n == 0) return {0.0, 0.0};
  RandomStream rng(0x5eed, "estimates/bootstrap");
  std::vector<double> ratios;
  ratios.reserve(static_cast<std::size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t k = rng.below(n);
      num += numerators[k];
      den += denominators[k];
    }
    if (den > 0) ratios.push_back(num / den);
  }
  if (ratios.empty()) return {0.0, 0.0};
  const double tail = (1.0 - confidence) / 2.0;
  return {percentile(ratios, tail), percentile(ratios, 1.0 - tail)};
}

SummaryStats paired_difference(const std::vector<double>& a, const std::vector<double>& b,
                               double confidence) {
  PIPESIM_INVARIANT(a.size() == b.size(), "paired samples differ in size");
  std::vector<double> d(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) d[i] = b[i] - a[i];
  SummaryStats s = summarize(d, confidence);
  // Differences may be negative: undo the clipping summarize() applies to counts.
  if (s.n > 1) {
    const double t = student_t_quantile(0.5 + confidence / 2.0, static_cast<double>(s.n - 1));
    const double half = t * s.stddev / std::sqrt(static_cast<double>(s.n));
    s.ci_lo = s.mean - half;
    s.ci_hi = s.mean + half;
  }
  return s;
}

std::pair<double, double> welch_difference_interval(const std::vector<double>& a,
                                                    const std::vector<double>& b,
                                                    double confidence) {
  const SummaryStats sa = summarize(a, confidence);
  const SummaryStats sb = summarize(b, confidence);
  const double na = static_cast<double>(sa.n), nb = static_cast<double>(sb.n);
  const double va = sa.stddev * sa.stddev / na, vb = sb.stddev * sb.stddev / nb;
  const double diff = sb.mean - sa.mean;
  if (va + vb == 0) return {diff, diff};
  const double df = (va + vb) * (va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1));
  const double half = student_t_quantile(0.5 + confidence / 2.0, df) * std::sqrt(va + vb);
  return {diff - half, diff + half};
}

SummaryStats summarize_weighted(const std::vector<double>& values, const std::vector<double>& weights,
                                double confidence) {
  PIPESIM_INVARIANT(values.size() == weights.size(), "one weight per value");
  // The mean, its spread and interval are those of the weighted sample w·x
  // (the unbiased importance-sampling estimate of E[x]); the percentiles are
  // of x under the normalised weights (the real distribution's quantiles).
  std::vector<double> products(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) products[i] = values[i] * weights[i];
  SummaryStats s = summarize(products, confidence);
  std::vector<std::size_t> order(values.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  double total = 0;
  for (const double w : weights) total += w;
  const auto quantile = [&](double q) {
    double cumulative = 0;
    for (const std::size_t i : order) {
      cumulative += weights[i];
      if (cumulative >= q * total) return values[i];
    }
    return order.empty() ? 0.0 : values[order.back()];
  };
  s.p50 = quantile(0.50);
  s.p95 = quantile(0.95);
  s.p99 = quantile(0.99);
  return s;
}

std::vector<MetricSummary> summarize_runs(const std::vector<Metrics>& runs, double confidence,
                                          const std::vector<double>* weights) {
  std::vector<MetricSummary> out;
  if (runs.empty()) return out;
  const std::size_t m = runs.front().size();
  // Seeds x metrics: each column is one metric's sample.
  Eigen::MatrixXd table(static_cast<Eigen::Index>(runs.size()), static_cast<Eigen::Index>(m));
  for (std::size_t r = 0; r < runs.size(); ++r) {
    PIPESIM_INVARIANT(runs[r].size() == m, "runs report different metrics");
    for (std::size_t j = 0; j < m; ++j) {
      PIPESIM_INVARIANT(runs[r][j].name == runs.front()[j].name, "runs report metrics in different order");
      table(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(j)) = runs[r][j].value;
    }
  }
  for (std::size_t j = 0; j < m; ++j) {
    const Eigen::VectorXd column = table.col(static_cast<Eigen::Index>(j));
    const std::vector<double> values(column.data(), column.data() + column.size());
    out.push_back({runs.front()[j].name,
                   weights ? summarize_weighted(values, *weights, confidence) : summarize(values, confidence)});
  }
  return out;
}

}  // namespace pipesim::sim
