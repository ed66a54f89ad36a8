#include "models/keeper/keeper.h"

#include <algorithm>
#include <cmath>

namespace pipesim::keeper {

namespace {
// The steady-state formulas are used up to this utilisation; arrivals above
// capacity go into the fluid backlog instead.
constexpr double kMaxUtilisation = 0.995;
constexpr double seconds(sim::Time t) { return static_cast<double>(t.us) / 1e6; }

// Seconds to Time, capped at ~3,170 years: an absurd backlog (capacity 1/s,
// 1e8 extra requests/s) must give an answer that never comes, not a time that
// wraps past 2^63 us into the past.
sim::Time to_time(double s) {
  constexpr double kNeverUs = 1e17;
  return sim::Time{static_cast<std::int64_t>(std::llround(std::min(s * 1e6, kNeverUs)))};
}
}  // namespace

Keeper::Keeper(const KeeperOptions& options, std::uint64_t seed)
    : options_(options),
      queue_stream_(seed, "keeper/queue"),
      capacity_(static_cast<double>(options.capacity_ops_per_s)) {
  refresh();
}

void Keeper::refresh() {
  Steady& s = steady_;
  s.lambda = static_cast<double>(options_.background_ops_per_s) + extra_ops_per_s_ + own_rate_;
  s.mu = capacity_ * capacity_factor_;
  s.rho = std::min(s.lambda / s.mu, kMaxUtilisation);
  s.service_s = 1.0 / s.mu;
  // Pollaczek-Khinchine: E[Wq] = rho / (1 - rho) * E[S] * (1 + cv^2) / 2.
  const double cv = options_.service_time_cv;
  s.queueing_s = s.rho / (1.0 - s.rho) * s.service_s * (1.0 + cv * cv) / 2.0;
  s.time_s = seconds(options_.latency) + s.service_s + s.queueing_s;
  s.served = std::min(s.lambda, s.mu);
}

double Keeper::current_in_flight() const {
  if (now_unavailable_) return backlog_;
  // Little's law on the requests being served (the backlog is counted once).
  return steady_.served * steady_.time_s + backlog_;
}

bool Keeper::streaming() const {
  return std::any_of(streams_.begin(), streams_.end(), [](const Stream& st) { return st.rate > 0; });
}

void Keeper::integrate(sim::Time to) {
  if (to <= last_) return;
  const double dt = seconds(to - last_);
  in_flight_integral_ += current_in_flight() * dt;
  // Without a leader nothing is served and nothing is accepted: the backlog
  // waits for the new leader.
  const sim::Time served_from = std::max(last_, unavailable_until_);
  if (to > served_from) {
    backlog_ = std::max(0.0, backlog_ + (steady_.lambda - steady_.mu) * seconds(to - served_from));
  }
  for (auto& st : streams_) {
    if (st.rate <= 0) continue;
    const sim::Time end = std::min(to, st.until);
    if (end <= last_) continue;
    const double ops = st.rate * seconds(end - last_);
    window_ops_ += ops;
    auto& carry = stream_carry_[static_cast<std::size_t>(st.client)];
    carry += ops;
    const auto whole = static_cast<std::int64_t>(carry);
    carry -= static_cast<double>(whole);
    ops_ += whole;
    ops_by_client_[static_cast<std::size_t>(st.client)] += whole;
    if (st.sampled) sampled_pending_ += ops;
    if (st.until <= to) st.rate = 0;
  }
  last_ = to;
}

void Keeper::close_window() {
  own_rate_ = window_ops_;
  window_ops_ = 0;
  window_start_ += sim::Time::seconds(1);
  refresh();
  if (available(last_)) peak_utilisation_ = std::max(peak_utilisation_, steady_.lambda / steady_.mu);
  if (sampled_pending_ >= 5000) flush_samples();
}

void Keeper::advance(sim::Time now) {
  if (now <= last_) return;
  // Whole seconds of own load, one window at a time (a stream's end splits
  // its window); a silent stretch with no stream is skipped at once.
  while (now - window_start_ >= sim::Time::seconds(1)) {
    sim::Time to = window_start_ + sim::Time::seconds(1);
    for (const auto& st : streams_) {
      if (st.rate > 0 && st.until > last_ && st.until < to) to = st.until;
    }
    integrate(to);
    if (to < window_start_ + sim::Time::seconds(1)) continue;
    close_window();
    if (!streaming() && now - window_start_ >= sim::Time::seconds(1)) {
      integrate(now);  // at the state of the last window: nothing of ours since
      own_rate_ = 0;
      window_start_ = now;
      refresh();
      if (available(now)) peak_utilisation_ = std::max(peak_utilisation_, steady_.lambda / steady_.mu);
    }
  }
  integrate(now);
  now_unavailable_ = !available(now);
  peak_in_flight_ = std::max(peak_in_flight_, current_in_flight());
}

void Keeper::flush_samples() {
  // Streamed requests enter the latency histogram as 100 strata of the
  // current distribution: the healthy round trip and service, plus the
  // queueing delay (none with probability 1 - rho, else exponential) and the
  // backlog ahead.
  const auto n = static_cast<std::int64_t>(sampled_pending_);
  if (n < 100) return;
  sampled_pending_ -= static_cast<double>(n);
  const double rho = steady_.rho;
  const double fifo_s = backlog_ / steady_.mu;
  for (int i = 0; i < 100; ++i) {
    const double u = (i + 0.5) / 100.0;
    double wait_s = fifo_s;
    if (rho > 0 && u >= 1.0 - rho) wait_s += steady_.queueing_s / rho * std::log(rho / (1.0 - u));
    const sim::Time one = options_.latency + to_time(steady_.service_s) + to_time(wait_s);
    const std::int64_t weight = n / 100 + (i < n % 100 ? 1 : 0);
    latency_us_.add(one.us, weight);
  }
}

bool Keeper::healthy(sim::Time now) {
  advance(now);
  return available(now) && capacity_factor_ == 1.0 && extra_ops_per_s_ == 0.0 && backlog_ < 1.0;
}

int Keeper::add_stream(sim::Time now, KeeperClient client, bool sampled) {
  advance(now);
  streams_.push_back(Stream{0, sim::Time::max(), client, sampled});
  return static_cast<int>(streams_.size() - 1);
}

void Keeper::set_stream(int stream, sim::Time now, double ops_per_s) {
  advance(now);
  auto& st = streams_[static_cast<std::size_t>(stream)];
  st.rate = ops_per_s;
  st.until = sim::Time::max();
}

void Keeper::add_sequential_load(sim::Time now, std::int64_t requests, KeeperClient client) {
  advance(now);
  if (!available(now) || requests <= 0) return;
  // One request at a time: each takes the expected request time now.
  const double each_s = steady_.time_s + backlog_ / steady_.mu;
  const double total_s = each_s * static_cast<double>(requests);
  Stream st{static_cast<double>(requests) / total_s, now + to_time(total_s), client, false};
  // Reuse a finished stream's slot.
  for (auto& old : streams_) {
    if (old.rate <= 0 && old.until != sim::Time::max()) {
      old = st;
      return;
    }
  }
  streams_.push_back(st);
}

void Keeper::count(std::int64_t requests, KeeperClient client) {
  ops_ += requests;
  ops_by_client_[static_cast<std::size_t>(client)] += requests;
  window_ops_ += static_cast<double>(requests);
}

KeeperAnswer Keeper::request(sim::Time now, int requests, KeeperClient client) {
  advance(now);
  if (!available(now)) {
    // No leader: the server the client is connected to answers at once with
    // a connection loss (Coordination::Error::ZCONNECTIONLOSS).
    ++failed_requests_;
    return KeeperAnswer{false, options_.latency, options_.latency, false};
  }
  peak_in_flight_ = std::max(peak_in_flight_, current_in_flight());
  const double rho = steady_.rho;
  const double service_s = steady_.service_s;
  const double queueing_s = steady_.queueing_s;
  const double fifo_s = backlog_ / steady_.mu;
  KeeperAnswer answer;
  for (int i = 0; i < requests; ++i) {
    count(1, client);
    // P(Wq > t) = rho * exp(-t * rho / E[Wq]): inverse transform of one uniform.
    double wait_s = fifo_s;
    const double u = queue_stream_.uniform01();
    if (rho > 0 && u >= 1.0 - rho) wait_s += queueing_s / rho * std::log(rho / (1.0 - u));
    const sim::Time wait = to_time(wait_s);
    const sim::Time one = options_.latency +
                          to_time(service_s) +
                          wait;
    // Keeper's own latency: a request the client gave up on is served all the same.
    latency_us_.add(one.us);
    if (wait > options_.operation_timeout) {
      // ZooKeeperImpl's receive thread: "Operation timeout (no response in
      // operation_timeout_ms)"; the request stays queued in Keeper.
      ++failed_requests_;
      answer.ok = false;
      answer.operation_timeout = true;
      answer.latency += options_.operation_timeout;
      answer.last_request = options_.operation_timeout;
      return answer;
    }
    answer.latency += one;
    answer.last_request = one;
  }
  return answer;
}

void Keeper::add_load(sim::Time now, std::int64_t requests, KeeperClient client) {
  advance(now);
  if (!available(now)) return;  // they fail and are retried later by their senders
  count(requests, client);
  peak_in_flight_ = std::max(peak_in_flight_, current_in_flight());
}

sim::Time Keeper::expected_request_time(sim::Time now) {
  advance(now);
  const double time_s = steady_.time_s + backlog_ / steady_.mu;
  return to_time(time_s);
}

sim::Time Keeper::expected_wait(sim::Time now) {
  advance(now);
  const double wait_s = steady_.queueing_s + backlog_ / steady_.mu;
  return to_time(wait_s);
}

double Keeper::in_flight(sim::Time now) {
  advance(now);
  return current_in_flight();
}

double Keeper::mean_in_flight(sim::Time now) {
  advance(now);
  flush_samples();
  return now.us > 0 ? in_flight_integral_ / seconds(now) : current_in_flight();
}

void Keeper::set_degradation(sim::Time now, double capacity_factor, double extra_ops_per_s) {
  advance(now);
  capacity_factor_ = capacity_factor;
  extra_ops_per_s_ = extra_ops_per_s;
  refresh();
  peak_in_flight_ = std::max(peak_in_flight_, current_in_flight());
}

void Keeper::set_unavailable(sim::Time now, sim::Time until) {
  advance(now);
  unavailable_until_ = std::max(unavailable_until_, until);
  now_unavailable_ = !available(now);
}

}  // namespace pipesim::keeper
