// What a client sees at the end of a query to ClickHouse: success, a
// ClickHouse error code, or nothing before its socket timeout. Every error
// here is in the sink's retriable list (Utils.handleException, v1.3.9).
#pragma once

#include <cstdint>
#include <string_view>

namespace pipesim::clickhouse {

enum class QueryStatus : std::uint8_t {
  OK,
  DEDUPLICATED,              // an insert answered from the block ids: success, nothing written
  CLIENT_TIMEOUT,            // no answer within the client timeout (socket timeout)
  TIMEOUT_EXCEEDED,          // 159: the server gave up on the insert (insert_timeout that never commits)
  NETWORK_ERROR,             // 210: the replica is down (connection refused or reset)
  TABLE_IS_READ_ONLY,        // 242: the replica lost its Keeper session
  TOO_FEW_LIVE_REPLICAS,     // 285: fewer active replicas than insert_quorum
  UNKNOWN_STATUS_OF_INSERT,  // 319: Keeper failed during the commit (the part stays if Keeper has
                             // it), or the quorum wait timed out (the part stays)
  KEEPER_EXCEPTION,          // 999: Keeper unreachable through all retries
  TOO_MANY_PARTS,            // 252: the partition has parts_to_throw_insert active parts
  COUNT,
};

constexpr bool succeeded(QueryStatus s) {
  return s == QueryStatus::OK || s == QueryStatus::DEDUPLICATED;
}

// Metric suffix, e.g. "table_is_read_only_242".
std::string_view to_string(QueryStatus s);

}  // namespace pipesim::clickhouse
