#include "models/pipeline/metrics.h"

#include "models/pipeline/config.h"

namespace pipesim::pipeline {

const std::vector<std::string>& metric_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {"records_produced", "kafka_records", "clickhouse_rows",
                                  "duplicate_rows"};
    for (const char* e : {"producer_retry", "insert_timeout_redelivery", "task_restart_replay",
                          "manual_resend", "state_reset"}) {
      n.push_back(std::string("duplicate_rows_by_entry.") + e);
    }
    n.push_back("lost_records");
    for (const char* c : {"dlq_only", "dropped_no_dlq", "kafka_truncated", "retention_expired",
                          "send_failed_not_resent", "insert_lost"}) {
      n.push_back(std::string("lost_records_by_cause.") + c);
    }
    for (const char* m : {"pending_records", "dlq_records_in_clickhouse", "dlq_records_missing",
                          "state_mismatch_throws", "state_contains_throws", "error_state_throws"}) {
      n.emplace_back(m);
    }
    for (const char* s : {"BEFORE_PROCESSING", "AFTER_PROCESSING"}) {
      for (const char* r :
           {"SAME", "NEW", "CONTAINS", "OVER_LAPPING", "ZERO", "PREVIOUS", "ERROR"}) {
        n.push_back(std::string("classifications.") + s + "." + r);
      }
    }
    for (const char* m :
         {"task_failures", "task_downtime_s", "max_lag_records", "keeper_ops",
          "keeper_peak_in_flight", "inserts", "dedup_hits", "final_duplicate_rows"}) {
      n.emplace_back(m);
    }
    // Added: the producer's and the brokers' side of the story.
    for (const char* m : {"producer_retried_records", "producer_failed_records",
                          "producer_expired_records", "producer_epoch_bumps",
                          "producer_not_enough_replicas_after_append", "retry_table_records",
                          "leader_elections", "kafka_truncated_records"}) {
      n.emplace_back(m);
    }
    // The producer_retry duplicates by the path that let each copy in (docs/model.md §10).
    for (const char* p : {"not_idempotent", "epoch_bump_resend", "producer_id_expired", "application_resend",
                          "after_truncation"}) {
      n.push_back(std::string("producer_retry_by_path.") + p);
    }
    // ... and those of them whose send also failed to the application (issue 36).
    for (const char* p : {"not_idempotent", "epoch_bump_resend", "producer_id_expired", "application_resend",
                          "after_truncation"}) {
      n.push_back(std::string("producer_duplicates_also_failed.") + p);
    }
    n.emplace_back("producer_late_failures");
    n.emplace_back("producer_late_answers");
    for (const auto& kind : fault_kinds()) n.push_back("faults_fired." + kind);
    n.emplace_back("events_processed");
    // Task-seconds the sink tasks spent in aggregate (a declared shortcut; 0 with run.exact).
    n.emplace_back("aggregate_task_s");
    // ... of them lagging (a catch-up in aggregate).
    n.emplace_back("aggregate_lagging_task_s");
    // Beyond docs/model.md §9: disruption episodes and how many ended in a connector stop.
    for (const char* kind : {"crash", "rebalance"}) {
      for (const char* end :
           {"", "_state_mismatch", "_state_contains", "_error_state", "_stopped"}) {
        n.push_back(std::string(kind) + "_episodes" + end);
      }
    }
    // exactlyOnce: partitions' KeeperMap states at worker crashes, and how many AFTER_PROCESSING.
    n.emplace_back("crash_states");
    n.emplace_back("crash_states_after_processing");
    // Capacity figures, after the docs/model.md §9 names.
    for (const char* m : {"inserts_per_s", "parts_per_s", "keeper_ops_per_s"}) n.emplace_back(m);
    for (const char* c : {"inserts", "replication", "keeper_map", "cleanup"}) {
      n.push_back(std::string("keeper_ops_by_source.") + c);
    }
    for (const char* m :
         {"keeper_mean_in_flight", "keeper_in_flight_sampled_mean", "keeper_in_flight_sampled_p99",
          "keeper_in_flight_sampled_max", "zookeeper_request_mean", "zookeeper_request_peak",
          "zookeeper_request_sampled_mean", "zookeeper_request_sampled_p99",
          "zookeeper_request_sampled_max", "keeper_utilisation_peak", "keeper_latency_p50_ms",
          "keeper_latency_p99_ms", "insert_latency_p50_ms", "insert_latency_p99_ms",
          "replication_lag_p99_ms"}) {
      n.emplace_back(m);
    }
    for (const char* a :
         {"ok", "deduplicated", "client_timeout", "timeout_exceeded_159", "network_error_210",
          "table_is_read_only_242", "too_few_live_replicas_285", "unknown_status_of_insert_319",
          "keeper_exception_999", "too_many_parts_252"}) {
      n.push_back(std::string("insert_answers.") + a);
    }
    for (const char* m : {"keeper_map_queries", "keeper_map_failures", "redeliveries",
                          "poll_timeouts", "abandoned_stops", "commit_failures", "insert_keeper_retries",
                          "keeper_sessions_expired", "keeper_restart_attempts", "replica_read_only_s",
                          "block_ids_removed", "active_parts_peak", "inserts_delayed", "too_many_parts_errors",
                          "merges"}) {
      n.emplace_back(m);
    }
    return n;
  }();
  return names;
}

const std::vector<std::string>& metrics_not_modelled() {
  static const std::vector<std::string> names = {"lost_records_by_cause.insert_lost"};
  return names;
}

const std::vector<std::string>& faults_not_modelled() {
  static const std::vector<std::string> kinds = {};
  return kinds;
}

}  // namespace pipesim::pipeline
