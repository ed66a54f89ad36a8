#include "models/keeper/closed_loop.h"

#include <algorithm>
#include <cmath>

namespace pipesim::keeper {

namespace {

// P_M(n), n = 0..M, for M clients with 1 / (mu D) = exp(log_r), scaled to sum
// to 1 (computed in logs: M! / (M - n)! overflows a double past n ~ 170).
std::vector<double> distribution(std::int64_t m, double log_r) {
  std::vector<double> p(static_cast<std::size_t>(m + 1));
  double lw = 0;
  double top = 0;
  p[0] = 0;
  for (std::int64_t n = 1; n <= m; ++n) {
    lw += std::log(static_cast<double>(m - n + 1)) + log_r;
    p[static_cast<std::size_t>(n)] = lw;
    top = std::max(top, lw);
  }
  double sum = 0;
  for (double& x : p) {
    x = std::exp(x - top);
    sum += x;
  }
  for (double& x : p) x /= sum;
  return p;
}

double mean_of(const std::vector<double>& p) {
  double m = 0;
  for (std::size_t n = 0; n < p.size(); ++n) m += static_cast<double>(n) * p[n];
  return m;
}

// P_M(0) without keeping the vector (the bisection's inner loop): two passes,
// the first for the largest log weight.
double idle_probability(std::int64_t m, double log_r) {
  double lw = 0;
  double top = 0;
  for (std::int64_t n = 1; n <= m; ++n) {
    lw += std::log(static_cast<double>(m - n + 1)) + log_r;
    top = std::max(top, lw);
  }
  double sum = std::exp(-top);
  lw = 0;
  for (std::int64_t n = 1; n <= m; ++n) {
    lw += std::log(static_cast<double>(m - n + 1)) + log_r;
    sum += std::exp(lw - top);
  }
  return std::exp(-top) / sum;
}

}  // namespace

double ClosedLoop::throughput_of(double mu, std::int64_t threads, double away_s) {
  if (threads <= 0) return 0;
  if (away_s <= 0) return mu;
  return mu * (1.0 - idle_probability(threads, -std::log(mu * away_s)));
}

double ClosedLoop::away_for_throughput(double mu, std::int64_t threads, double throughput) {
  if (threads <= 0 || throughput <= 0 || throughput >= mu) return 0;
  // Throughput falls as the away time grows: bracket, then bisect in logs.
  double lo = 1e-12;
  if (throughput_of(mu, threads, lo) < throughput) return 0;
  double hi = 1.0;
  while (throughput_of(mu, threads, hi) > throughput) hi *= 2;
  for (int i = 0; i < 200 && hi / lo > 1 + 1e-13; ++i) {
    const double mid = std::sqrt(lo * hi);
    (throughput_of(mu, threads, mid) > throughput ? lo : hi) = mid;
  }
  return std::sqrt(lo * hi);
}

void ClosedLoop::solve(double mu, const std::vector<ClientClass>& classes) {
  mu_ = mu;
  threads_ = 0;
  offered_ = 0;
  for (const auto& c : classes) {
    if (c.threads <= 0) continue;
    threads_ += c.threads;
    offered_ += static_cast<double>(c.threads) / std::max(c.away_s, 1e-12);
  }
  offered_ /= mu;
  if (threads_ == 0) {
    away_s_ = 0;
    throughput_ = 0;
    mean_at_leader_ = mean_seen_ = 0;
    seen_cdf_.assign(1, 1.0);
    return;
  }
  // Fold the classes into one: the away time that gives the same throughput
  // at the time R a request spends at the leader, with R from the folded
  // model. The folded R falls as the guess rises (a longer R gives the slow
  // classes more weight, a longer away time, a shorter queue), so the fixed
  // point is unique: bisection between one service time and N of them.
  const auto folded_away = [&](double r_s) {
    double x = 0;
    for (const auto& c : classes) {
      if (c.threads > 0) x += static_cast<double>(c.threads) / (c.away_s + r_s);
    }
    return std::max(static_cast<double>(threads_) / x - r_s, 1e-12);
  };
  // A background request sees the other N - 1 clients (arrival theorem).
  const auto folded_r = [&](double r_s) {
    return (mean_of(distribution(threads_ - 1, -std::log(mu * folded_away(r_s)))) + 1.0) / mu;
  };
  double lo = 1.0 / mu;
  double hi = static_cast<double>(threads_) / mu;
  const auto busy = std::count_if(classes.begin(), classes.end(), [](const ClientClass& c) { return c.threads > 0; });
  if (busy > 1 && hi > lo) {
    for (int it = 0; it < 100 && hi / lo > 1 + 1e-12; ++it) {
      const double mid = std::sqrt(lo * hi);
      (folded_r(mid) > mid ? lo : hi) = mid;
    }
  }
  away_s_ = folded_away(std::sqrt(lo * hi));
  std::vector<double> p;
  // A request of this pipeline comes from a thread outside the N: it sees all of them.
  p = distribution(threads_, -std::log(mu * away_s_));
  throughput_ = mu * (1.0 - p[0]);
  mean_at_leader_ = mean_seen_ = mean_of(p);
  seen_cdf_.resize(p.size());
  double acc = 0;
  for (std::size_t n = 0; n < p.size(); ++n) {
    acc += p[n];
    seen_cdf_[n] = acc;
  }
}

std::int64_t ClosedLoop::ahead(double u) const {
  const double target = u * seen_cdf_.back();
  const auto it = std::upper_bound(seen_cdf_.begin(), seen_cdf_.end(), target);
  return std::min<std::int64_t>(it - seen_cdf_.begin(), static_cast<std::int64_t>(seen_cdf_.size()) - 1);
}

double ClosedLoop::fluid_limit() const {
  return std::max(0.0, static_cast<double>(threads_) - mu_ * away_s_);
}

double ClosedLoop::offered_load() const { return offered_; }

}  // namespace pipesim::keeper
