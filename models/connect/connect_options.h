// Kafka Connect 3.7 worker and sink-task consumer properties (docs/model.md §4.3, §9
// "connect") and the on-call operator's runbook ("operator"). Consumer
// properties appear without their "consumer." prefix.
#pragma once

#include <cstdint>
#include <string>

#include "sim/config/options.h"
#include "sim/engine/time.h"

namespace pipesim::connect {

struct ConnectOptions {
  std::int64_t workers = 1;  // model default
  std::int64_t tasks_max = 8;
  sim::Time offset_flush_interval = sim::Time::millis(60000);
  std::int64_t max_poll_records = 500;
  sim::Time session_timeout = sim::Time::millis(45000);
  sim::Time heartbeat_interval = sim::Time::millis(3000);
  sim::Time max_poll_interval = sim::Time::millis(300000);
  // KafkaConsumer 3.7 fetch properties of the tasks' consumers.
  sim::Time fetch_max_wait = sim::Time::millis(500);
  std::int64_t fetch_min_bytes = 1;
  std::int64_t max_partition_fetch_bytes = 1048576;
  std::int64_t fetch_max_bytes = 52428800;
  sim::Time worker_session_timeout = sim::Time::millis(10000);  // worker group (session.timeout.ms of the worker)
  sim::Time scheduled_rebalance_max_delay = sim::Time::millis(300000);
  sim::Time task_shutdown_graceful_timeout = sim::Time::millis(5000);
  // Model: the join/sync round trips of a consumer-group rebalance once every
  // member has rejoined.
  sim::Time rebalance_time = sim::Time::millis(500);
  // Model: a killed worker process is back after this long (systemd/k8s restart).
  sim::Time worker_restart_delay = sim::Time::seconds(30);
  // Model: consumer fetch round trip to the leader.
  sim::Time fetch_latency = sim::Time::millis(2);
  // The tasks' commit clock at the run's start (WorkerSinkTask: nextCommit =
  // start + offset.flush.interval.ms): "random", a pipeline that has been
  // running (its tasks started at an arbitrary moment before the run), or
  // "start", tasks that start with the run (the lab configs).
  std::string commit_phase = "random";
};

template <class V, class O>
void visit(V& v, O& o) requires std::is_same_v<std::remove_const_t<O>, ConnectOptions> {
  v.integer("workers", o.workers, 1, 1000, "model: Connect worker processes");
  // Connect allows any int; every task is a member of the consumer group and each
  // join visits every member (ConnectCluster::request_rebalance), so the cost of
  // the group's rebalances grows with the square of the tasks: 10,000 start in
  // about a second, 100,000 took minutes (issue 33).
  v.limit("tasks.max",
          "every rebalance visits each task once per joining task, so a run's cost grows with the "
          "square of the tasks; a sink reads at most num.partitions of them");
  v.integer("tasks.max", o.tasks_max, 1, 10000, "sink tasks of the connector");
  v.millis("offset.flush.interval.ms", o.offset_flush_interval, 1, 2147483647,
           "WorkerSinkTask commits consumed offsets this often");
  v.alias("consumer.max.poll.records", "max.poll.records");
  v.integer("max.poll.records", o.max_poll_records, 1, 2147483647, "records per poll (per put)");
  v.millis("session.timeout.ms", o.session_timeout, 1, 2147483647,
           "consumer group: a silent consumer is evicted after this");
  v.millis("heartbeat.interval.ms", o.heartbeat_interval, 1, 2147483647,
           "consumer heartbeat period");
  v.millis("max.poll.interval.ms", o.max_poll_interval, 1, 2147483647,
           "a put() longer than this makes the consumer leave the group");
  v.alias("consumer.fetch.max.wait.ms", "fetch.max.wait.ms");
  v.millis("fetch.max.wait.ms", o.fetch_max_wait, 0, 2147483647,
           "a fetch waits at the broker this long for fetch.min.bytes");
  v.alias("consumer.fetch.min.bytes", "fetch.min.bytes");
  v.integer("fetch.min.bytes", o.fetch_min_bytes, 0, 2147483647,
            "the broker answers a fetch once this much is readable (or after fetch.max.wait.ms)");
  v.alias("consumer.max.partition.fetch.bytes", "max.partition.fetch.bytes");
  v.integer("max.partition.fetch.bytes", o.max_partition_fetch_bytes, 0, 2147483647,
            "most bytes a fetch returns per partition (at least one record)");
  v.alias("consumer.fetch.max.bytes", "fetch.max.bytes");
  v.integer("fetch.max.bytes", o.fetch_max_bytes, 0, 2147483647,
            "most bytes a fetch response holds (at least one record)");
  v.millis("worker.session.timeout.ms", o.worker_session_timeout, 1, 2147483647,
           "Connect worker group session timeout (the worker's session.timeout.ms)");
  v.millis("scheduled.rebalance.max.delay.ms", o.scheduled_rebalance_max_delay, 0, 2147483647,
           "incremental cooperative rebalancing waits this long for a departed worker");
  v.millis("task.shutdown.graceful.timeout.ms", o.task_shutdown_graceful_timeout, 0, 2147483647,
           "a stopping task whose put() runs longer is cancelled: it finishes its put, then "
           "leaves without a commit");
  v.duration("rebalance_time", o.rebalance_time, sim::Time::micros(0), sim::Time::minutes(10),
             "model: join + sync of a rebalance once every member has rejoined");
  v.duration("worker_restart_delay", o.worker_restart_delay, sim::Time::micros(0),
             sim::Time::days(30), "model: a killed worker process is back after this");
  v.duration("fetch_latency", o.fetch_latency, sim::Time::micros(1), sim::Time::minutes(1),
             "model: consumer fetch round trip (the broker answers, then the response takes this)");
  v.choice("commit_phase", o.commit_phase, {"random", "start"},
           "model: the first commit after a uniform share of offset.flush.interval.ms (tasks started "
           "before the run), or one interval in (tasks start with the run)");
  // Other real keys (WorkerConfig, DistributedConfig, ConsumerConfig: e.g.
  // offset.flush.timeout.ms, which bounds a commit in flight, while pipesim's
  // commits are answered at once) are accepted and listed as ignored:
  // models/pipeline/real_keys.h.
  v.finish();
}

struct OperatorOptions {
  sim::Time restart_delay = sim::Time::minutes(30);
  // Exponential restart delay with restart_delay as its mean, or exactly restart_delay.
  std::string restart_delay_distribution = "exponential";
  std::string remediation = "restart_only";  // restart_only | delete_state_row | tolerate_then_revert
  // Once paged and at the keyboard, the engineer applies the remediation and
  // restarts after this long.
  sim::Time remediation_delay = sim::Time::minutes(5);
};

template <class V, class O>
void visit(V& v, O& o) requires std::is_same_v<std::remove_const_t<O>, OperatorOptions> {
  v.duration("restart_delay", o.restart_delay, sim::Time::micros(0), sim::Time::days(30),
             "the on-call engineer restarts a FAILED task after this (mean)");
  v.choice("restart_delay_distribution", o.restart_delay_distribution, {"exponential", "fixed"},
           "distribution of the restart delay");
  v.choice("remediation", o.remediation, {"restart_only", "delete_state_row", "tolerate_then_revert"},
           "what the engineer does when a restart fails again");
  v.duration("remediation_delay", o.remediation_delay, sim::Time::micros(0), sim::Time::days(30),
             "time to apply the remediation after a restart failed again");
  v.finish();
}

}  // namespace pipesim::connect
