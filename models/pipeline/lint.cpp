#include "models/pipeline/lint.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/clickhouse/table.h"
#include "models/pipeline/estimates.h"
#include "models/workload/workload.h"
#include "models/pipeline/scenario.h"
#include "sim/experiment/statistics.h"

namespace pipesim::pipeline {
namespace {

std::string fmt(const char* format, double a, double b = 0, double c = 0, double d = 0, double e = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c, d, e);
  return buf;
}

// Block ids the table keeps; 0 when none are written (insert_deduplicate=0).
std::int64_t window_blocks(const Config& c) {
  if (!c.clickhouse.insert_deduplicate) return 0;
  return c.clickhouse.replicated_deduplication_window >= 0
             ? c.clickhouse.replicated_deduplication_window
             : clickhouse::ReplicatedTable::default_window_blocks(c.clickhouse.version);
}

// How long a block id stays in the table-wide window at this insert rate,
// against how late a redelivery comes: up to the client timeout plus a
// commit interval (WorkerSinkTask redelivers at the next commit tick).
struct WindowTurnover {
  double lifetime_s;
  double redelivery_s;
};
WindowTurnover turnover(const Config& c, double inserts_per_s) {
  const double blocks = static_cast<double>(window_blocks(c));
  return {inserts_per_s > 0 ? blocks / inserts_per_s : 1e18,
          c.connector.socket_timeout.as_seconds() + c.connect.offset_flush_interval.as_seconds()};
}

bool acks_all(const Config& c) { return c.producer.acks == "all" || c.producer.acks == "-1"; }

constexpr const char* kWindowDisabled =
    "replicated_deduplication_window=0 or insert_deduplicate=0 disables block deduplication: every "
    "redelivered insert is written again";

}  // namespace

QuickProfile quick_profile(const Config& config, int seeds) {
  // The busiest hour all day long: the insert rate that turns the dedup
  // window over fastest, and the most records per crash.
  Config quick = config;
  const double peak = workload::Workload(config.workload, 1, 0).peak_multiplier();
  quick.workload.profile = "constant";
  quick.workload.records_per_day =
      static_cast<std::int64_t>(static_cast<double>(config.workload.records_per_day) * peak);
  quick.faults.clear();
  sim::FaultSpec crash;
  crash.kind = "worker_crash";
  crash.rate_per_day = 48;  // ~2 crashes per 1 h run
  quick.faults.push_back(crash);
  quick.run.duration = sim::Time::hours(1);
  quick.run.drain = sim::Time::minutes(30);
  std::vector<sim::Metrics> runs;
  for (int s = 1; s <= seeds; ++s) runs.push_back(run_scenario(quick, static_cast<std::uint64_t>(s)));
  QuickProfile p;
  p.seeds = seeds;
  const auto total = [&runs](const char* m) {
    double t = 0;
    for (const double x : metric_column(runs, m)) t += x;
    return t;
  };
  p.crashes = total("crash_episodes");
  p.crashes_state_mismatch = total("crash_episodes_state_mismatch");
  p.crashes_error_state = total("crash_episodes_error_state");
  p.duplicate_rows_per_crash = p.crashes > 0 ? total("duplicate_rows") / p.crashes : 0;
  p.inserts_per_s = total("inserts") / (seeds * quick.run.duration.as_seconds());
  return p;
}

