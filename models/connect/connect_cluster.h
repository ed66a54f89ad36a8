// The Connect workers of one connector and the on-call operator (SPEC §4.3).
// Tasks are spread over workers round-robin (task i on worker i % workers);
// partitions over tasks by the consumer group's RangeAssignor.
//
// kill -9 of a worker: its tasks lose everything volatile and commit
// nothing. The worker process is back after worker_restart_delay; its tasks'
// consumers get their partitions back only once the group has evicted the
// dead members (session.timeout.ms), so they restart at the later of the two.
// A FAILED task stays FAILED until the operator restarts it after a delay
// drawn from the stream "operator/restart-delay".
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "models/connect/connect_options.h"
#include "models/connect/consumer_group.h"
#include "models/connect/worker_sink_task.h"
#include "sim/engine/random.h"
#include "sim/engine/simulation.h"

namespace pipesim::connect {

class ConnectCluster final : public sim::Component {
 public:
  ConnectCluster(sim::Simulation& sim, const ConnectOptions& connect,
                 const OperatorOptions& operator_options, const std::string& connector_name,
                 int partitions, const std::vector<broker::PartitionLog>& logs,
                 const sink::SinkDependencies& deps, bool exactly_once, std::uint64_t seed);

  void start();
  void kill_worker(int worker);
  // task_restart fault: graceful stop and start of one task.
  void restart_task(int task);
  // rebalance fault: every task revokes, commits and resumes; with a new
  // max.poll.records the connector's config changed, so tasks restart.
  void rebalance(std::int64_t max_poll_records);
  // state_wipe fault: the KeeperMap table is recreated empty.
  void wipe_keeper_map_state() { keeper_map_state_.reset_all(); }
  // New records on partition p: wake the task that owns it.
  void on_data(int partition);

  void handle(const sim::Event&) override {}

  [[nodiscard]] const TaskCounters& counters() const { return counters_; }
  [[nodiscard]] const ConsumerGroup& group() const { return group_; }
  [[nodiscard]] int workers() const { return static_cast<int>(options_.workers); }
  [[nodiscard]] const std::vector<std::unique_ptr<WorkerSinkTask>>& tasks() const { return tasks_; }
  // Time tasks spent FAILED or down, including those still down at `now`.
  [[nodiscard]] sim::Time downtime(sim::Time now) const;

 private:
  void on_task_failed(int task);

  sim::Simulation& sim_;
  ConnectOptions options_;
  OperatorOptions operator_;
  ConsumerGroup group_;
  sink::SinkStateStore keeper_map_state_;  // shared when exactlyOnce=true
  std::vector<std::unique_ptr<sink::SinkStateStore>> in_memory_states_;
  std::vector<std::unique_ptr<WorkerSinkTask>> tasks_;
  std::vector<WorkerSinkTask*> owner_;  // per partition
  TaskCounters counters_;
  sim::RandomStream operator_delay_;
  sim::ComponentId id_;
};

}  // namespace pipesim::connect
