// ClickHouse Keeper as the server of a closed loop of ClickHouse threads (docs/model.md §4.6). `session_timeout_ms`
// and `operation_timeout_ms` are the real <zookeeper> client settings of a
// ClickHouse server; the rest are model parameters.
#pragma once

#include <cstdint>

#include "sim/config/options.h"
#include "sim/engine/time.h"

namespace pipesim::keeper {

struct KeeperOptions {
  // A healthy request's round trip between a ClickHouse server and the
  // Keeper node it is connected to (25.x serves reads on that node,
  // KeeperServer::putLocalReadRequest, once the node's writes before them
  // have committed: Keeper::read_wait). 0.3 ms:
  // a round trip within a zone; Keeper's gets measured 0.12 ms at p10 on one
  // node (ClickHouse PR #23038) and 0.42 ms at p50 under a mixed load (PR #56626).
  sim::Time latency = sim::Time::micros(300);
  // What a write adds (create, remove, set, a multi with any of them): the
  // node forwards it to the leader, which appends it to its changelog and
  // fsyncs (force_sync, Changelog::writeThread) while a follower does the
  // same (parallel_log_appending), and commits at 2 of 3. The leader's request
  // thread goes on batching meanwhile (KeeperDispatcher: batches of <= 100),
  // so this is time in flight, not the leader's service. 1.4 ms: the forward
  // to the leader (~0.2 ms) and the slower of the leader's fsync and a
  // follower's append round trip (~0.2 ms) plus its fsync, an fsync being
  // ~1 ms on cloud SSD ("under 2 ms" on a healthy SSD: Netdata's ZooKeeper
  // guides; a 2 ms median on a VM: eBay/NuRaft issue #267, Keeper's Raft).
  sim::Time commit_latency = sim::Time::micros(1400);
  // The share of the background threads' requests that are writes: 1/3,
  // RaftKeeper's keeper-bench profile of ClickHouse's ReplicatedMergeTree
  // traffic (15,000 writes/s beside 30,000 reads/s; JDRaftKeeper/RaftKeeper PR #408).
  double background_write_share = 1.0 / 3.0;
  // Requests per second the leader can serve (1 / mean service time).
  std::int64_t capacity_ops_per_s = 40000;
  // Coefficient of variation of the service time: 1 is exponential (the
  // closed loop's product form is exact), 0 deterministic; the number ahead
  // of a request comes from the exponential model either way.
  double service_time_cv = 1.0;
  // Load from everything but this pipeline's inserts (merges, fetches,
  // schedule-pool tasks of every table): sent by background_clients threads
  // that each wait for an answer before the next request. Healthy, they send
  // 10,000 requests/s at ~1 ms: ~10 requests in flight (Little's law), the
  // 5-15 production sees; this pipeline's own ~8,000/s of a caught-up sink
  // at the day's mean rate come on top (17 on average over a production day).
  std::int64_t background_ops_per_s = 10000;
  // The threads behind it: 3 servers (the table's replicas) x 576, the pools
  // of a ClickHouse 25.3 server whose tasks talk to Keeper
  // (ServerSettings.cpp: background_schedule_pool_size 512,
  // background_fetches_pool_size 16, background_pool_size 16 x
  // background_merges_mutations_concurrency_ratio 2, background_common_pool_size 8,
  // background_move_pool_size 8). In-flight requests can never exceed them.
  std::int64_t background_clients = 1728;
  // Reads over a vector of paths (zkutil's exists/get/tryGet over many, the
  // cleanup thread's stat of its new block ids): against ClickHouse Keeper,
  // which advertises the MULTI_READ feature flag (KeeperContext's
  // constructor turns it on), ZooKeeper::multiRead sends one MultiRead
  // request of all the paths, one request in flight; Keeper serves it as one
  // read (ZooKeeperMultiRequest::isReadRequest), its sub-reads one after
  // another. Against Apache ZooKeeper (false) it sends an async request per
  // path, all at once.
  bool multi_read = true;
  // What a sub-read costs the server: 774,000/s is 1 / 1,292 ns, the
  // KeeperStorage processing time of a get measured by keeper-bench's
  // storage mode (ClickHouse PR #103081; a multiread request took 1,321 ns).
  // A keeper_backlog's capacity_factor slows it as it slows every request.
  std::int64_t multi_read_sub_reads_per_s = 774000;
  // ClickHouse's Keeper client: a session that cannot reach Keeper for this
  // long expires (tables go read-only); a request unanswered for
  // operation_timeout_ms fails and finalizes the session.
  sim::Time session_timeout = sim::Time::seconds(30);
  sim::Time operation_timeout = sim::Time::seconds(10);
  // How often a dashboard reads Keeper's in-flight requests (a scrape of
  // ClickHouse's ZooKeeperRequest metric, the Prometheus example
  // configuration's scrape_interval of 15 s): the keeper_in_flight_sampled_*
  // metrics are what it would show, beside the true mean and peak.
  sim::Time sample_interval = sim::Time::seconds(15);
};

// The background threads' least mean round trip: a read's, and a write's
// Raft commit for their share of writes (reads wait for their node's writes
// on top: Keeper::threads_round_trip).
inline sim::Time threads_round_trip(const KeeperOptions& o) {
  return o.latency + sim::Time{static_cast<std::int64_t>(static_cast<double>(o.commit_latency.us) *
                                                         o.background_write_share)};
}

template <class V, class O>
void visit(V& v, O& o) requires std::is_same_v<std::remove_const_t<O>, KeeperOptions> {
  v.duration("latency", o.latency, sim::Time::micros(1), sim::Time::minutes(1),
             "model: a request's round trip to the connected Keeper node, before queueing (a read "
             "also waits for its node's writes to commit)");
  v.duration(
      "commit_latency", o.commit_latency, sim::Time{}, sim::Time::minutes(1),
      "model: what a write adds: forwarded to the leader, changelog fsync, Raft commit at 2 of 3");
  v.real("background_write_share", o.background_write_share, 0.0, 1.0,
         "model: the share of the background threads' requests that are writes");
  v.integer("capacity_ops_per_s", o.capacity_ops_per_s, 1, 100000000,
            "model: requests per second the leader serves");
  v.real("service_time_cv", o.service_time_cv, 0.0, 10.0,
         "model: coefficient of variation of the service time (1: exponential, 0: constant)");
  // Below capacity_ops_per_s (config.cpp), so one less than its largest value at most.
  v.integer("background_ops_per_s", o.background_ops_per_s, 0, 99999999,
            "model: requests per second from other work when Keeper is healthy");
  v.integer("background_clients", o.background_clients, 0, 1000000,
            "model: ClickHouse threads behind the background load, each waiting for its answer");
  v.boolean("multi_read", o.multi_read,
            "Keeper's MULTI_READ feature: a read over many paths is one MultiRead request (false: "
            "one each, as ZooKeeper)");
  v.integer("multi_read_sub_reads_per_s", o.multi_read_sub_reads_per_s, 1, 1000000000,
            "model: sub-reads of a MultiRead the server does per second (KeeperStorage's get, PR "
            "#103081)");
  v.millis("session_timeout_ms", o.session_timeout, 1, 3600000,
           "ClickHouse's Keeper session timeout: unreachable this long, the session expires");
  v.millis("operation_timeout_ms", o.operation_timeout, 1, 3600000,
           "a request unanswered this long fails and finalizes the ClickHouse server's session");
  v.duration("sample_interval", o.sample_interval, sim::Time::seconds(1), sim::Time::hours(24),
             "model: a dashboard's scrape interval; keeper_in_flight_sampled_* are its readings");
  v.finish();
}

}  // namespace pipesim::keeper
