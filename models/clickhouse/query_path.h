// What one query of the sink costs outside the server's own work (issue 34):
// the connection, the round trip and ClickHouse's per-query overhead, as
// clickhouse-java and ClickHouse make them cost.
//
//  - A client that does not reuse a connection opens one per query: the TCP
//    handshake (the client sends after one round trip: SYN, SYN-ACK, then
//    the request rides with the ACK) and, over HTTPS, a full TLS 1.3
//    handshake (one more round trip, RFC 8446 §2: ClientHello, then the
//    server's flight; the client's Finished travels with the request) plus
//    the handshake's work on both ends (key exchange, certificate chain
//    verification; a new SSLContext per client means no session resumption).
//    The sink v1.3.9's default client (client_version V1) builds a client,
//    and so a connection, for every insert and every state query
//    (ClickHouseWriter.doInsertRawBinaryV1, ClickHouseHelperClient.queryV1,
//    KeeperStateProvider.getStateRecord); with V2 inserts and state writes
//    go through the task's long-lived client and its pooled keep-alive
//    connection, and only getStateRecord still builds a V1 client.
//  - The request reaches the server half a round trip after it leaves, the
//    answer the client half a round trip after the server sends it.
//  - The server spends `query_overhead` on every query before its storage
//    work (HTTP handler, parsing, analysis, the query log entry).
// A query takes effect at the server (an insert's commit multi, a KeeperMap
// write's multi), not when its answer reaches the client.
#pragma once

#include "models/clickhouse/clickhouse_options.h"
#include "sim/engine/time.h"

namespace pipesim::clickhouse {

// How a client sends one query.
struct ClientPath {
  bool new_connection = true;  // clickhouse-java V1: a client (and connection) per query
  bool tls = true;             // the sink's ssl=true (HTTPS, port 8443)
  // clickhouse-java connect_timeout: how long a connection attempt to a dead
  // host waits before it fails.
  sim::Time connect_timeout = sim::Time::millis(5000);
};

// The parts of a query's time that are not the server's storage work.
struct QueryCosts {
  sim::Time round_trip{};
  sim::Time tls_handshake{};
  sim::Time overhead{};

  static QueryCosts of(const ClickHouseOptions& o) {
    return QueryCosts{o.network_round_trip, o.tls_handshake_work, o.query_overhead};
  }
  // From the client's send to the request on an open connection.
  [[nodiscard]] sim::Time setup(const ClientPath& p) const {
    if (!p.new_connection) return sim::Time{};
    return round_trip + (p.tls ? round_trip + tls_handshake : sim::Time{});
  }
  [[nodiscard]] sim::Time one_way() const { return sim::Time{round_trip.us / 2}; }
  // From the client's send until the server starts the storage work.
  [[nodiscard]] sim::Time to_work(const ClientPath& p) const {
    return setup(p) + one_way() + overhead;
  }
  // What a query costs besides the server's storage work, in all.
  [[nodiscard]] sim::Time fixed(const ClientPath& p) const {
    return to_work(p) + (round_trip - one_way());
  }
};

}  // namespace pipesim::clickhouse
