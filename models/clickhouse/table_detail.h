// What the files of ReplicatedTable (table*.cpp) share: the table's own
// event types and the packing of a slot index with its version into an
// event's argument.
#pragma once

#include <cstdint>

#include "sim/engine/time.h"

namespace pipesim::clickhouse::table_detail {

enum EventType : std::uint32_t {
  kCommit = 1,          // an insert's commit multi is applied (slot)
  kAttempt,             // an insert retries its Keeper requests (slot)
  kFinish,              // an insert's answer leaves the server (slot)
  kCleanup,             // a replica's cleanup thread runs (replica)
  kReplicaUp,           // a crashed replica's server is back (replica)
  kSessionBack,         // a replica's Keeper session is re-established (replica)
  kSessionCheck,        // ReplicatedMergeTreeRestartingThread retries a lost session (replica)
  kSessionLost,         // an operation timeout finalized a replica's session (replica)
  kSessionsExpire,      // a leader election outlasted the session timeout (election)
  kStallExpire,         // a Keeper stall outlasted operation_timeout_ms (stall)
  kConnectTry,          // the restarting thread's next handshake try (replica)
  kSessionStartup,      // the new session is up: tryStartup's requests (replica)
  kWakeCheck,           // the background scheduler's cleanup wake-up check, for aggregated inserts
  kLateCommit,          // a commit multi whose client gave up is applied by Keeper (slot)
  kCleanupRemove,       // a cleanup iteration's reads are answered: it sends its removes (replica)
  kThreadsTimeout,      // the threads' requests outwait operation_timeout_ms (watch)
  kKeeperBack,          // a keeper_election ended: the watch again
  kCleanupPartRemoves,  // the outdated parts' MultiRead is answered: their removes go (replica)
  kCleanupBlocks,  // the parts' removes are answered: clearOldLogs and clearOldBlocks (replica)
};

constexpr std::uint32_t pack(std::uint32_t index, std::uint16_t version) {
  return index | (static_cast<std::uint32_t>(version) << 16);
}
constexpr std::uint32_t index_of(std::uint32_t arg) { return arg & 0xFFFFu; }
constexpr std::uint16_t version_of(std::uint32_t arg) {
  return static_cast<std::uint16_t>(arg >> 16);
}

// A refused or reset connection reaches the client within a network round trip.
constexpr sim::Time kNetworkRoundTrip = sim::Time::millis(1);
// ReplicatedMergeTreeCleanupThread::iterate: a few new parts are merged into
// one, so each inserted part makes ~1.3 outdated parts and log entries.
constexpr double kPartsNumberAmplification = 1.3;

}  // namespace pipesim::clickhouse::table_detail
