// ClickHouse Keeper's leader and the ClickHouse threads that use it (docs/model.md
// §4.6): a closed loop, models/keeper/closed_loop.h.
//
// The background is `background_clients` threads of the servers sharing
// this Keeper (background pools of bounded size, schedule-pool tasks,
// fetches, merges), each waiting for its answer before it sends the next;
// their away time is set so that, healthy, they send background_ops_per_s. A
// keeper_backlog fault lowers the capacity and/or adds a named client of its
// own threads (a runaway mutation, a replica re-syncing). So in-flight stays
// below the threads' number, latency grows with the queue, and background
// work slows down as it does.
//  - In a steady regime a request of this pipeline sees the stationary number
//    ahead of it (drawn from the exact distribution) and waits for their
//    service and its own.
//  - When the regime changes the queue moves to its new level by the
//    mean-field equation dF/dt = (N - F) / D - mu (time constant D, the away
//    time; a saturated leader drains at mu - N / D): the stationary draw is
//    displaced by what is left of that transient.
//  - Keeper's latency histogram holds every request it serves: ours one by
//    one, the background's and our aggregate streams' as quantile strata of
//    the regime's distribution weighted by their throughput.
// This pipeline's own load shapes the queue as the rate of its aggregate
// streams (a healthy stretch advanced in aggregate: inserts, fetches,
// KeeperMap queries), folded in as more throughput of the threads. In an
// explicit stretch (a fault, a recovery) its requests are a handful of
// threads (tasks, fetch pools, cleanup) among the background's thousands:
// they see the queue but are not added to it (README, model limits).
//
// Bursts (models/keeper/keeper_bursts.cpp): a thread that sends many requests
// at once and then awaits them all (zkutil's async calls: the cleanup
// thread's exists() over new block ids and asyncTryRemove per outdated one)
// puts them in the leader's queue behind what is there; the leader serves
// them one after another, and the threads' requests that arrive meanwhile
// wait behind them (for the threads the leader is held, as in a stall).
// They are in flight from the moment they are sent until answered.
//
// Reads and writes: a read is a round trip to the node the server is
// connected to, after the node's writes before it have committed (their
// mean residual, read_wait()); a write is forwarded to the leader and
// answered once Raft has committed it (commit_latency on top). Both are
// served by the one queue here (every node's request thread as one).
//
// Sessions (models/keeper/keeper_sessions.cpp): every server's threads queue
// here, so when a thread's request would wait past operation_timeout_ms every
// server's session ends (threads_time_out_at); a server without a session
// sends nothing, and the requests its threads had queued are served for no
// one ahead of what comes after. In flight is also kept per server, as
// ClickHouse's ZooKeeperRequest shows it (models/keeper/keeper_in_flight.cpp).
//
// Faults: a degradation (keeper_backlog), unavailability (keeper_election:
// no leader; every request fails at once with a connection loss, and the old
// leader's queue is dropped, until the new leader is elected) and a stall
// (keeper_stall: the leader answers nothing for a while, a long fsync or a GC
// pause; requests queue, the threads pile up at it, dF/dt = (N - F) / D, and
// once it ends the queue drains as after any regime change).
//
// Cost: O(1) per request (a binary search and a few uniforms); O(N) per
// regime change; O(bursts in flight, a handful) per advance; no events of
// its own.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include "models/keeper/closed_loop.h"
#include "models/keeper/keeper_answer.h"
#include "models/keeper/keeper_options.h"
#include "models/keeper/keeper_time.h"
#include "sim/engine/histogram.h"
#include "sim/engine/random.h"
#include "sim/engine/time.h"

namespace pipesim::keeper {

class Keeper {
 public:
  Keeper(const KeeperOptions& options, std::uint64_t seed);

