// ClickHouse Kafka Connect sink v1.3.9 properties (docs/model.md §4.4). The section may
// be given flat or as the JSON one POSTs to the Connect REST API
// ({"name": ..., "config": {...}} with string values).
#pragma once

#include <cstdint>
#include <string>

#include "sim/config/options.h"

namespace pipesim::sink {

struct ConnectorOptions {
  std::string name = "clickhouse-sink";
  std::string topics = "events";
  bool exactly_once = false;
  bool tolerate_state_mismatch = false;
  // jdbcConnectionProperties as given, and what pipesim reads from it
  // (models/sink/jdbc_properties.h; set by the config loader).
  std::string jdbc_connection_properties;
  sim::Time socket_timeout = sim::Time::millis(30000);
  std::string errors_tolerance = "none";
  std::string errors_deadletterqueue_topic_name;
  bool errors_deadletterqueue_context_headers_enable = false;
  bool errors_log_enable = false;
  std::int64_t buffer_count = 0;
  sim::Time buffer_flush_time{};  // 0: flush by size only
  bool ignore_partitions_when_batching = false;
  bool report_inserted_offsets = false;
  std::int64_t retry_count = 3;
  std::int64_t timeout_seconds = 30;  // the start check's ping
  // The ClickHouse client (models/clickhouse/query_path.h): "V1" (the
  // default when the key is absent) builds a client and a connection per
  // query, "V2" keeps the task's client and its connections for inserts and
  // state writes (v1.3.9 takes any value but "V1" as V2; pipesim accepts the
  // two names). ssl: HTTPS, a TLS handshake per new connection (the
  // connector's ConfigDef says true but its constructor reads a missing ssl
  // as false; pipesim's default is the baseline's HTTPS on 8443); port only
  // names the endpoint. connect_timeout comes from jdbcConnectionProperties.
  std::string client_version = "V1";
  bool ssl = true;
  std::int64_t port = 8443;
  sim::Time connect_timeout = sim::Time::millis(5000);
};

template <class V, class O>
void visit(V& v, O& o) requires std::is_same_v<std::remove_const_t<O>, ConnectorOptions> {
  v.text("name", o.name, "connector name; its consumer group is connect-<name>");
  v.text("topics", o.topics, "the topic the sink reads");
  v.boolean("exactlyOnce", o.exactly_once, "keep per-partition state in a KeeperMap table");
  v.boolean("tolerateStateMismatch", o.tolerate_state_mismatch,
            "skip a batch that starts before an AFTER_PROCESSING range instead of failing");
  v.text("jdbcConnectionProperties", o.jdbc_connection_properties,
         "URL options of the ClickHouse client (\"?socket_timeout=60000\"); socket_timeout (ms, "
         "default 30000) is how long an insert or a KeeperMap query waits for its answer, "
         "connect_timeout (ms, default 5000) how long a new connection to a dead host waits; "
         "a typo of a client option is refused");
  v.choice("errors.tolerance", o.errors_tolerance, {"none", "all"},
           "none: an error fails the task; all: failed records go to the DLQ or nowhere");
  v.text("errors.deadletterqueue.topic.name", o.errors_deadletterqueue_topic_name,
         "DLQ topic; empty: no DLQ");
  v.boolean("errors.deadletterqueue.context.headers.enable",
            o.errors_deadletterqueue_context_headers_enable, "error context headers on DLQ records");
  v.boolean("errors.log.enable", o.errors_log_enable, "log failed records");
  v.integer("bufferCount", o.buffer_count, 0, 2147483647,
            "records buffered across puts before one insert of them all; commits then cover "
            "flushed records only (refused with exactlyOnce)");
  v.millis("bufferFlushTime", o.buffer_flush_time, 0, 9223372036854LL,
           "with bufferCount: a put also flushes once this long has passed since the last flush "
           "(0: by size only)");
  v.boolean("ignorePartitionsWhenBatching", o.ignore_partitions_when_batching,
            "exactlyOnce off: one insert of all partitions of a put, without state or "
            "deduplication token");
  v.boolean("reportInsertedOffsets", o.report_inserted_offsets,
            "preCommit returns one past the last range each partition inserted (or found "
            "already inserted) instead of the put positions");
  v.integer("retryCount", o.retry_count, 1, 2147483647,
            "attempts of a KeeperMap state write before its error (ClickHouseHelperClient.queryV1; "
            "reads are not retried)");
  v.integer("timeoutSeconds", o.timeout_seconds, 1, 2147483,
            "the ping timeout of a task's start check (ClickHouseHelperClient.ping, retryCount "
            "attempts); inserts and state queries wait socket_timeout");
  v.choice("client_version", o.client_version, {"V1", "V2"},
           "the ClickHouse client: V1 opens a connection per query, V2 reuses the task's "
           "connection for inserts and state writes (state reads always open one)");
  v.boolean("ssl", o.ssl,
            "HTTPS: every new connection costs a TLS handshake (the real connector reads a "
            "missing ssl as false)");
  v.integer("port", o.port, 1, 65535, "the ClickHouse endpoint's port (8443 HTTPS, 8123 HTTP)");
  // Other real keys are accepted and listed as ignored (models/pipeline/real_keys.h).
  v.finish();
}

}  // namespace pipesim::sink
