// ClickHouse Keeper as a queueing server (SPEC §4.6; model parameters).
#pragma once

#include <cstdint>

#include "sim/config/options.h"
#include "sim/engine/time.h"

namespace pipesim::keeper {

struct KeeperOptions {
  // A healthy request's round trip (network + log fsync), ~1 ms; the time
  // spent waiting in the leader's queue comes on top.
  sim::Time latency = sim::Time::millis(1);
  // Requests per second the leader can serve.
  std::int64_t capacity_ops_per_s = 40000;
  // Load from everything but this pipeline's inserts (replication, merges,
  // other tables): 10,000 requests/s at ~1 ms keep ~10 requests in flight
  // (Little's law), the 5-15 production sees.
  std::int64_t background_ops_per_s = 10000;
};

template <class V, class O>
void visit(V& v, O& o) requires std::is_same_v<std::remove_const_t<O>, KeeperOptions> {
  v.duration("latency", o.latency, sim::Time::micros(1), sim::Time::minutes(1),
             "model: healthy request round trip (network + fsync), before queueing");
  v.integer("capacity_ops_per_s", o.capacity_ops_per_s, 1, 100000000,
            "model: requests per second the leader serves");
  v.integer("background_ops_per_s", o.background_ops_per_s, 0, 100000000,
            "model: requests per second from other work");
  v.finish();
}

}  // namespace pipesim::keeper
