#include "models/keeper/closed_loop.h"

#include <algorithm>
#include <cmath>

namespace pipesim::keeper {

namespace {

// P_M(n) for M clients with 1 / (mu D) = exp(log_r), on the window of n
// around its mode where the weight is above e^-40 of the mode's (the rest is
// below 1e-17 together): O(sqrt M) wide when saturated, O(1 / (1 - rho))
// when not, so a solve is cheap even for a million threads. Computed in logs
// (M! / (M - n)! overflows a double past n ~ 170).
struct Window {
  std::int64_t first = 0;
  std::vector<double> p;  // P_M(first + i), summing to 1
};

Window distribution(std::int64_t m, double log_r) {
  constexpr double kCut = 40.0;
  // The weights rise while (m - n + 1) r > 1: the mode is the last such n.
  const double rise_until = static_cast<double>(m) + 1.0 - std::exp(-log_r);
  const auto mode = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::floor(rise_until)), 0, m);
  std::vector<double> up;    // log w(n) - log w(mode), n = mode + 1, ...
  std::vector<double> down;  // n = mode - 1, mode - 2, ...
  double lw = 0;
  for (std::int64_t n = mode + 1; n <= m; ++n) {
    lw += std::log(static_cast<double>(m - n + 1)) + log_r;
    if (lw < -kCut) break;
    up.push_back(lw);
  }
  lw = 0;
  for (std::int64_t n = mode; n >= 1; --n) {
    lw -= std::log(static_cast<double>(m - n + 1)) + log_r;  // log w(n - 1)
    if (lw < -kCut) break;
    down.push_back(lw);
  }
  Window w;
  w.first = mode - static_cast<std::int64_t>(down.size());
  w.p.reserve(down.size() + 1 + up.size());
  for (auto it = down.rbegin(); it != down.rend(); ++it) w.p.push_back(std::exp(*it));
  w.p.push_back(1.0);
  for (double x : up) w.p.push_back(std::exp(x));
  double sum = 0;
  for (double x : w.p) sum += x;
  for (double& x : w.p) x /= sum;
  return w;
}

double mean_of(const Window& w) {
  double m = 0;
  for (std::size_t i = 0; i < w.p.size(); ++i) m += static_cast<double>(w.first + static_cast<std::int64_t>(i)) * w.p[i];
  return m;
}

double idle_probability(const Window& w) { return w.first == 0 ? w.p[0] : 0.0; }

}  // namespace

double ClosedLoop::throughput_of(double mu, std::int64_t threads, double away_s) {
  if (threads <= 0) return 0;
  if (away_s <= 0) return mu;
  return mu * (1.0 - idle_probability(distribution(threads, -std::log(mu * away_s))));
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

void ClosedLoop::solve(double mu, const std::vector<ClientClass>& classes, double open_rate) {
  mu_ = mu;
  threads_ = 0;
  offered_ = open_rate;
  for (const auto& c : classes) {
    if (c.threads <= 0) continue;
    threads_ += c.threads;
    offered_ += static_cast<double>(c.threads) / std::max(c.away_s, 1e-12);
  }
  offered_ /= mu;
  if (threads_ == 0) {
    away_s_ = 0;
    threads_away_s_ = 0;
    throughput_ = 0;
    mean_at_leader_ = 0;
    seen_first_ = 0;
    seen_cdf_.assign(1, 1.0);
    return;
  }
  // Fold the classes into one: the away time that gives the same throughput
  // at the time R a request spends at the leader, with R from the folded
  // model. The folded R falls as the guess rises (a longer R gives the slow
  // classes more weight, a longer away time, a shorter queue), so the fixed
  // point is unique: bisection between one service time and N of them.
  // The classes' threads' throughput when each request spends r_s at the leader.
  const auto threads_rate = [&](double r_s) {
    double x = 0;
    for (const auto& c : classes) {
      if (c.threads > 0) x += static_cast<double>(c.threads) / (c.away_s + r_s);
    }
    return x;
  };
  const auto folded_away = [&](double r_s) {
    return std::max(static_cast<double>(threads_) / (open_rate + threads_rate(r_s)) - r_s, 1e-12);
  };
  // A background request sees the other N - 1 clients (arrival theorem).
  const auto folded_r = [&](double r_s) {
    return (mean_of(distribution(threads_ - 1, -std::log(mu * folded_away(r_s)))) + 1.0) / mu;
  };
  double lo = 1.0 / mu;
  double hi = static_cast<double>(threads_) / mu;
  const auto busy = std::count_if(classes.begin(), classes.end(), [](const ClientClass& c) { return c.threads > 0; });
  if ((busy > 1 || open_rate > 0) && hi > lo) {
    for (int it = 0; it < 100 && hi / lo > 1 + 1e-12; ++it) {
      const double mid = std::sqrt(lo * hi);
      (folded_r(mid) > mid ? lo : hi) = mid;
    }
  }
  const double r_s = std::sqrt(lo * hi);
  away_s_ = folded_away(r_s);
  threads_away_s_ = std::max(static_cast<double>(threads_) / threads_rate(r_s) - r_s, 1e-12);
  // A request of this pipeline comes from a thread outside the N: it sees all of them.
  const Window w = distribution(threads_, -std::log(mu * away_s_));
  throughput_ = mu * (1.0 - idle_probability(w));
  mean_at_leader_ = mean_of(w);
  seen_first_ = w.first;
  seen_cdf_.resize(w.p.size());
  double acc = 0;
  for (std::size_t n = 0; n < w.p.size(); ++n) {
    acc += w.p[n];
    seen_cdf_[n] = acc;
  }
}

std::int64_t ClosedLoop::ahead(double u) const {
  const double target = u * seen_cdf_.back();
  const auto it = std::upper_bound(seen_cdf_.begin(), seen_cdf_.end(), target);
  return seen_first_ +
         std::min<std::int64_t>(it - seen_cdf_.begin(), static_cast<std::int64_t>(seen_cdf_.size()) - 1);
}

double ClosedLoop::fluid_limit() const {
  return std::max(0.0, static_cast<double>(threads_) - mu_ * away_s_);
}

double ClosedLoop::offered_load() const { return offered_; }

}  // namespace pipesim::keeper