  // `requests` sent one after another from `now` (each waits for the
  // previous answer), the last `writes` of them writes (Raft's commit on
  // top; a read waits for its node's writes). Fails at once while there is no leader; fails after
  // operation_timeout_ms when a request is not answered by then.
  // `server`: the ClickHouse server whose session sends them (set_servers);
  // -1: spread over every server (requests of several, or none set).
  KeeperAnswer request(sim::Time now, int requests, KeeperClient client, int server = -1,
                       int writes = 0);
  // Requests whose answer times the model does not follow (replication,
  // cleanup, a thread sending them one after another): counted, and in
  // flight `senders` at a time (each sender's one after another), each for
  // a request's expected time.
  // `writes` of them are writes.
  void add_load(sim::Time now, std::int64_t requests, KeeperClient client, std::int64_t senders = 1,
                int server = -1, std::int64_t writes = 0);
  // `requests` sent at once by one thread that then awaits them all: they
  // queue behind the requests at the leader now, are served one after another
  // (the leader holds every other request meanwhile) and answered at an even
  // pace (writes each commit_latency later: the leader goes on serving while
  // Raft commits them). A burst sent while another is being served joins it.
  // Returns when the last answer arrives, from `now`; fails at once without a leader.
  struct BurstAnswer {
    bool ok = true;
    sim::Time done{};
    // How long it holds the leader (the others' requests wait behind it).
    sim::Time held{};
  };
  BurstAnswer burst(sim::Time now, std::int64_t requests, KeeperClient client, int server,
                    bool writes);
  // A read over `paths` paths sent at once (zkutil's vector exists/get):
  // with options().multi_read one MultiRead request that holds the leader
  // for its sub-reads and is answered whole; otherwise a burst of one read
  // per path.
  BurstAnswer multi_read(sim::Time now, std::int64_t paths, KeeperClient client, int server = -1);
  // A steady stream of requests at `ops_per_s` from now on (a healthy stretch
  // advanced in aggregate): counted, served with the threads' (a new regime).
  // Returns its handle; set_stream() changes its rate (0 stops it).
  int add_stream(sim::Time now, KeeperClient client);
  void set_stream(int stream, sim::Time now, double ops_per_s);
  // The mean time of one read now (no draw).
  [[nodiscard]] sim::Time expected_request_time(sim::Time now);
  // Of `requests` sent one after another from now, `writes` of them writes:
  // a held leader keeps the first until it is free, the others see the
  // queue it leaves.
  [[nodiscard]] sim::Time expected_chain_time(sim::Time now, std::int64_t requests,
                                              std::int64_t writes);
  // The mean time of one read now, leaving out a hold under way (a write
  // takes write_extra() more).
  [[nodiscard]] sim::Time unheld_request_time(sim::Time now);
  // The mean time of one read in the regime's stationary state: no hold,
  // no transient (what a stretch advanced in aggregate is priced with; the
  // bursts' holds are priced apart, by the share of time they hold the leader).
  [[nodiscard]] sim::Time regime_request_time() const {
    return round_trip(false) + to_time((loop_.mean_at_leader() + 1) / loop_.mu());
  }
  // Of `requests` sent one after another in that stationary state, `writes`
  // of them writes: what a chain of a stretch advanced in aggregate takes.
  [[nodiscard]] sim::Time regime_chain_time(std::int64_t requests, std::int64_t writes) const {
    return regime_request_time() * requests +
           write_extra() * std::clamp<std::int64_t>(writes, 0, requests);
  }
  // What a write takes more than a read: its commit, less the read's wait.
  [[nodiscard]] sim::Time write_extra() const { return round_trip(true) - round_trip(false); }
  // The mean wait before a request is served now.
  [[nodiscard]] sim::Time expected_wait(sim::Time now);

  [[nodiscard]] bool available(sim::Time now) const { return now >= unavailable_until_; }
  // The leader serves no thread's request at `at`: a stall, or a burst ahead of them.
  [[nodiscard]] bool held(sim::Time at) const { return stalled(at) || busy(at); }
  // A leader, full capacity, no extra client, no transient left.
  [[nodiscard]] bool healthy(sim::Time now) const;
  [[nodiscard]] sim::Time unavailable_until() const { return unavailable_until_; }

