// ClickHouse replicas and the Replicated(Replacing)MergeTree table (docs/model.md §4.5).
// Real setting names keep their real units; `version` picks the version's
// defaults for the dedup window. Model parameters say "model:".
#pragma once

#include <cstdint>
#include <string>

#include "sim/config/options.h"
#include "sim/engine/time.h"

namespace pipesim::clickhouse {

struct ClickHouseOptions {
  std::string version = "25.3";
  std::int64_t replicas = 3;
  std::string engine = "ReplacingMergeTree";  // ReplacingMergeTree | MergeTree
  // Model: what the table is partitioned by, which decides what FINAL folds
  // (rows with the same sorting key in the same partition) and the block id
  // (the token is hashed with the partition id):
  //  - "event_day": PARTITION BY toYYYYMMDD(event time): every copy of a record
  //    lands in the record's partition, so FINAL folds every duplicate;
  //  - "insert_day": PARTITION BY toYYYYMMDD(insert time): copies inserted on
  //    different (simulated) days stay apart, and so do their block ids;
  //  - "none": one partition.
  std::string partition_by = "event_day";
  // -1: the version's default (100 before 23.11, 1000 up to 25.8, 10000 from 25.9).
  std::int64_t replicated_deduplication_window = -1;
  // -1: the version's default (604800 up to 25.9, 3600 from 25.10).
  std::int64_t replicated_deduplication_window_seconds = -1;
  // ReplicatedMergeTreeCleanupThread (MergeTree settings, seconds).
  std::int64_t cleanup_delay_period = 30;
  std::int64_t max_cleanup_delay_period = 300;
  std::int64_t cleanup_delay_period_random_add = 10;
  std::int64_t cleanup_thread_preferred_points_per_iteration = 150;
  // ReplicatedMergeTreeRestartingThread retries a lost session this often (seconds).
  std::int64_t zookeeper_session_expiration_check_period = 60;
  // Query settings of the inserts.
  std::int64_t insert_quorum = 0;
  sim::Time insert_quorum_timeout = sim::Time::seconds(600);
  // insert_deduplicate (1 in 25.3): 0 writes no block ids at all, so nothing
  // is deduplicated and the window does not fill.
  bool insert_deduplicate = true;
  // async_insert (0 in 25.3; 1 from 26.2) and the two settings that decide
  // its dedup story: refused when on (pipeline/config.cpp), read so that a
  // pasted profile that states the defaults is accepted.
  bool async_insert = false;
  bool async_insert_deduplicate = false;
  bool wait_for_async_insert = true;
  std::int64_t insert_keeper_max_retries = 20;
  sim::Time insert_keeper_retry_initial_backoff = sim::Time::millis(100);
  sim::Time insert_keeper_retry_max_backoff = sim::Time::seconds(10);
  // KeeperMap queries (the sink's exactlyOnce state) retry hardware Keeper
  // errors (connection loss, session expired, operation timeout) on the
  // server: ZooKeeperRetriesControl with the keeper_retry_* settings of
  // 25.3 for reads; writes use the insert_keeper_* settings above.
  std::int64_t keeper_max_retries = 10;
  sim::Time keeper_retry_initial_backoff = sim::Time::millis(100);
  sim::Time keeper_retry_max_backoff = sim::Time::seconds(5);
  // Model: the path between the Connect worker and the service and the
  // server's per-query work (models/clickhouse/query_path.h; README "What a
  // query costs" cites the figures):
  //  - the round trip: a worker and the service in one AWS region, in
  //    different availability zones for 2 of 3 zone pairs; measured cross-AZ
  //    averages 0.82-1.13 ms, plus the service's proxy hop: 1 ms;
  //  - a full TLS handshake's work on both ends: ~6.2 ms for client and
  //    server together in the JDK's own TLS, ~0.8 ms in OpenSSL (conscrypt
  //    issue 247's benchmark): the JDK's half plus OpenSSL's half, 3.5 ms;
  //  - ClickHouse's work per query before its storage work: "single digits of
  //    milliseconds in the best case" for short queries (ClickHouse's
  //    performance docs): the low end, 1 ms.
  sim::Time network_round_trip = sim::Time::micros(1000);
  sim::Time tls_handshake_work = sim::Time::micros(3500);
  sim::Time query_overhead = sim::Time::micros(1000);
  // Model: an insert's server-side work writing its part, before its Keeper
  // requests: base + per-row cost (the connection, round trip and per-query
  // overhead come on top, query_path.h).
  sim::Time insert_base_latency = sim::Time::millis(15);
  sim::Time insert_latency_per_row = sim::Time::micros(20);
  // Model: sigma of the lognormal factor on the local work (the replica's load).
  double insert_latency_sigma = 0.25;
  // Model: a replica fetching a new part from the replica that wrote it
  // (HTTP interserver fetch), on top of its Keeper requests.
  sim::Time replication_fetch_latency = sim::Time::millis(20);
  // Model: Keeper requests of one replica to replicate one part: pull the
  // log (getChildren, get, multi creating the queue entry and moving
  // log_pointer), find the source replica's host, commit the fetched part
  // (multi), check its checksums: 6.
  std::int64_t keeper_requests_per_fetch = 6;
  // Parts and merges (models/clickhouse/merge_tree_parts.h). MergeTree
  // settings of 25.3: an insert into a partition with this many active parts
  // is delayed, or fails with 252 TOO_MANY_PARTS.
  std::int64_t parts_to_delay_insert = 1000;
  std::int64_t parts_to_throw_insert = 3000;
  std::int64_t max_delay_to_insert = 1;  // seconds
  sim::Time min_delay_to_insert = sim::Time::millis(10);
  std::int64_t max_parts_to_merge_at_once = 100;
  // Server settings: merges run in background_pool_size x
  // background_merges_mutations_concurrency_ratio slots.
  std::int64_t background_pool_size = 16;
  std::int64_t background_merges_mutations_concurrency_ratio = 2;
  // Model: SimpleMergeSelector's base (a range needs this many similar parts).
  std::int64_t merge_selector_base = 5;
  // Model: a merge's work on one replica: a fixed cost (a new part's files,
  // fsync), a cost per source part (open its files, read its marks) and the
  // bytes read and written.
  sim::Time merge_base_time = sim::Time::millis(20);
  sim::Time merge_time_per_part = sim::Time::millis(2);
  std::int64_t merge_bytes_per_s = 200000000;
  // Model: Keeper requests of one replica for one merge: pull the log entry
  // into its queue, commit the merged part (multi), remove the queue entry;
  // the assigning replica's multi creating the log entry comes on top.
  std::int64_t keeper_requests_per_merge = 3;
  // Bytes of a row in a part (the workload's record_bytes; not a setting).
  std::int64_t row_bytes = 1024;
};

template <class V, class O>
void visit(V& v, O& o) requires std::is_same_v<std::remove_const_t<O>, ClickHouseOptions> {
  v.choice("version", o.version, {"23.3", "23.8", "23.11", "24.3", "24.8", "25.3", "25.8", "25.9", "25.10"},
           "ClickHouse version; picks the dedup window defaults");
  v.integer("replicas", o.replicas, 1, 100, "replicas of the ReplicatedMergeTree table");
  v.choice("engine", o.engine, {"ReplacingMergeTree", "MergeTree"},
           "table engine; ReplacingMergeTree folds rows with the same key");
  v.choice("partition_by", o.partition_by, {"event_day", "insert_day", "none"},
           "model: the table's PARTITION BY; FINAL folds rows with the same key in the same "
           "partition only");
  v.integer("replicated_deduplication_window", o.replicated_deduplication_window, -1,
            100000000, "recent block ids kept for dedup (table-wide); -1: version default");
  v.integer("replicated_deduplication_window_seconds", o.replicated_deduplication_window_seconds,
            -1, 100000000, "max age of kept block ids; -1: version default");
  v.integer("cleanup_delay_period", o.cleanup_delay_period, 0, 86400,
            "seconds: shortest sleep of a replica's cleanup thread (removes old block ids)");
  v.integer("max_cleanup_delay_period", o.max_cleanup_delay_period, 0, 86400,
            "seconds: longest sleep of the cleanup thread");
  v.integer("cleanup_delay_period_random_add", o.cleanup_delay_period_random_add, 0, 86400,
            "seconds: uniform 0..x added to every cleanup sleep");
  v.integer("cleanup_thread_preferred_points_per_iteration",
            o.cleanup_thread_preferred_points_per_iteration, 0, 100000000,
            "the cleanup thread scales its sleep to find about this much work (0: no adaptation)");
  v.integer("zookeeper_session_expiration_check_period",
            o.zookeeper_session_expiration_check_period, 1, 86400,
            "seconds: the restarting thread's check period while healthy (an expired session wakes "
            "it at once); the default length of a keeper_session_loss fault");
  v.integer("insert_quorum", o.insert_quorum, 0, 100, "replicas an insert waits for (0, 1: off)");
  v.millis("insert_quorum_timeout", o.insert_quorum_timeout, 1, 86400000,
           "ms: a quorum insert waits this long for the next replica to have its part, then "
           "fails (319; the part stays)");
  v.boolean("insert_deduplicate", o.insert_deduplicate,
            "the inserts' block ids (0: none written, nothing deduplicated)");
  v.boolean("async_insert", o.async_insert, "buffer inserts server-side (1 is refused: not modelled)");
  v.boolean("async_insert_deduplicate", o.async_insert_deduplicate,
            "block ids for async inserts (acts only with async_insert=1)");
  v.boolean("wait_for_async_insert", o.wait_for_async_insert,
            "an async insert answers after its flush (acts only with async_insert=1)");
  v.integer("insert_keeper_max_retries", o.insert_keeper_max_retries, 0, 1000,
            "retries of a failed Keeper request during an insert");
  v.millis("insert_keeper_retry_initial_backoff_ms", o.insert_keeper_retry_initial_backoff, 0,
           86400000, "first wait before such a retry; doubles each time");
  v.millis("insert_keeper_retry_max_backoff_ms", o.insert_keeper_retry_max_backoff, 0, 86400000,
           "longest wait before such a retry");
  v.integer("keeper_max_retries", o.keeper_max_retries, 0, 1000,
            "server-side retries of a KeeperMap read's failed Keeper request");
  v.millis("keeper_retry_initial_backoff_ms", o.keeper_retry_initial_backoff, 0, 86400000,
           "first wait before such a retry; doubles each time");
  v.millis("keeper_retry_max_backoff_ms", o.keeper_retry_max_backoff, 0, 86400000,
           "longest wait before such a retry");
  v.duration("network_round_trip", o.network_round_trip, sim::Time::micros(0), sim::Time::seconds(10),
             "model: round trip between the Connect worker and ClickHouse");
  v.duration("tls_handshake_work", o.tls_handshake_work, sim::Time::micros(0), sim::Time::seconds(10),
             "model: client and server work of a full TLS handshake (a new connection over HTTPS)");
  v.duration("query_overhead", o.query_overhead, sim::Time::micros(0), sim::Time::seconds(10),
             "model: the server's work per query before its storage work");
  v.duration("insert_base_latency", o.insert_base_latency, sim::Time::micros(1),
             sim::Time::minutes(10),
             "model: fixed server-side work of an insert writing its part (no network part)");
  v.duration("insert_latency_per_row", o.insert_latency_per_row, sim::Time::micros(0),
             sim::Time::seconds(1), "model: per-row cost of an insert");
  v.real("insert_latency_sigma", o.insert_latency_sigma, 0.0, 5.0,
         "model: sigma of the lognormal factor on an insert's local work (0: none)");
  v.duration("replication_fetch_latency", o.replication_fetch_latency, sim::Time::micros(0),
             sim::Time::minutes(10), "model: a replica fetching a new part, besides Keeper");
  v.integer("keeper_requests_per_fetch", o.keeper_requests_per_fetch, 0, 1000,
            "model: Keeper requests of one replica to replicate one part");
  v.integer("parts_to_delay_insert", o.parts_to_delay_insert, 0, 100000000,
            "an insert into a partition with this many active parts is delayed (0: never)");
  v.integer("parts_to_throw_insert", o.parts_to_throw_insert, 0, 100000000,
            "... and fails with 252 TOO_MANY_PARTS at this many (0: never)");
  v.integer("max_delay_to_insert", o.max_delay_to_insert, 0, 86400,
            "seconds: the delay at parts_to_throw_insert (linear from parts_to_delay_insert)");
  v.millis("min_delay_to_insert_ms", o.min_delay_to_insert, 0, 86400000,
           "ms: the shortest delay of a delayed insert");
  v.integer("max_parts_to_merge_at_once", o.max_parts_to_merge_at_once, 2, 100000,
            "most parts one merge takes");
  v.integer("background_pool_size", o.background_pool_size, 1, 100000,
            "server: threads for merges and fetches of parts");
  v.integer("background_merges_mutations_concurrency_ratio",
            o.background_merges_mutations_concurrency_ratio, 1, 1000,
            "server: merges running at once = background_pool_size x this");
  v.integer("merge_selector_base", o.merge_selector_base, 2, 100000,
            "model: parts of similar size a merge needs (SimpleMergeSelector base)");
  v.duration("merge_base_time", o.merge_base_time, sim::Time::micros(0), sim::Time::days(1),
             "model: fixed cost of a merge");
  v.duration("merge_time_per_part", o.merge_time_per_part, sim::Time::micros(0), sim::Time::minutes(1),
             "model: cost of a merge per source part");
  v.integer("merge_bytes_per_s", o.merge_bytes_per_s, 1, 1000000000000,
            "model: bytes a merge reads and writes per second");
  v.integer("keeper_requests_per_merge", o.keeper_requests_per_merge, 0, 1000,
            "model: Keeper requests of one replica for one merge");
  v.ignored({"max_insert_block_size", "max_partitions_per_insert_block", "insert_quorum_parallel",
             "old_parts_lifetime", "min_replicated_logs_to_keep", "max_replicated_logs_to_keep"});
  v.finish();
}

}  // namespace pipesim::clickhouse
