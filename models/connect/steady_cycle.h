// A caught-up sink task's steady state: how often it puts, how many records
// a put carries, how long its inserts take (the aggregate's rates).
//
// A caught-up task does one put per poll, and a poll returns what the
// pipelined fetches brought while the previous put ran (Fetcher): a batch is
// what arrived during about one cycle, and the cycle is the put's inserts
// (and, with exactlyOnce, its KeeperMap queries). At low rates a fetch often
// finds nothing and waits at the broker for the first record, which makes
// the next batches smaller still. There is no closed form for that chain, so
// it is run here: the real Fetcher on Poisson arrivals, the insert's real
// cost function, many cycles (with the lognormal factor stratified), once
// per (partitions, rate, layout) and cached. The result is a property of the
// config, not of a seed: the same for every seed (its Monte Carlo error,
// ~0.1%, is declared in the README and bounded by tests against the exact
// path).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "models/connect/fetcher.h"
#include "sim/engine/time.h"

namespace pipesim::connect {

struct SteadyInputs {
  std::vector<int> leaders;        // the broker leading each of the task's partitions
  double rate_per_partition = 0;   // records/s
  bool evenly_spaced = false;      // workload.arrivals "fixed" (else Poisson)
  FetchSettings fetch;
  std::int64_t max_poll_records = 500;
  // An insert: local work (base + per row) x a lognormal factor, then its
  // Keeper requests one after another, then (insert_quorum) the wait for
  // the other replicas.
  sim::Time insert_base = sim::Time::millis(15);
  sim::Time insert_per_row = sim::Time::micros(20);
  double insert_sigma = 0.25;
  sim::Time keeper_request = sim::Time::micros(1025);  // mean time of one Keeper read
  // What a write adds (Raft's commit), and how many of the requests below are writes.
  sim::Time keeper_commit{};
  int keeper_requests_per_insert = 2;
  int keeper_writes_per_insert = 2;
  // insert_quorum: the wait until the other replicas have the part, their
  // fetch and their Keeper requests (0: no quorum).
  sim::Time quorum_fetch = sim::Time{};
  int quorum_keeper_requests = 0;
  int quorum_keeper_writes = 0;
  // exactlyOnce: the KeeperMap queries of a partition's batch (read, then
  // BEFORE and AFTER writes), in Keeper requests.
  int keeper_map_requests = 0;
  int keeper_map_writes = 0;
  // What the queries cost besides the server's storage work
  // (clickhouse/query_path.h): the server's per-query overhead of an insert
  // (part of its server time), the insert's connection set-up and round trip
  // (the client's only), and all of that for the batch's three state queries.
  sim::Time insert_overhead{};
  sim::Time insert_path{};
  sim::Time keeper_map_fixed{};
};

struct SteadyCycle {
  double inserts_per_s = 0;    // of the task
  double cycle_s = 0;          // mean time from one put to the next
  double rows_per_insert = 0;
  // Records put a second, by the task's partitions (in the order of
  // SteadyInputs::leaders).
  std::vector<double> rows_per_s;
  // How far behind the visible records the put position is, on average: the
  // put position at t is about the high watermark at t - position_age_s.
  double position_age_s = 0;
  double keeper_requests_per_s = 0;  // its inserts' and KeeperMap queries'
  double keeper_map_queries_per_s = 0;
  // d(inserts_per_s) per microsecond more per Keeper request (< 0).
  double inserts_per_s_per_keeper_us = 0;
  // No put came near max.poll.records or a fetch cap: the task keeps up.
  bool caught_up = true;
  // An insert's time at the server (its Keeper requests included), us, at the midpoints of 1000 equal
  // probability strata.
  static constexpr std::size_t kLatencyStrata = 1000;
  std::array<std::int64_t, kLatencyStrata> insert_latency_us{};
};

// Deterministic: runs the chain with a fixed internal seed.
SteadyCycle steady_cycle(const SteadyInputs& in);
// The same, computed once per distinct input in the process (thread-safe).
const SteadyCycle& steady_cycle_cached(const SteadyInputs& in);

// A lagging task's cycle: every partition has more records than a poll
// takes (a backlog after a fault, or arrivals above what the task can put),
// so every poll is full and the task puts as fast as its inserts allow. The
// same chain (the real Fetcher, the insert's cost) on arrivals at
// kSaturatedRate; in.rate_per_partition and in.evenly_spaced are ignored.
// rows_per_s is then the task's capacity, position_age_s meaningless.
inline constexpr double kSaturatedRate = 1e9;  // records/s a partition
const SteadyCycle& lagging_cycle_cached(const SteadyInputs& in);

// The inverse standard normal distribution function (Acklam's rational
// approximation, relative error < 1.2e-9). REQUIRES: 0 < p < 1.
double inverse_normal(double p);

}  // namespace pipesim::connect