std::vector<Finding> hazards(const Config& c, double inserts_per_s) {
  std::vector<Finding> out;
  const auto add = [&out](std::string id, std::string opens, std::string message, std::vector<std::string> closed_by,
                          std::string closes_note, std::string metric, std::string estimate = "") {
    out.push_back({std::move(id), std::move(opens), std::move(message), std::move(closed_by), std::move(closes_note),
                   std::move(metric), std::move(estimate), ""});
  };
  const std::string dup = "duplicate_rows_by_entry.";
  const std::string lost = "lost_records_by_cause.";
  // The producer's paths past idempotence (kafka-clients 3.4 Sender and
  // TransactionManager, Kafka 3.7 ProducerStateManager).
  const std::string producer_dup = dup + "producer_retry";
  if (!c.producer.enable_idempotence && c.producer.retries > 0) {
    add("producer_path_not_idempotent", "producer_retry.not_idempotent",
         "enable.idempotence=false: a retry of a batch whose answer was lost (or refused after it was "
         "written: NOT_LEADER_OR_FOLLOWER from a moved leader, NOT_ENOUGH_REPLICAS_AFTER_APPEND) is "
         "appended again",
         {"producer.enable.idempotence=true"}, "", producer_dup);
  }
  if (c.producer.enable_idempotence && c.producer.max_in_flight_requests_per_connection > 1) {
    add("producer_path_epoch_bump_resend", "producer_retry.epoch_bump_resend",
         "a batch that fails with its sequence to adjust (the delivery timeout reached on an error "
         "answer, or a late error or disconnect of a batch that already expired in flight) bumps the "
         "producer epoch, and the partition's other incomplete batches are sent again under new "
         "sequences: those already written are appended twice (KAFKA-14034, not fixed in kafka-clients 3.4)",
         {"producer.max.in.flight.requests.per.connection=1"},
         "one batch of a partition in flight, so a bump has nothing written to re-number; costs throughput "
         "per partition",
         producer_dup);
  }
  if (c.producer.enable_idempotence && c.kafka.producer_id_expiration < c.producer.delivery_timeout) {
    add("producer_path_producer_id_expired", "producer_retry.producer_id_expired",
         "producer.id.expiration.ms < delivery.timeout.ms: the broker can forget a producer's sequence "
         "state while its retries are still legal, and a late retry of an appended batch is appended again",
         {"kafka.producer.id.expiration.ms=" + std::to_string(c.producer.delivery_timeout.us / 1000)}, "",
         producer_dup);
  }
  if (c.app.on_send_failure == "retry") {
    std::string why =
        "app.on_send_failure=retry: the application sends again the records of a failed send, new "
        "sequences, although some were written (a batch that expired in flight, a producer restart";
    if (acks_all(c) && c.kafka.min_insync_replicas > 1) {
      why += ", NOT_ENOUGH_REPLICAS_AFTER_APPEND while the ISR is below min.insync.replicas=" +
             std::to_string(c.kafka.min_insync_replicas);
    }
    add("producer_path_application_resend", "producer_retry.application_resend", why + ")",
         {"app.on_send_failure=retry_table", "app.resend_policy=check_by_key"},
         "re-send only the keys ClickHouse lacks", producer_dup);
  }
  if (c.kafka.unclean_leader_election_enable) {
    add("producer_path_after_truncation", "producer_retry.after_truncation",
         "unclean.leader.election.enable=true: a written batch that a consumer read can be truncated away, "
         "and its retry passes the sequence check",
         {"kafka.unclean.leader.election.enable=false"}, "", producer_dup);
  }
  // The sink's entry points.
  const WindowTurnover w = turnover(c, inserts_per_s);
  // Enough block ids to outlast a redelivery at this rate, twice over.
  const std::int64_t needed = static_cast<std::int64_t>(std::ceil(2 * inserts_per_s * w.redelivery_s / 100.0)) * 100;
  const std::vector<std::string> bigger_window = {"clickhouse.insert_deduplicate=true",
                                                  "clickhouse.replicated_deduplication_window=" +
                                                      std::to_string(std::max<std::int64_t>(needed, 100))};
  if (window_blocks(c) == 0) {
    add("dedup_window_disabled", "insert_timeout_redelivery", kWindowDisabled, bigger_window, "",
         dup + "insert_timeout_redelivery");
  } else if (w.lifetime_s < w.redelivery_s) {
    add("dedup_window_turnover", "insert_timeout_redelivery",
         "the table-wide dedup window turns over faster than a redelivery arrives "
         "(replicated_deduplication_window / insert rate < offset.flush.interval.ms + the client's "
         "socket_timeout): a timed-out insert that the server committed is written twice",
         bigger_window, "more block ids in Keeper", dup + "insert_timeout_redelivery");
  }
  if (!c.connector.exactly_once) {
    add("at_least_once_replay", "task_restart_replay",
         "exactlyOnce=false: a crash re-inserts everything put since the last commit",
         {"connector.exactlyOnce=true", "connector.tolerateStateMismatch=true"},
         "the state row then decides each replayed batch; a crash that cuts an insert short still stops the "
         "task in the BEFORE_PROCESSING error state",
         dup + "task_restart_replay");
  }
  // 8 partitions per task, each a KeeperMap read, writes and an insert, each
  // up to the client's socket_timeout (jdbcConnectionProperties;
  // timeoutSeconds is only the start check's ping).
  const double partitions_per_task =
      std::ceil(static_cast<double>(c.kafka.num_partitions) / static_cast<double>(c.connect.tasks_max));
  const double ops_per_partition = c.connector.exactly_once ? 4.0 : 1.0;
  const double worst_put_s = partitions_per_task * ops_per_partition * c.connector.socket_timeout.as_seconds();
  if (worst_put_s > c.connect.max_poll_interval.as_seconds()) {
    add("put_may_outlive_max_poll_interval", "task_restart_replay",
         "a put() can outlive max.poll.interval.ms: the consumer then leaves the group, its partitions "
         "move and are re-read from the last commit",
         {"connect.max.poll.interval.ms=" + std::to_string(static_cast<std::int64_t>(std::ceil(worst_put_s)) * 1000 + 60000)},
         "", dup + "task_restart_replay",
         fmt("worst case %.0f s (%.0f partitions x %.0f queries x socket_timeout) > %.0f s", worst_put_s,
             partitions_per_task, ops_per_partition, c.connect.max_poll_interval.as_seconds()));
  }
  if (c.app.on_send_failure == "retry_table" && c.app.resend_policy == "blind") {
    add("blind_manual_resend", "manual_resend", "a blind resend of the retry table sends records that were written",
         {"app.resend_policy=check_by_key"}, "", dup + "manual_resend");
  }
  bool wipes = false;
  for (const auto& f : c.faults) wipes = wipes || f.kind == "state_wipe";
  if (c.connector.exactly_once && c.operator_options.remediation == "delete_state_row") {
    add("state_row_deleted", "state_reset",
         "operator.remediation=delete_state_row: a deleted state row lets a replay be inserted again",
         {"operator.remediation=restart_only"}, "the task stays stopped until the operator restarts it",
         dup + "state_reset");
  } else if (c.connector.exactly_once && wipes) {
    add("state_wipe", "state_reset", "a state_wipe fault: a wiped state row lets a replay be inserted again", {},
         "", dup + "state_reset");
  }
  // Loss causes.
  const bool has_dlq = !c.connector.errors_deadletterqueue_topic_name.empty();
  if (c.connector.errors_tolerance == "all" && !has_dlq && !c.connector.errors_log_enable) {
    add("silent_drop", "dropped_no_dlq",
         "errors.tolerance=all without errors.deadletterqueue.topic.name and without errors.log.enable: "
         "failed records are skipped, their offsets committed, and nothing keeps them (the connector gets "
         "no errant-record reporter)",
         {"connector.errors.deadletterqueue.topic.name=dlq"}, "the records are then kept in the DLQ",
         lost + "dropped_no_dlq");
  }
  if (!acks_all(c)) {
    add("acks_not_all", "kafka_truncated",
         "acks=" + c.producer.acks + ": a record acknowledged by the leader alone is lost when the leader "
         "fails before its followers copied it",
         {"producer.acks=all"}, "", lost + "kafka_truncated");
  } else if (c.kafka.min_insync_replicas == 1 && c.kafka.replication_factor >= 3) {
    add("min_insync_replicas_1", "kafka_truncated",
         "min.insync.replicas=1 with replication.factor=" + std::to_string(c.kafka.replication_factor) +
             ": acks=all is satisfied by the leader alone while the ISR has shrunk, so a leader failure can "
             "lose acknowledged records",
         {"kafka.min.insync.replicas=2"}, "a partition whose ISR is down to one refuses writes",
         lost + "kafka_truncated");
  }
  if (c.kafka.unclean_leader_election_enable) {
    add("unclean_leader_election", "kafka_truncated",
         "unclean.leader.election.enable=true: an out-of-sync replica may become leader, truncating "
         "acknowledged records; retries then bypass idempotence",
         {"kafka.unclean.leader.election.enable=false"}, "", lost + "kafka_truncated");
  }
  // exactlyOnce's replays after a crash (v1.3.9 Processing.doLogic): a crash
  // between puts leaves AFTER_PROCESSING (State MISMATCH, which
  // tolerateStateMismatch skips); one that cuts an insert short leaves
  // BEFORE_PROCESSING (the ERROR state, no tolerance covers it). With
  // errors.tolerance=all, ClickHouseSinkTask.put swallows either
  // (Utils.handleException) and reports the batch: the task never stops.
  if (c.connector.exactly_once && c.connector.errors_tolerance == "all") {
    add("exactly_once_errors_reported", has_dlq ? "dlq_only" : "dropped_no_dlq",
         std::string("exactlyOnce=true with errors.tolerance=all: a replay's State MISMATCH or ERROR state "
                     "does not stop the task; the partition's batch is ") +
             (has_dlq ? "sent to the DLQ" : "skipped") +
             " and its offsets committed: records of an insert a crash cut short reach ClickHouse only "
             "through the DLQ, and a replay of records already inserted fills the DLQ with copies",
         {}, "", has_dlq ? lost + "dlq_only" : lost + "dropped_no_dlq");
  } else if (c.connector.exactly_once && !c.connector.tolerate_state_mismatch) {
    add("exactly_once_without_tolerance", "state_mismatch_stop",
         "exactlyOnce=true with tolerateStateMismatch=false: a crash after records were inserted past the "
         "last commit replays them, the stored range is AFTER_PROCESSING, and the task stops with State "
         "MISMATCH at every restart",
         {"connector.tolerateStateMismatch=true"},
         "a crash that cuts an insert short still stops the task in the BEFORE_PROCESSING error state",
         "task_failures");
  }
  if (c.connector.exactly_once && c.connector.buffer_count > 0) {
    add("buffer_count_with_exactly_once", "connector_refuses_to_start",
         "bufferCount > 0 with exactlyOnce=true: the connector refuses this configuration",
         {"connector.bufferCount=0"}, "", "");
  }
  return out;
}