  // keeper_backlog: capacity scaled by `factor`, plus an extra client.
  void set_degradation(sim::Time now, double capacity_factor, const ExtraClient& extra);
  // keeper_election: no leader from now until `until`.
  void set_unavailable(sim::Time now, sim::Time until);
  // keeper_stall: the leader answers nothing from now until `until`.
  void set_stalled(sim::Time now, sim::Time until);
  // Sessions (keeper_sessions.cpp). The share of the background's threads
  // whose server has a Keeper session: a server whose session ended sends
  // nothing until its restarting thread has a new one, nor does a crashed one.
  void set_session_share(sim::Time now, double share);
  [[nodiscard]] double session_share() const { return session_share_; }
  // The ClickHouse servers the background threads belong to, evenly
  // (keeper_in_flight.cpp), each with a session to begin with; and which of
  // them have one now (the others' threads send nothing).
  void set_servers(int servers);
  void set_sessions(sim::Time now, const std::vector<bool>& has_session);
  // ClickHouse's CurrentMetrics::ZooKeeperRequest of each server: the
  // requests its session sent and has not had answered (its share of the
  // threads', this pipeline's it sent, its bursts). The highest any server
  // had at any instant; the largest time-average of a server; every
  // server's dashboard readings (every sample_interval), pooled.
  [[nodiscard]] double server_peak_in_flight() const;
  [[nodiscard]] double busiest_server_mean_in_flight(sim::Time now);
  // If the regime holds: when a request a thread sends from `now` on first
  // goes unanswered for operation_timeout_ms (the moment its session is
  // finalized; every server's threads see the same queue), or Time::max().
  [[nodiscard]] sim::Time threads_time_out_at(sim::Time now);
  [[nodiscard]] bool stalled(sim::Time at) const { return at >= stalled_from_ && at < stalled_until_; }
  [[nodiscard]] sim::Time stalled_from() const { return stalled_from_; }
  [[nodiscard]] sim::Time stalled_until() const { return stalled_until_; }

  [[nodiscard]] const KeeperOptions& options() const { return options_; }
  // Requests of this pipeline that reached a leader.
  [[nodiscard]] std::int64_t ops() const { return ops_; }
  [[nodiscard]] std::int64_t ops(KeeperClient client) const {
    return ops_by_client_[static_cast<std::size_t>(client)];
  }
  // Requests of the background and extra clients served since time 0.
  [[nodiscard]] double background_ops(sim::Time now);
  [[nodiscard]] std::int64_t failed_requests() const { return failed_requests_; }
  [[nodiscard]] double peak_in_flight() const { return peak_in_flight_; }
  // Time-weighted mean of the in-flight requests since time 0: the threads'
  // (the aggregate streams through them) and every request of this pipeline
  // sent one by one, for its time in flight. The peak counts both too.
  [[nodiscard]] double mean_in_flight(sim::Time now);
  // Peak of the load the clients offer over capacity (above 1: the leader
  // saturates and the queue holds most threads).
  [[nodiscard]] double peak_utilisation() const { return peak_utilisation_; }
  [[nodiscard]] double in_flight(sim::Time now);
  // In-flight requests as a dashboard reads them: the value at every
  // multiple of options().sample_interval up to now (the same count as
  // in_flight(): the threads' and this pipeline's own), summed up.
  struct Readings {
    std::int64_t count = 0;
    double sum = 0;
    double min = 0;
    double max = 0;
    sim::Histogram milli;  // each reading in thousandths of a request
  };
  [[nodiscard]] const Readings& in_flight_readings(sim::Time now);
  [[nodiscard]] const Readings& server_readings(sim::Time now);
  // The clients' total concurrency now (the bound on in-flight requests).
  [[nodiscard]] std::int64_t client_threads() const { return loop_.threads(); }
  // Time in Keeper of every request it served, in microseconds; call
  // mean_in_flight(now) first to bring in the strata up to now.
  [[nodiscard]] const sim::Histogram& latency_histogram() const { return latency_us_; }

