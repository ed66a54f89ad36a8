// What a client sends the replicated table and how it hears back: the
// insert request (its records, block id, deadline, connection path), the
// reply address and its packed outcome, a short query's answer, and the
// hook through which the table asks for the inserts advanced in aggregate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/clickhouse/block_id.h"
#include "models/clickhouse/query_path.h"
#include "models/clickhouse/query_status.h"
#include "models/ledger/copy_cause.h"
#include "sim/engine/simulation.h"

namespace pipesim::clickhouse {

// Where the table sends the client's outcome: an event of `event_type` to
// `component`, whose arg is encode_reply(token, status).
struct ReplyAddress {
  sim::ComponentId component = 0;
  std::uint32_t event_type = 0;
};

inline constexpr std::uint32_t kReplyTokenMask = 0x0FFFFFFFu;
constexpr std::uint32_t encode_reply(std::uint32_t token, QueryStatus status) {
  return ((token & kReplyTokenMask) << 4) | static_cast<std::uint32_t>(status);
}
constexpr std::uint32_t reply_token(std::uint32_t arg) { return arg >> 4; }
constexpr QueryStatus reply_status(std::uint32_t arg) {
  return static_cast<QueryStatus>(arg & 0xFu);
}

// Further records of the same INSERT statement: the records a v1.3.9 buffer
// holds twice (a batch put again after a failed flush is appended again), or
// the other partitions of a topic-wide insert (ignorePartitionsWhenBatching).
struct InsertRange {
  int partition = 0;
  std::int64_t first_offset = 0;
  std::int64_t last_offset = -1;
  ledger::InsertTag tag = ledger::InsertTag::NORMAL;
};

struct InsertRequest {
  int partition = 0;
  std::int64_t first_offset = 0;  // records inserted: [first_offset, last_offset]
  std::int64_t last_offset = 0;
  BlockId block;  // from the insert_deduplication_token; the table sets table_partition
  ledger::InsertTag tag = ledger::InsertTag::NORMAL;
  sim::Time client_timeout = sim::Time::seconds(30);
  ReplyAddress reply;
  std::uint32_t reply_token = 0;
  std::vector<InsertRange> also{};  // and these, in the same block (usually none)
  const std::string* client =
      nullptr;        // the sending task's name ("task-3"), for the trace's tracks
  ClientPath path{};  // how the client connects (query_path.h)
};

// A short query (a ping, SELECT version()) answered synchronously.
struct QueryAnswer {
  sim::Time latency;
  QueryStatus status = QueryStatus::OK;
};

// Inserts advanced in aggregate (models/pipeline/sink_aggregate.h): the
// table asks for them to be counted up to now before it looks at its block
// ids or its cleanup threads' work.
class AggregateInserts {
 public:
  virtual ~AggregateInserts() = default;
  virtual void materialize(sim::Time now) = 0;
};

}  // namespace pipesim::clickhouse
