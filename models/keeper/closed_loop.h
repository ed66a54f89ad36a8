// Keeper's leader and the threads that wait on it: a closed queueing network
// (docs/model.md §4.6: every request comes from a ClickHouse thread that waits for its
// answer before it sends the next, so the load cannot outgrow the threads).
//
// The model is the machine-repairman (finite-source) queue: N client threads,
// each away from the leader for a mean time D (its own work between requests,
// plus the network round trip and fsync), then queued at one FCFS server with
// exponential service of rate mu. It has a product-form stationary
// distribution of the number n of requests at the leader,
//     P_N(n) ∝ N! / (N - n)! * (1 / (mu D))^n,   n = 0..N,
// which holds for any distribution of the away time (insensitivity of delay
// stations), and by the arrival theorem (Lavenberg-Reiser, Sevcik-Mitrani) a
// request on its way in sees P_{N-1}. Throughput X = mu (1 - P_N(0)); mean
// time at the leader of a request (E_{N-1}[n] + 1) / mu.
//
// Several classes of clients (the background threads, a runaway client of a
// fault) are folded into one whose away time gives the same total throughput
// at the operating point: a fixed point of X = sum N_k / (D_k + R) solved in
// a few iterations (exact for one class; for several it is the usual
// aggregation, stated in the README).
//
// Cost: per solve (a regime change) a bisection over distributions kept on
// the window around their mode (O(sqrt N) or O(1 / (1 - rho)) wide); a draw
// is a binary search.
#pragma once

#include <cstdint>
#include <vector>

namespace pipesim::keeper {

struct ClientClass {
  std::int64_t threads = 0;
  double away_s = 0;  // mean time between an answer and the next request, round trip included
};

class ClosedLoop {
 public:
  // The stationary state of `classes` at service rate `mu` (requests/s),
  // plus `open_rate` requests/s from senders outside the threads (folded in
  // as more throughput of the same threads: the in-flight bound stays N).
  void solve(double mu, const std::vector<ClientClass>& classes, double open_rate = 0);

  // The away time D that makes `threads` clients send `throughput` requests/s
  // to a server of rate mu (bisection on the exact throughput). REQUIRES:
  // 0 < throughput < mu; returns 0 when even D = 0 falls short.
  static double away_for_throughput(double mu, std::int64_t threads, double throughput);
  // Throughput of one class of `threads` clients away `away_s` each.
  static double throughput_of(double mu, std::int64_t threads, double away_s);

  [[nodiscard]] std::int64_t threads() const { return threads_; }
  [[nodiscard]] double mu() const { return mu_; }
  [[nodiscard]] double away_s() const { return away_s_; }
  // The away time of the classes' threads alone at the operating point
  // (away_s() also folds in the open rate): how fast they come back to a
  // leader that serves none of them (a stall, a burst ahead of them), while
  // the senders behind the open rate wait for their own answers.
  [[nodiscard]] double threads_away_s() const { return threads_away_s_; }
  [[nodiscard]] double throughput() const { return throughput_; }
  // Time-average number at the leader (queued or in service); also the mean
  // number ahead of a request of this pipeline, which comes from a thread
  // outside the N and so sees the time average (arrival theorem).
  [[nodiscard]] double mean_at_leader() const { return mean_at_leader_; }
  // The number ahead of an arriving request at quantile u in [0, 1).
  [[nodiscard]] std::int64_t ahead(double u) const;
  // The mean-field limit of the number at the leader: N - mu D when the
  // clients offer more than the leader serves, else 0.
  [[nodiscard]] double fluid_limit() const;
  // What the clients would send if answered at once, over the capacity.
  [[nodiscard]] double offered_load() const;

 private:
  double mu_ = 1;
  std::int64_t threads_ = 0;
  double away_s_ = 0;
  double threads_away_s_ = 0;
  double offered_ = 0;
  double throughput_ = 0;
  double mean_at_leader_ = 0;
  std::int64_t seen_first_ = 0;   // the window of n the distribution keeps
  std::vector<double> seen_cdf_;  // P_N(n <= seen_first_ + k)
};

}  // namespace pipesim::keeper