 private:
  struct Stream {
    double rate = 0;  // requests per second
    KeeperClient client = KeeperClient::INSERTS;
  };
  void solve();
  void advance(sim::Time now);
  // The mean-field number at the leader at `at` >= last_ (no regime change
  // between; a stall under way at last_ ends at stalled_until_).
  [[nodiscard]] double fluid_at(sim::Time at) const;
  // The same from `f` at `from` (no regime change between).
  [[nodiscard]] double fluid_from(double f, sim::Time from, sim::Time at) const;
  // Its integral over [last_, to), `to` no later than the end of a stall under way.
  [[nodiscard]] double fluid_integral(sim::Time to) const;
  [[nodiscard]] double shift_at(sim::Time at) const { return fluid_at(at) - loop_.fluid_limit(); }
  [[nodiscard]] double in_flight_at(sim::Time at) const;
  // All in flight at `at`: the threads', this pipeline's own not yet
  // answered (as of the last drop_answered) and the bursts'.
  [[nodiscard]] double all_in_flight_at(sim::Time at) const {
    return in_flight_at(at) + static_cast<double>(own_in_flight_) + bursts_at(at);
  }
  // Bursts (keeper_bursts.cpp).
  struct Ramp;
  // Queues `work` for the leader behind what is there now; returns when it begins.
  sim::Time take_leader(sim::Time now, sim::Time work);
  // Its requests are in flight until answered along `ramp`.
  BurstAnswer send_burst(sim::Time now, const Ramp& ramp, sim::Time work);
  [[nodiscard]] bool busy(sim::Time at) const { return at >= busy_from_ && at < busy_until_; }
  // The end of the held span `at` lies in (a stall and a burst after it count
  // as one); `at` itself when the leader is not held.
  [[nodiscard]] sim::Time held_end(sim::Time at) const;
  [[nodiscard]] sim::Time hold_left(sim::Time at) const { return held_end(at) - at; }
  // The first start or end of a stall or burst after `at` (Time::max() if none).
  [[nodiscard]] sim::Time next_boundary(sim::Time at) const;
  // Requests of bursts not answered at `at`, and their integral over [from, to).
  [[nodiscard]] double bursts_at(sim::Time at) const;
  [[nodiscard]] double bursts_integral(sim::Time from, sim::Time to) const;
  // The same for server r (a burst sent for no server is spread over them).
  [[nodiscard]] double bursts_at(sim::Time at, std::size_t r) const;
  [[nodiscard]] double bursts_integral(sim::Time from, sim::Time to, std::size_t r) const;
  // A stall from `at` for `d`: the bursts' work left at `at` waits for it.
  void postpone_bursts(sim::Time at, sim::Time d);
  void drop_bursts();
  // The leader's capacity changed: its work on bursts left after now (after
  // a stall under way) takes `factor` times as long.
  void rescale_holds(sim::Time now, double factor);
  // The mean time from sending a thread's request at `at` to its answer.
  [[nodiscard]] sim::Time thread_request_time(sim::Time at) const;
  // The share of an away thread's time spent on the round trip.
  [[nodiscard]] double round_trip_share() const;
  // A request's mean round trip, a read's or a write's (the Raft commit on top).
  [[nodiscard]] sim::Time round_trip(bool write) const {
    return write ? options_.latency + options_.commit_latency : options_.latency + read_wait();
  }
  // A read's wait for the writes its node took before it (ClickHouse Keeper
  // 25.x: KeeperDispatcher::requestThread serves a read only once the write
  // batch before it has committed on the node). The node's writes come at a
  // rate lambda (the threads' writes of the servers connected to it: one
  // server a node), each committing commit_latency c after it came; a read
  // whose last write came A ago (exponential) waits c - A if A < c: on
  // average c - (1 - e^(-lambda c)) / lambda.
  [[nodiscard]] sim::Time read_wait() const { return to_time(read_wait_s_); }
  // A draw of it (for a request followed one by one).
  sim::Time draw_read_wait();
  void update_read_wait();
  double node_write_rate_ = 0;
  double read_wait_s_ = 0;
  // A read's round trip at ten quantiles of its wait (the latency histogram's strata).
  std::array<sim::Time, 10> read_trip_strata_{};
  // The threads' mean round trip (background_write_share of them writes).
  [[nodiscard]] sim::Time threads_round_trip() const;
  // The threads' longest: a write's if any of them are (the first to time out).
  [[nodiscard]] sim::Time threads_slowest_round_trip() const {
    return round_trip(options_.background_write_share > 0);
  }
  // `weight` of the threads' requests that queued for `queued` into the
  // latency histogram, reads and writes in their shares.
  void add_threads_latency(sim::Time queued, std::int64_t weight);
  double threads_writes_carry_ = 0;
  // Sum of the service times of `requests` requests.
  double service_time_s(std::int64_t requests, sim::RandomStream& stream);
  void flush_samples();
  // Keeper's times of the threads' requests that reached a held leader up to `to`.
  void note_held_arrivals(sim::Time to);
  double held_arrivals_carry_ = 0;
  void count(std::int64_t requests, KeeperClient client);

