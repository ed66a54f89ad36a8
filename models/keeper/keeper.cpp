#include "models/keeper/keeper.h"

#include <algorithm>
#include <cmath>

#include "models/keeper/keeper_time.h"

namespace pipesim::keeper {

namespace {
constexpr double seconds(sim::Time t) { return static_cast<double>(t.us) / 1e6; }

// The mean-field number at the leader `tau` seconds after it was `f0`, for
// N clients away D each at service rate mu: dF/dt = (N - F) / D - mu, so
// F = L + (f0 - L) e^(-tau / D) with L = N - mu D, held at 0 once it gets
// there (an idle leader has no queue to drain).
struct Fluid {
  double limit;  // N - mu D (negative: the clients cannot keep the leader busy)
  double away_s;

  [[nodiscard]] double time_to_empty(double f0) const {
    if (limit >= 0) return INFINITY;
    if (f0 <= 0) return 0;
    return away_s * std::log((f0 - limit) / -limit);
  }
  [[nodiscard]] double at(double f0, double tau) const {
    if (tau >= time_to_empty(f0)) return 0;
    return limit + (f0 - limit) * std::exp(-tau / away_s);
  }
  [[nodiscard]] double integral(double f0, double tau) const {
    const double t = std::min(tau, time_to_empty(f0));
    if (t <= 0) return 0;
    return limit * t + (f0 - limit) * away_s * -std::expm1(-t / away_s);
  }
};

Fluid fluid_of(const ClosedLoop& loop) {
  return Fluid{static_cast<double>(loop.threads()) - loop.mu() * loop.away_s(), std::max(loop.away_s(), 1e-12)};
}

// A held leader (stalled, or serving a burst ahead of the threads' requests)
// serves none of theirs: the threads away come back to it
// (dF/dt = (N - F) / D, the equation with mu = 0).
Fluid held_fluid_of(const ClosedLoop& loop) {
  return Fluid{static_cast<double>(loop.threads()), std::max(loop.threads_away_s(), 1e-12)};
}
}  // namespace

Keeper::Keeper(const KeeperOptions& options, std::uint64_t seed)
    : options_(options),
      queue_stream_(seed, "keeper/queue"),
      burst_stream_(seed, "keeper/bursts"),
      capacity_(static_cast<double>(options.capacity_ops_per_s)),
      next_sample_(options.sample_interval) {
  // The background threads' away time: what makes them send
  // background_ops_per_s to a healthy leader (round trip included, so no
  // less than it; config.cpp refuses threads too few for the rate).
  const auto rate = static_cast<double>(options.background_ops_per_s);
  if (rate > 0 && options.background_clients > 0) {
    background_.threads = options.background_clients;
    background_threads_ = options.background_clients;
    background_.away_s =
        std::max(ClosedLoop::away_for_throughput(capacity_, options.background_clients, rate),
                 seconds(threads_round_trip()));
  }
  solve();
  fluid_ = loop_.fluid_limit();
}

void Keeper::solve() {
  std::vector<ClientClass> classes{background_};
  if (extra_.threads > 0) {
    classes.push_back(ClientClass{extra_.threads, seconds(extra_.think + threads_round_trip())});
  }
  // This pipeline's aggregate streams: a rate the leader serves besides the threads'.
  double own = 0;
  for (const auto& st : streams_) own += st.rate;
  loop_.solve(capacity_ * capacity_factor_, classes, own);
  peak_utilisation_ = std::max(peak_utilisation_, loop_.offered_load());
  update_read_wait();
}

void Keeper::update_read_wait() {
  // The writes of one server's session reach its node: the leader's
  // throughput's write share, over the servers.
  const double servers = std::max<double>(1.0, static_cast<double>(servers_.size()));
  node_write_rate_ = loop_.throughput() * options_.background_write_share / servers;
  const double c = seconds(options_.commit_latency);
  const double lambda = node_write_rate_;
  read_wait_s_ = lambda > 0 && c > 0 ? c + std::expm1(-lambda * c) / lambda : 0.0;
  // A read's round trip at the middle quantile q of each of equal strata:
  // P(wait <= w) = e^(-lambda (c - w)) for 0 <= w <= c, so the wait's
  // quantile q is c + ln(q) / lambda, or 0 below q = e^(-lambda c).
  const auto strata = static_cast<double>(read_trip_strata_.size());
  for (std::size_t i = 0; i < read_trip_strata_.size(); ++i) {
    const double q = (static_cast<double>(i) + 0.5) / strata;
    const double wait = lambda > 0 && c > 0 ? std::max(0.0, c + std::log(q) / lambda) : 0.0;
    read_trip_strata_[i] = options_.latency + to_time(wait);
  }
}

sim::Time Keeper::draw_read_wait() {
  const double c = seconds(options_.commit_latency);
  if (node_write_rate_ <= 0 || c <= 0) return sim::Time{};
  // The time since the node's last write: exponential at its write rate.
  const double since = -std::log(1.0 - queue_stream_.uniform01()) / node_write_rate_;
  return to_time(std::max(0.0, c - since));
}

double Keeper::fluid_at(sim::Time at) const { return fluid_from(fluid_, last_, at); }

double Keeper::fluid_from(double f, sim::Time from, sim::Time at) const {
  // Piece by piece: held and serving spans alternate at the boundaries.
  for (sim::Time t = from; t < at;) {
    const sim::Time to = std::min(at, next_boundary(t));
    f = (held(t) ? held_fluid_of(loop_) : fluid_of(loop_)).at(f, seconds(to - t));
    t = to;
  }
  return f;
}

double Keeper::fluid_integral(sim::Time to) const {
  const double tau = std::max(0.0, seconds(to - last_));
  if (held(last_)) return held_fluid_of(loop_).integral(fluid_, tau);
  return fluid_of(loop_).integral(fluid_, tau);
}

double Keeper::round_trip_share() const {
  return loop_.away_s() > 0 ? std::min(1.0, seconds(threads_round_trip()) / loop_.away_s()) : 1.0;
}

sim::Time Keeper::threads_round_trip() const {
  return keeper::threads_round_trip(options_) +
         to_time(read_wait_s_ * (1 - options_.background_write_share));
}

void Keeper::add_threads_latency(sim::Time queued, std::int64_t weight) {
  // The writes' share of them, carried over so that no share is lost to rounding.
  threads_writes_carry_ += static_cast<double>(weight) * options_.background_write_share;
  const auto writes = std::min(weight, static_cast<std::int64_t>(threads_writes_carry_));
  threads_writes_carry_ -= static_cast<double>(writes);
  if (writes > 0) latency_us_.add((queued + round_trip(true)).us, writes);
  // The reads in strata of their wait for their node's writes (update_read_wait).
  const std::int64_t reads = weight - writes;
  const auto strata = static_cast<std::int64_t>(read_trip_strata_.size());
  for (std::int64_t i = 0; i < strata && reads > 0; ++i) {
    const std::int64_t w = reads / strata + (i < reads % strata ? 1 : 0);
    if (w > 0) latency_us_.add((queued + read_trip_strata_[static_cast<std::size_t>(i)]).us, w);
  }
}

double Keeper::in_flight_at(sim::Time at) const {
  if (!available(at)) return 0;
  // At the leader, plus the threads away whose request is on its way: the
  // round trip's share of their away time (in a steady state that is
  // throughput x round trip, Little's law). Never more than the threads.
  const auto n = static_cast<double>(loop_.threads());
  const double at_leader = std::clamp(loop_.mean_at_leader() + shift_at(at), 0.0, n);
  return at_leader + (n - at_leader) * round_trip_share();
}

void Keeper::advance(sim::Time now) {
  while (last_ < now) {
    const bool up = available(last_);
    // Segments end where a stall or a burst begins or ends (the dynamics differ).
    const sim::Time to =
        up ? std::min(now, next_boundary(last_)) : std::min(now, unavailable_until_);
    const bool held_now = up && held(last_);
    const double dt = seconds(to - last_);
    double streamed = 0;
    for (const auto& st : streams_) {
      if (st.rate <= 0) continue;
      const double ops = st.rate * dt;
      streamed += ops;
      auto& carry = stream_carry_[static_cast<std::size_t>(st.client)];
      carry += ops;
      const auto whole = static_cast<std::int64_t>(carry);
      carry -= static_cast<double>(whole);
      ops_ += whole;
      ops_by_client_[static_cast<std::size_t>(st.client)] += whole;
    }
    // The threads' number is monotone over a segment and this pipeline's
    // and the bursts' only fall: the largest value is at one of its ends.
    double at_start = 0;
    if (up) {
      drop_answered(last_);
      const double threads = in_flight_at(last_);
      at_start = threads + static_cast<double>(own_in_flight_) + bursts_at(last_);
      note_server_peaks(last_, threads);
    }
    take_samples(to);
    if (up) {
      drop_answered(to);
      const double threads = in_flight_at(to);
      peak_in_flight_ = std::max({peak_in_flight_, at_start,
                                  threads + static_cast<double>(own_in_flight_) + bursts_at(to)});
      note_server_peaks(to, threads);
      in_flight_integral_ += bursts_integral(last_, to);
      const double shift_integral = fluid_integral(to) - loop_.fluid_limit() * dt;
      const double at_leader = std::max(0.0, loop_.mean_at_leader() * dt + shift_integral);
      const double share = round_trip_share();
      const double threads_integral =
          at_leader * (1 - share) + static_cast<double>(loop_.threads()) * share * dt;
      in_flight_integral_ += threads_integral;
      add_server_segment(last_, to, threads_integral);
      if (!held_now) {  // a held leader serves none of the threads' requests
        background_ops_ += std::max(0.0, loop_.throughput() * dt - streamed);
        pending_served_ += loop_.throughput() * dt;
        pending_shift_integral_ += shift_integral;
        pending_span_s_ += dt;
      } else {
        note_held_arrivals(to);
      }
      fluid_ = fluid_at(to);
    } else {
      fluid_ = 0;  // the old leader's queue is gone; clients reconnect and resend
    }
    last_ = to;
  }
  std::erase_if(ramps_, [&](const Ramp& r) { return r.last <= last_; });
}

double Keeper::service_time_s(std::int64_t requests, sim::RandomStream& stream) {
  const double s = 1.0 / loop_.mu();
  const double cv = options_.service_time_cv;
  if (cv == 0) return s * static_cast<double>(requests);
  if (requests > 16) {
    // A sum of many: normal with the summed mean and variance.
    const double n = static_cast<double>(requests);
    return std::max(0.0, s * n + s * cv * std::sqrt(n) * stream.normal());
  }
  double total = 0;
  for (std::int64_t i = 0; i < requests; ++i) {
    if (cv == 1) {
      total += stream.exponential(s);
    } else {
      // Lognormal with mean s and the given coefficient of variation.
      const double sigma2 = std::log1p(cv * cv);
      total += s * std::exp(std::sqrt(sigma2) * stream.normal() - sigma2 / 2);
    }
  }
  return total;
}

bool Keeper::healthy(sim::Time now) const {
  // Looks without advancing: a question must not change the state's
  // integrals (the same run asked more often gives the same figures).
  if (!available(now) || held(now) || capacity_factor_ != 1.0 || extra_.threads != 0 ||
      session_share_ != 1.0)
    return false;
  // An election not advanced over yet: the old leader's queue is gone, the
  // new one fills from nothing (advance()).
  const bool elected_since = last_ < unavailable_until_;
  const double f = elected_since ? fluid_from(0, unavailable_until_, now) : fluid_at(now);
  return std::abs(f - loop_.fluid_limit()) < 0.5;
}

int Keeper::add_stream(sim::Time now, KeeperClient client) {
  advance(now);
  streams_.push_back(Stream{0, client});
  return static_cast<int>(streams_.size() - 1);
}

void Keeper::set_stream(int stream, sim::Time now, double ops_per_s) {
  advance(now);
  auto& st = streams_[static_cast<std::size_t>(stream)];
  if (st.rate == ops_per_s) return;
  flush_samples();
  st.rate = ops_per_s;
  solve();
}

void Keeper::count(std::int64_t requests, KeeperClient client) {
  ops_ += requests;
  ops_by_client_[static_cast<std::size_t>(client)] += requests;
}

KeeperAnswer Keeper::request(sim::Time now, int requests, KeeperClient client, int server,
                             int writes) {
  advance(now);
  if (!available(now)) {
    // No leader: the server the client is connected to answers at once with
    // a connection loss (Coordination::Error::ZCONNECTIONLOSS).
    ++failed_requests_;
    return KeeperAnswer{false, options_.latency, options_.latency, false};
  }
  drop_answered(now);
  peak_in_flight_ = std::max(peak_in_flight_, all_in_flight_at(now));
  KeeperAnswer answer;
  sim::Time in_keeper{};  // one request at a time: one in flight all along
  for (int i = 0; i < requests; ++i) {
    count(1, client);
    // Each request goes out when the previous one is answered, and sees the
    // queue as it is then.
    const sim::Time sent = now + answer.latency;
    // The chain's last `writes` are writes: Raft commits them after the
    // leader's service (time in flight, not the leader's); a read waits for
    // its node's writes before it to commit.
    const bool write = i >= requests - writes;
    sim::Time one = write ? round_trip(true) : options_.latency + draw_read_wait();
    if (held(sent)) {
      // A held leader: it waits for the stall's (or the burst's) end behind
      // the requests queued before it (the fluid number there), then for their service.
      const double ahead = std::clamp(fluid_at(sent), 0.0, static_cast<double>(loop_.threads()));
      one +=
          (held_end(sent) - sent) + to_time(service_time_s(std::llround(ahead) + 1, queue_stream_));
    } else {
      const double ahead = std::clamp(
          static_cast<double>(loop_.ahead(queue_stream_.uniform01())) + shift_at(sent), 0.0,
          static_cast<double>(loop_.threads()));
      one += to_time(service_time_s(std::llround(ahead) + 1, queue_stream_));
    }
    // Keeper's own latency: a request the client gave up on is served all the same.
    latency_us_.add(one.us);
    // It is in flight for that long (Little's law, as the aggregate streams
    // are counted through the folded threads' round trips).
    in_flight_integral_ += seconds(one);
    spread_to_servers(server, seconds(one), &Server::integral);
    in_keeper += one;
    if (one > options_.operation_timeout) {
      // ZooKeeperImpl's receive thread: "Operation timeout (no response in
      // operation_timeout_ms)"; the request stays queued in Keeper.
      ++failed_requests_;
      answer.ok = false;
      answer.operation_timeout = true;
      answer.timed_out_request = i;
      answer.served_after = (sent - now) + one;
      answer.latency += options_.operation_timeout;
      answer.last_request = options_.operation_timeout;
      note_own(now, now + in_keeper, 1, server);
      return answer;
    }
    answer.latency += one;
    answer.last_request = one;
  }
  note_own(now, now + in_keeper, 1, server);
  return answer;
}

void Keeper::add_load(sim::Time now, std::int64_t requests, KeeperClient client,
                      std::int64_t senders, int server, std::int64_t writes) {
  advance(now);
  if (!available(now)) return;  // they fail and are retried later by their senders
  count(requests, client);
  // Each is in flight for a request's expected time (see request()); a held
  // leader keeps each sender's first one until it is free, and the rest
  // follow one after another.
  const sim::Time rest = hold_left(now);
  const sim::Time each = unheld_request_time(now);
  senders = std::clamp<std::int64_t>(senders, 1, std::max<std::int64_t>(1, requests));
  // The writes' Raft commits on top.
  const sim::Time commits = write_extra() * std::clamp<std::int64_t>(writes, 0, requests);
  const double request_s = static_cast<double>(requests) * seconds(each) + seconds(commits) +
                           static_cast<double>(senders) * seconds(rest);
  in_flight_integral_ += request_s;
  spread_to_servers(server, request_s, &Server::integral);
  note_own(now, now + rest + sim::Time{(each.us * requests + commits.us) / senders}, senders,
           server);
}

sim::Time Keeper::expected_request_time(sim::Time now) {
  // A held leader: the rest of the stall or burst, then the queue it leaves.
  const sim::Time unheld = unheld_request_time(now);
  return unheld + hold_left(now);
}

sim::Time Keeper::unheld_request_time(sim::Time now) {
  advance(now);
  return round_trip(false) +
         to_time((std::max(0.0, loop_.mean_at_leader() + shift_at(now)) + 1) / loop_.mu());
}

sim::Time Keeper::expected_wait(sim::Time now) {
  advance(now);
  return hold_left(now) + to_time(std::max(0.0, loop_.mean_at_leader() + shift_at(now)) / loop_.mu());
}

double Keeper::in_flight(sim::Time now) {
  advance(now);
  drop_answered(now);
  return all_in_flight_at(now);
}

double Keeper::background_ops(sim::Time now) {
  advance(now);
  return background_ops_;
}

double Keeper::mean_in_flight(sim::Time now) {
  advance(now);
  flush_samples();
  return now.us > 0 ? in_flight_integral_ / seconds(now) : in_flight_at(now);
}

void Keeper::set_degradation(sim::Time now, double capacity_factor, const ExtraClient& extra) {
  advance(now);
  flush_samples();
  // The leader's work left on bursts and orphaned requests goes at the new pace.
  rescale_holds(now, capacity_factor_ / capacity_factor);
  capacity_factor_ = capacity_factor;
  extra_ = extra;
  solve();
  // The requests of a client that left are served before its threads stop:
  // at most its threads' worth, then the new loop's.
  fluid_ = std::min(fluid_, static_cast<double>(loop_.threads()));
  drop_answered(now);
  peak_in_flight_ = std::max(peak_in_flight_, all_in_flight_at(now));
}

void Keeper::set_unavailable(sim::Time now, sim::Time until) {
  advance(now);
  unavailable_until_ = std::max(unavailable_until_, until);
  if (!available(now)) {
    fluid_ = 0;
    // The requests waiting at the old leader get a connection loss.
    own_ = {};
    own_in_flight_ = 0;
    for (Server& sv : servers_) sv.own = 0;
    drop_bursts();
  }
}

}  // namespace pipesim::keeper
