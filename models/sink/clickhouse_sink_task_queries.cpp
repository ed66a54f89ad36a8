// How the sink's task sends its queries to ClickHouse: the client and
// connection of each kind of query (client_version), and its KeeperMap state
// queries (clickhouse/keeper_map_table.h).
#include "models/sink/clickhouse_sink_task.h"

#include "sim/engine/invariant.h"

namespace pipesim::sink {

clickhouse::ClientPath ClickHouseSinkTask::client_path(Query query) const {
  // v1.3.9: client_version V1 (the default; any other value is V2) builds a
  // client, and with clickhouse-java 0.9.x a connection and a TLS handshake,
  // per query. V2 keeps one client per task: inserts and state writes reuse
  // its connections; KeeperStateProvider.getStateRecord always builds a V1
  // client, and the start's pings and queries go through
  // ClickHouseHelperClient's V1 client too.
  const bool v2 = deps_.options->client_version == "V2";
  clickhouse::ClientPath path;
  path.new_connection = !v2 || query == Query::STATE_READ || query == Query::HELPER;
  path.tls = deps_.options->ssl;
  path.connect_timeout = deps_.options->connect_timeout;
  return path;
}

void ClickHouseSinkTask::query_keeper_map(Phase next, const StateRecord* write) {
  // KeeperStateProvider: a SELECT or INSERT on the KeeperMap table, a
  // ClickHouse query (clickhouse::KeeperMapTable); its answer, or the
  // client's socket timeout, comes as on_insert_answer().
  PIPESIM_INVARIANT(deps_.keeper_map != nullptr, "exactlyOnce without a KeeperMap table");
  ++deps_.counters->keeper_map_ops;
  phase_ = next;
  insert_token_ = (insert_token_ + 1) & clickhouse::kReplyTokenMask;
  clickhouse::KeeperMapRequest request;
  request.write = write != nullptr;
  request.key = batch_[index_].partition;
  if (write != nullptr) {
    request.row = clickhouse::KeeperMapRow{static_cast<std::uint8_t>(write->state),
                                           write->range.min, write->range.max};
  }
  request.path = client_path(write != nullptr ? Query::STATE_WRITE : Query::STATE_READ);
  request.socket_timeout = deps_.options->socket_timeout;
  request.reply = host_.insert_reply_address();
  request.reply_token = insert_token_;
  deps_.keeper_map->send(request);
}

}  // namespace pipesim::sink