  KeeperOptions options_;
  sim::RandomStream queue_stream_;
  sim::RandomStream burst_stream_;  // the bursts' service times: their own draws
  double capacity_;
  double capacity_factor_ = 1.0;
  ExtraClient extra_;
  ClientClass background_;
  std::int64_t background_threads_ = 0;  // every server's, all with a session
  double session_share_ = 1.0;
  ClosedLoop loop_;
  double fluid_ = 0;  // mean-field number at the leader as of last_
  sim::Time last_{};
  sim::Time unavailable_until_{};
  sim::Time stalled_from_{};
  sim::Time stalled_until_{};
  std::int64_t ops_ = 0;
  std::array<std::int64_t, static_cast<std::size_t>(KeeperClient::COUNT)> ops_by_client_{};
  std::array<double, static_cast<std::size_t>(KeeperClient::COUNT)> stream_carry_{};
  std::vector<Stream> streams_;
  double background_ops_ = 0;
  std::int64_t failed_requests_ = 0;
  double peak_in_flight_ = 0.0;
  double in_flight_integral_ = 0.0;  // request-seconds
  // This pipeline's requests sent one by one and not answered yet: when
  // they will be, and how many (the threads' in-flight does not hold them).
  struct Own {
    sim::Time end;
    std::int64_t count = 0;
    int server = -1;
    bool operator>(const Own& o) const { return end > o.end; }
  };
  std::priority_queue<Own, std::vector<Own>, std::greater<>> own_;
  std::int64_t own_in_flight_ = 0;
  // The leader serves bursts over [busy_from_, busy_until_); their requests
  // are answered at an even pace over [first, last] each (the round trip
  // after the leader's service).
  sim::Time busy_from_{};
  sim::Time busy_until_{};
  struct Ramp {
    sim::Time first;
    sim::Time last;
    double count = 0;
    int server = -1;
    [[nodiscard]] double left_at(sim::Time at) const;
  };
  // Its requests in flight over [from, to), in request-seconds.
  [[nodiscard]] static double ramp_integral(const Ramp& r, sim::Time from, sim::Time to);
  std::vector<Ramp> ramps_;
  Readings readings_;
  sim::Time next_sample_{};
  // The samples due in the segment (last_, to] (before the state moves to `to`).
  void take_samples(sim::Time to);
  void note_own(sim::Time now, sim::Time end, std::int64_t count, int server);
  // Per server (keeper_in_flight.cpp).
  struct Server {
    bool session = true;
    double own = 0;       // this pipeline's requests it sent, unanswered
    double integral = 0;  // request-seconds
    double peak = 0;
  };
  std::vector<Server> servers_;
  std::size_t with_session_ = 0;  // servers with a session
  Readings server_readings_;
  // `amount` more (or less) of `field` (own requests in flight, request-
  // seconds) at `server`, or spread evenly over the servers (-1).
  void spread_to_servers(int server, double amount, double Server::*field);
  // The background threads' share of the threads' in flight (not a fault's extra client).
  [[nodiscard]] double background_share() const;
  // Server r's share of the background threads.
  [[nodiscard]] double server_weight(std::size_t r) const;
  // Server r's in flight at `at`, given the background's then (computed once for all servers).
  [[nodiscard]] double server_at(std::size_t r, sim::Time at, double background) const;
  void note_server_peaks(sim::Time at);
  // ... given the threads' in flight at `at` (a leader is there).
  void note_server_peaks(sim::Time at, double threads_in_flight);
  // Over a segment [from, to) with `threads_integral` request-seconds of the threads'.
  void add_server_segment(sim::Time from, sim::Time to, double threads_integral);
  void take_server_samples(sim::Time at);
  void drop_answered(sim::Time now);
  double peak_utilisation_ = 0.0;
  // Served requests not yet in the histogram, with the transient's mean
  // displacement over their span.
  double pending_served_ = 0;
  double pending_shift_integral_ = 0;
  double pending_span_s_ = 0;
  sim::Histogram latency_us_;
};

}  // namespace pipesim::keeper
