// ClickHouse Keeper's leader as a queueing server (SPEC §4.6, model).
//
// Requests arrive from other work (background, a steady rate) and from this
// pipeline: inserts (block allocation and commit), replication (other
// replicas pulling the log and fetching parts), the sink's KeeperMap state
// queries (exactlyOnce) and the replicas' cleanup threads. The leader serves
// them one at a time: an M/G/1 queue with mean service time 1/capacity and
// the service-time variability `service_time_cv`.
//  - While arrivals stay below capacity, a request's time in Keeper is the
//    healthy round trip (network + fsync) + its service + a queueing delay
//    drawn per request: none with probability 1 - rho, else exponential with
//    the Pollaczek-Khinchine mean (exact for M/M/1, the usual approximation
//    otherwise).
//  - When arrivals exceed capacity (a backlog episode) the excess piles up as
//    a fluid backlog that every later request waits behind, first come first
//    served, and that drains at capacity - arrivals once the episode ends.
//  - In-flight requests follow from Little's law: served rate x mean time
//    in system, plus the backlog.
// Our own arrival rate is measured over whole seconds, so more inserts or
// exactlyOnce's state queries raise rho and with it latency and in-flight.
//
// Faults: a degradation (keeper_backlog: capacity scaled down, extra load)
// and unavailability (keeper_election: no leader; every request fails at once
// with a connection loss until the new leader is elected).
//
// Cost: O(1) per request (one uniform, and a log with probability rho); no
// events of its own.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "models/keeper/keeper_options.h"
#include "sim/engine/histogram.h"
#include "sim/engine/random.h"
#include "sim/engine/time.h"

namespace pipesim::keeper {

// Who sent a request (for the ops-by-source report).
enum class KeeperClient : std::uint8_t { INSERTS, REPLICATION, KEEPER_MAP, CLEANUP, COUNT };

struct KeeperAnswer {
  bool ok = true;
  // Until the last request is answered, or until the failure is seen.
  sim::Time latency{};
  // The last request alone (an insert's commit multi).
  sim::Time last_request{};
  // The failure was a request waiting longer than operation_timeout_ms (as
  // opposed to no leader at all): ClickHouse's client then finalizes its session.
  bool operation_timeout = false;
};

class Keeper {
 public:
  Keeper(const KeeperOptions& options, std::uint64_t seed);

  // `requests` sent one after another at `now` (each waits for the previous
  // answer). Fails at once while there is no leader; fails after
  // operation_timeout_ms when a request would wait longer than that.
  KeeperAnswer request(sim::Time now, int requests, KeeperClient client);
  // Requests whose answer times the model does not follow (replication):
  // they only load the leader.
  void add_load(sim::Time now, std::int64_t requests, KeeperClient client);
  // Requests that one client thread sends one after another from now on (a
  // cleanup thread's removals): they load the leader at one per expected
  // request time until they are all served, not all at once.
  void add_sequential_load(sim::Time now, std::int64_t requests, KeeperClient client);
  // A steady stream of requests at `ops_per_s` from now on (a healthy stretch
  // advanced in aggregate); `sampled`: they are in the latency histogram.
  // Returns its handle; set_stream() changes its rate (0 stops it).
  int add_stream(sim::Time now, KeeperClient client, bool sampled);
  void set_stream(int stream, sim::Time now, double ops_per_s);
  // The mean time of one request now (no draw).
  [[nodiscard]] sim::Time expected_request_time(sim::Time now);
  // The mean wait before a request is served now (backlog + queueing).
  [[nodiscard]] sim::Time expected_wait(sim::Time now);

  [[nodiscard]] bool available(sim::Time now) const { return now >= unavailable_until_; }
  // A leader, full capacity, no extra load, no backlog left over.
  [[nodiscard]] bool healthy(sim::Time now);
  [[nodiscard]] sim::Time unavailable_until() const { return unavailable_until_; }

  // keeper_backlog: capacity scaled by `factor`, plus extra load.
  void set_degradation(sim::Time now, double capacity_factor, double extra_ops_per_s);
  // keeper_election: no leader from now until `until`.
  void set_unavailable(sim::Time now, sim::Time until);

  [[nodiscard]] const KeeperOptions& options() const { return options_; }
  // Requests of this pipeline that reached a leader.
  [[nodiscard]] std::int64_t ops() const { return ops_; }
  [[nodiscard]] std::int64_t ops(KeeperClient client) const {
    return ops_by_client_[static_cast<std::size_t>(client)];
  }
  [[nodiscard]] std::int64_t failed_requests() const { return failed_requests_; }
  [[nodiscard]] double peak_in_flight() const { return peak_in_flight_; }
  // Time-weighted mean of the in-flight requests since time 0.
  [[nodiscard]] double mean_in_flight(sim::Time now);
  // Peak of arrivals / capacity over whole seconds (above 1: a backlog grows).
  [[nodiscard]] double peak_utilisation() const { return peak_utilisation_; }
  [[nodiscard]] double in_flight(sim::Time now);
  // Time in Keeper of every request of request(), in microseconds.
  [[nodiscard]] const sim::Histogram& latency_histogram() const { return latency_us_; }

 private:
  // The steady-state figures for the current arrival rate and capacity;
  // recomputed whenever either changes (not per request).
  struct Steady {
    double lambda = 0;      // arrivals per second
    double mu = 1;          // capacity per second
    double rho = 0;         // lambda / mu, capped below 1
    double service_s = 0;   // E[S]
    double queueing_s = 0;  // Pollaczek-Khinchine E[Wq]
    double time_s = 0;      // round trip + E[S] + E[Wq]
    double served = 0;      // min(lambda, mu)
  };
  struct Stream {
    double rate = 0;  // requests per second
    sim::Time until = sim::Time::max();
    KeeperClient client = KeeperClient::INSERTS;
    bool sampled = false;
  };
  void refresh();
  void advance(sim::Time now);
  // Integrates [last_, to) at the current state (no window closes inside).
  void integrate(sim::Time to);
  void close_window();
  [[nodiscard]] bool streaming() const;
  void flush_samples();
  void count(std::int64_t requests, KeeperClient client);
  [[nodiscard]] double current_in_flight() const;

  KeeperOptions options_;
  sim::RandomStream queue_stream_;
  double capacity_;
  double capacity_factor_ = 1.0;
  double extra_ops_per_s_ = 0.0;
  double backlog_ = 0.0;  // requests waiting beyond the steady-state queue
  sim::Time last_{};
  sim::Time unavailable_until_{};
  bool now_unavailable_ = false;  // as of last_
  // Our own request rate, measured over whole seconds.
  sim::Time window_start_{};
  double window_ops_ = 0.0;
  double own_rate_ = 0.0;
  std::int64_t ops_ = 0;
  std::array<std::int64_t, static_cast<std::size_t>(KeeperClient::COUNT)> ops_by_client_{};
  std::array<double, static_cast<std::size_t>(KeeperClient::COUNT)> stream_carry_{};
  std::vector<Stream> streams_;
  double sampled_pending_ = 0;  // streamed requests not yet in the histogram
  std::int64_t failed_requests_ = 0;
  double peak_in_flight_ = 0.0;
  double in_flight_integral_ = 0.0;  // request-seconds
  double peak_utilisation_ = 0.0;
  sim::Histogram latency_us_;
  Steady steady_;
};

}  // namespace pipesim::keeper
