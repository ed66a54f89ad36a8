// What Keeper's callers send and hear back: who sent a request, a chain's
// answer (a failure and, on an operation timeout, when Keeper serves the
// request all the same), and a fault's extra client.
#pragma once

#include <cstdint>
#include <string>

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
  // On an operation timeout: the request that timed out (its index in the
  // chain; the later ones were never sent) and when, from `now`, Keeper
  // serves it all the same: it stays queued there (ZooKeeperImpl finalizes
  // the client's session, not the server's queue).
  int timed_out_request = -1;
  sim::Time served_after{};
};

// A fault's extra client: `threads` threads that each send a request `think`
// after the answer to the previous one (0: at once, a runaway loop).
struct ExtraClient {
  std::string name;
  std::int64_t threads = 0;
  sim::Time think{};
};

}  // namespace pipesim::keeper
