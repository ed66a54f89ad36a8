#include "models/pipeline/lint.h"

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

std::int64_t window_blocks(const Config& c) {
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

std::vector<std::string> open_entry_points(const Config& c, double inserts_per_s) {
  std::vector<std::string> open;
  if (!c.producer.enable_idempotence || c.app.on_send_failure == "retry" ||
      c.kafka.unclean_leader_election_enable) {
    open.emplace_back("producer_retry");
  }
  const WindowTurnover w = turnover(c, inserts_per_s);
  if (window_blocks(c) == 0 || w.lifetime_s < w.redelivery_s) open.emplace_back("insert_timeout_redelivery");
  if (!c.connector.exactly_once) open.emplace_back("task_restart_replay");
  if (c.app.on_send_failure == "retry_table" && c.app.resend_policy == "blind") open.emplace_back("manual_resend");
  bool wipes = false;
  for (const auto& f : c.faults) wipes = wipes || f.kind == "state_wipe";
  if (c.connector.exactly_once && (wipes || c.operator_options.remediation == "delete_state_row")) {
    open.emplace_back("state_reset");
  }
  return open;
}

std::vector<Finding> lint(const Config& c, const QuickProfile& p) {
  std::vector<Finding> out;
  if (c.connector.exactly_once && !c.connector.tolerate_state_mismatch) {
    const auto [lo, hi] = sim::wilson_interval(p.crashes_state_mismatch, p.crashes);
    // A crash between puts leaves AFTER_PROCESSING (a replay stops with State
    // MISMATCH, which tolerateStateMismatch would skip); a crash during an
    // insert leaves BEFORE_PROCESSING, and the replay's ERROR stops the task
    // whatever the tolerance (v1.3.9 Processing.doLogic).
    out.push_back({"exactly_once_without_tolerance", "state_mismatch_stop",
                   "exactlyOnce=true with tolerateStateMismatch=false: a crash after records were "
                   "inserted past the last commit replays them, the stored range is "
                   "AFTER_PROCESSING, and the task stops with State MISMATCH at every restart",
                   p.crashes > 0 ? fmt("%.0f of %.0f simulated worker crashes ended in State MISMATCH: "
                                       "%.2f, 95%% CI [%.2f, %.2f]",
                                       p.crashes_state_mismatch, p.crashes,
                                       p.crashes_state_mismatch / p.crashes, lo, hi) +
                                       fmt("; %.0f cut an insert short and ended in the "
                                           "BEFORE_PROCESSING error state, which no tolerance covers",
                                           p.crashes_error_state)
                                 : ""});
  }
  const bool has_dlq = !c.connector.errors_deadletterqueue_topic_name.empty();
  if (c.connector.errors_tolerance == "all" && !has_dlq && !c.connector.errors_log_enable) {
    out.push_back({"silent_drop", "dropped_no_dlq",
                   "errors.tolerance=all without errors.deadletterqueue.topic.name and without "
                   "errors.log.enable: failed records are skipped, their offsets committed, and "
                   "nothing keeps them (the connector gets no errant-record reporter)",
                   ""});
  }
  const WindowTurnover w = turnover(c, p.inserts_per_s);
  if (window_blocks(c) == 0) {
    out.push_back({"dedup_window_disabled", "insert_timeout_redelivery",
                   "replicated_deduplication_window=0 disables block deduplication: every redelivered "
                   "insert is written again",
                   ""});
  } else if (w.lifetime_s < w.redelivery_s) {
    out.push_back({"dedup_window_turnover", "insert_timeout_redelivery",
                   "the table-wide dedup window turns over faster than a redelivery arrives "
                   "(replicated_deduplication_window / insert rate < offset.flush.interval.ms + "
                   "the client's socket_timeout): a timed-out insert that the server committed is written twice",
                   fmt("window of %.0f blocks at %.1f inserts/s lasts ~%.0f s; a redelivery comes up to "
                       "%.0f s later",
                       static_cast<double>(window_blocks(c)), p.inserts_per_s, w.lifetime_s, w.redelivery_s)});
  }
  if (c.connector.exactly_once && c.connector.buffer_count > 0) {
    out.push_back({"buffer_count_with_exactly_once", "connector_refuses_to_start",
                   "bufferCount > 0 with exactlyOnce=true: the connector refuses this configuration",
                   ""});
  }
  if (c.producer.acks != "all" && c.producer.acks != "-1") {
    out.push_back({"acks_not_all", "kafka_truncated",
                   "acks=" + c.producer.acks + ": a record acknowledged by the leader alone is lost "
                   "when the leader fails before its followers copied it",
                   ""});
  } else if (c.kafka.min_insync_replicas == 1 && c.kafka.replication_factor >= 3) {
    out.push_back({"min_insync_replicas_1", "kafka_truncated",
                   "min.insync.replicas=1 with replication.factor=" +
                       std::to_string(c.kafka.replication_factor) +
                       ": acks=all is satisfied by the leader alone while the ISR has shrunk, so a "
                       "leader failure can lose acknowledged records",
                   ""});
  }
  if (c.kafka.unclean_leader_election_enable) {
    out.push_back({"unclean_leader_election", "kafka_truncated",
                   "unclean.leader.election.enable=true: an out-of-sync replica may become leader, "
                   "truncating acknowledged records; retries then bypass idempotence",
                   ""});
  }
  if (c.kafka.producer_id_expiration < c.producer.delivery_timeout) {
    out.push_back({"producer_id_expiration_below_delivery_timeout", "producer_retry",
                   "producer.id.expiration.ms < delivery.timeout.ms: the broker can forget a "
                   "producer's sequence state while its retries are still legal, and a late retry "
                   "of an appended batch is appended again",
                   ""});
  }
  // A put() visits each of the task's partitions; each can wait for a
  // KeeperMap read, writes and an insert, each up to the client's socket_timeout
  // (jdbcConnectionProperties; timeoutSeconds is only the start check's ping).
  const double partitions_per_task =
      std::ceil(static_cast<double>(c.kafka.num_partitions) / static_cast<double>(c.connect.tasks_max));
  const double ops_per_partition = c.connector.exactly_once ? 4.0 : 1.0;
  const double worst_put_s = partitions_per_task * ops_per_partition * c.connector.socket_timeout.as_seconds();
  if (worst_put_s > c.connect.max_poll_interval.as_seconds()) {
    out.push_back({"put_may_outlive_max_poll_interval", "task_restart_replay",
                   "a put() can outlive max.poll.interval.ms: the consumer then leaves the group, its "
                   "partitions move and are re-read from the last commit",
                   fmt("worst case %.0f s (%.0f partitions x %.0f queries x socket_timeout) > %.0f s",
                       worst_put_s, partitions_per_task, ops_per_partition,
                       c.connect.max_poll_interval.as_seconds())});
  }
  if (!c.connector.exactly_once && p.crashes > 0) {
    out.push_back({"at_least_once_replay", "task_restart_replay",
                   "exactlyOnce=false: a crash re-inserts everything put since the last commit",
                   fmt("~%.0f duplicate rows per worker crash (quick simulation, %.0f crashes)",
                       p.duplicate_rows_per_crash, p.crashes)});
  }
  return out;
}

}  // namespace pipesim::pipeline