std::vector<std::string> open_entry_points(const Config& c, double inserts_per_s) {
  std::vector<std::string> entries;
  std::vector<std::string> paths;  // the producer's open paths
  for (const auto& f : hazards(c, inserts_per_s)) {
    const std::string prefix = "producer_retry.";
    if (f.opens.rfind(prefix, 0) == 0) {
      paths.push_back(f.opens.substr(prefix.size()));
      continue;
    }
    if (std::find(entries.begin(), entries.end(), f.opens) == entries.end()) entries.push_back(f.opens);
  }
  if (!paths.empty()) {
    std::string e = "producer_retry";
    for (std::size_t k = 0; k < paths.size(); ++k) e += (k == 0 ? " (" : ", ") + paths[k];
    entries.insert(entries.begin(), e + ")");
  }
  return entries;
}

std::vector<Finding> lint(const Config& c, const QuickProfile& p) {
  std::vector<Finding> out = hazards(c, p.inserts_per_s);
  for (auto& f : out) {
    if (f.id == "exactly_once_without_tolerance" && p.crashes > 0) {
      const auto [lo, hi] = sim::wilson_interval(p.crashes_state_mismatch, p.crashes);
      f.estimate = fmt("%.0f of %.0f simulated worker crashes ended in State MISMATCH: %.2f, 95%% CI [%.2f, %.2f]",
                       p.crashes_state_mismatch, p.crashes, p.crashes_state_mismatch / p.crashes, lo, hi) +
                   fmt("; %.0f cut an insert short and ended in the BEFORE_PROCESSING error state, which no "
                       "tolerance covers",
                       p.crashes_error_state);
    }
    if (f.id == "dedup_window_turnover") {
      const WindowTurnover w = turnover(c, p.inserts_per_s);
      f.estimate = fmt("window of %.0f blocks at %.1f inserts/s lasts ~%.0f s; a redelivery comes up to %.0f s later",
                       static_cast<double>(window_blocks(c)), p.inserts_per_s, w.lifetime_s, w.redelivery_s);
    }
    if (f.id == "at_least_once_replay" && p.crashes > 0) {
      f.estimate = fmt("~%.0f duplicate rows per worker crash (quick simulation, %.0f crashes)",
                       p.duplicate_rows_per_crash, p.crashes);
    }
  }
  return out;
}

}  // namespace pipesim::pipeline
