// What is in flight at Keeper, as operators see it: ClickHouse's
// CurrentMetrics::ZooKeeperRequest counts, per server, the requests its
// session has sent and not had answered, whoever in the server sent them.
// Keeper-wide it is the sum; a dashboard scrapes it every sample_interval.
//
// Per server: the background threads belong to the servers evenly, shared
// by those with a session (a server without one sends nothing); a fault's
// extra client counts Keeper-wide only (it may be another cluster's);
// this pipeline's requests and bursts count at the server that sent them,
// or evenly over the servers when several did (a merge, fetches).
#include <algorithm>
#include <cmath>

#include "models/keeper/keeper.h"

namespace pipesim::keeper {

void Keeper::drop_answered(sim::Time now) {
  while (!own_.empty() && own_.top().end <= now) {
    own_in_flight_ -= own_.top().count;
    spread_to_servers(own_.top().server, -static_cast<double>(own_.top().count), &Server::own);
    own_.pop();
  }
}

void Keeper::note_own(sim::Time now, sim::Time end, std::int64_t count, int server) {
  drop_answered(now);
  if (count <= 0 || end <= now) return;
  own_.push(Own{end, count, server});
  own_in_flight_ += count;
  spread_to_servers(server, static_cast<double>(count), &Server::own);
  peak_in_flight_ = std::max(peak_in_flight_, all_in_flight_at(now));
  note_server_peaks(now);
}

void Keeper::take_samples(sim::Time to) {
  // A reading between events: the segment's closed form at that instant
  // (nothing of the state moves, so sampling changes no other figure), plus
  // this pipeline's requests still unanswered then.
  const auto read = [](Readings& r, double reading) {
    r.min = r.count == 0 ? reading : std::min(r.min, reading);
    r.max = std::max(r.max, reading);
    ++r.count;
    r.sum += reading;
    r.milli.add(std::llround(reading * 1000));
  };
  for (; next_sample_ <= to; next_sample_ += options_.sample_interval) {
    drop_answered(next_sample_);
    const double reading = all_in_flight_at(next_sample_);
    read(readings_, reading);
    peak_in_flight_ = std::max(peak_in_flight_, reading);  // a reading is a true value
    const double background =
        servers_.empty() ? 0.0 : in_flight_at(next_sample_) * background_share();
    for (std::size_t r = 0; r < servers_.size(); ++r) {
      const double one = server_at(r, next_sample_, background);
      read(server_readings_, one);
      servers_[r].peak = std::max(servers_[r].peak, one);
    }
  }
}

const Keeper::Readings& Keeper::in_flight_readings(sim::Time now) {
  advance(now);
  return readings_;
}

const Keeper::Readings& Keeper::server_readings(sim::Time now) {
  advance(now);
  return server_readings_;
}

void Keeper::set_servers(int servers) {
  servers_.assign(static_cast<std::size_t>(std::max(0, servers)), Server{});
  with_session_ = servers_.size();
  update_read_wait();
}

void Keeper::set_sessions(sim::Time now, const std::vector<bool>& has_session) {
  advance(now);
  std::size_t with = 0;
  for (std::size_t r = 0; r < servers_.size() && r < has_session.size(); ++r) {
    servers_[r].session = has_session[r];
    with += has_session[r] ? 1 : 0;
  }
  with_session_ = with;
  set_session_share(now, servers_.empty()
                             ? 1.0
                             : static_cast<double>(with) / static_cast<double>(servers_.size()));
  // Threads that come back are on their way at once.
  drop_answered(now);
  peak_in_flight_ = std::max(peak_in_flight_, all_in_flight_at(now));
  note_server_peaks(now);
}

double Keeper::server_weight(std::size_t r) const {
  return servers_[r].session && with_session_ > 0 ? 1.0 / static_cast<double>(with_session_) : 0.0;
}

double Keeper::background_share() const {
  // Each thread is as likely to be at the leader or on its way as any other.
  const auto n = loop_.threads();
  return n > 0 ? static_cast<double>(background_.threads) / static_cast<double>(n) : 0.0;
}

double Keeper::server_at(std::size_t r, sim::Time at, double background) const {
  // Shares of counts spread over the servers add and subtract in floating
  // point: what is left when all are answered may be a rounding below 0.
  return std::max(0.0, background * server_weight(r) + servers_[r].own + bursts_at(at, r));
}

void Keeper::spread_to_servers(int server, double amount, double Server::*field) {
  if (servers_.empty()) return;
  if (server >= 0 && static_cast<std::size_t>(server) < servers_.size()) {
    servers_[static_cast<std::size_t>(server)].*field += amount;
    return;
  }
  for (Server& sv : servers_) sv.*field += amount / static_cast<double>(servers_.size());
}

void Keeper::note_server_peaks(sim::Time at) {
  if (servers_.empty() || !available(at)) return;
  note_server_peaks(at, in_flight_at(at));
}

void Keeper::note_server_peaks(sim::Time at, double threads_in_flight) {
  const double background = threads_in_flight * background_share();
  for (std::size_t r = 0; r < servers_.size(); ++r) {
    servers_[r].peak = std::max(servers_[r].peak, server_at(r, at, background));
  }
}

void Keeper::add_server_segment(sim::Time from, sim::Time to, double threads_integral) {
  const double background = threads_integral * background_share();
  for (std::size_t r = 0; r < servers_.size(); ++r) {
    servers_[r].integral += background * server_weight(r) + bursts_integral(from, to, r);
  }
}

double Keeper::server_peak_in_flight() const {
  double peak = 0;
  for (const Server& sv : servers_) peak = std::max(peak, sv.peak);
  return peak;
}

double Keeper::busiest_server_mean_in_flight(sim::Time now) {
  advance(now);
  double busiest = 0;
  for (const Server& sv : servers_) busiest = std::max(busiest, sv.integral);
  return now.us > 0 ? busiest / (static_cast<double>(now.us) / 1e6) : 0.0;
}

}  // namespace pipesim::keeper
