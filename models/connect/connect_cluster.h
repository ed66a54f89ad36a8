// The Connect workers of one connector, its consumer group connect-<name>,
// and the on-call operator (docs/model.md §4.3).
//
// Group membership follows the consumer protocol with the eager
// RangeAssignor: a member that joins (a new task instance) or leaves (a
// stopped or FAILED task closes its consumer) triggers a rebalance; every
// live member finishes its put(), commits and revokes; once all have
// rejoined and no dead member is left, partitions are assigned anew and
// consumption resumes from the committed offsets. A killed member (kill -9)
// is only noticed when session.timeout.ms expires, and until then it blocks
// any rebalance while its partitions sit idle.
//
// Workers: tasks are spread round-robin. A killed worker is back after
// worker_restart_delay and starts its tasks again; with several workers the
// worker group moves them to a surviving worker if it stays away longer than
// its session timeout + scheduled.rebalance.max.delay.ms.
//
// Operator: a FAILED task is restarted after operator.restart_delay; when a
// restart fails again the runbook's remediation is applied first; switching
// tolerateStateMismatch on or off is a connector config change, which
// restarts every task of the connector (FAILED ones included).
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "models/connect/connect_options.h"
#include "models/connect/consumer_group.h"
#include "models/connect/worker_sink_task.h"
#include "sim/engine/random.h"
#include "sim/engine/simulation.h"

namespace pipesim::connect {

// Told when the cluster plans a change of its own (an eviction, a worker's
// return, tasks moved, the operator's restart).
class ClusterPlans {
 public:
  virtual ~ClusterPlans() = default;
  virtual void connect_change_planned(sim::Time at) = 0;
};

class ConnectCluster final : public sim::Component, public TaskListener {
 public:
  ConnectCluster(sim::Simulation& sim, const ConnectOptions& connect,
                 const OperatorOptions& operator_options, const std::string& connector_name,
                 int partitions, const FetchSettings& fetch, LogView& view,
                 const sink::SinkDependencies& deps, bool exactly_once, std::uint64_t seed);

  void start();
  // worker_crash fault: kill -9 of a worker process.
  void kill_worker(int worker);
  // task_restart fault: graceful stop and start of one task.
  void restart_task(int task);
  // rebalance fault: a consumer-group rebalance; with a new max.poll.records
  // the connector's config changed, so every task restarts with it.
  void rebalance(std::int64_t max_poll_records);
  // state_wipe fault: the KeeperMap table is recreated empty.
  void wipe_keeper_map_state() { keeper_map_state_.reset_all(); }
  // Partition p's high watermark moved: the task that owns it may be answered.
  void on_data(int partition);
  // Partition p has a new leader.
  void on_leader(int partition);
  // The brokers' view changes (the producer's direct feed starts or stops).
  void before_view_change();
  void after_view_change();
  // An unclean leader election cut partition p's log below what was read.
  void on_log_truncated(int partition, std::int64_t end_offset);

  void handle(const sim::Event& event) override;

  // TaskListener
  void task_joined(int task) override;
  void task_started(int task) override;
  void task_left(int task) override;
  void task_failed(int task, const sink::PutFailure& failure) override;
  void task_caught_up(int task) override;
  void task_progressed(int task) override;

  [[nodiscard]] const TaskCounters& counters() const { return counters_; }
  [[nodiscard]] TaskCounters& counters() { return counters_; }
  void set_plans(ClusterPlans* plans) { plans_ = plans; }
  // The earliest change the cluster has planned (Time::max(): none).
  [[nodiscard]] sim::Time next_planned_change() const {
    return planned_.empty() ? sim::Time::max() : *planned_.begin();
  }
  // No rebalance under way, every member alive and in the group, no worker away.
  [[nodiscard]] bool settled() const;
  [[nodiscard]] const ConsumerGroup& group() const { return group_; }
  void set_group_coordinator(const GroupCoordinator* coordinator, int offsets_partition) {
    group_.set_coordinator(coordinator, offsets_partition);
  }
  [[nodiscard]] const std::vector<std::unique_ptr<WorkerSinkTask>>& tasks() const { return tasks_; }
  // exactlyOnce's KeeperMap state, shared by the tasks.
  [[nodiscard]] const sink::SinkStateStore& keeper_map_state() const { return keeper_map_state_; }
  [[nodiscard]] int worker_of(int task) const { return worker_of_[static_cast<std::size_t>(task)]; }
  // Every task running and none failing since its last progress.
  [[nodiscard]] bool healthy() const;
  // Time tasks spent FAILED or down, including those still down at `now`.
  [[nodiscard]] sim::Time downtime(sim::Time now) const;

 private:
  enum EventType : std::uint32_t {
    kCompleteRebalance = 1, kEvict = 2, kWorkerBack = 3, kMoveTasks = 4, kOperatorRestart = 5
  };

  void story(const std::string& name, const std::string& text);
  // A change the cluster makes by itself later: scheduled and announced.
  void plan(sim::Time delay, std::uint32_t type, std::uint32_t arg = 0);
  void request_rebalance();
  void try_complete_rebalance();
  void complete_rebalance();
  void remove_member(int task);
  // A worker (back, or given its tasks back) starts the ones that are down.
  void start_tasks_of(int worker);
  void set_tolerate_state_mismatch(bool on);
  // `change` names it in the story (e.g. "tolerateStateMismatch=true").
  void restart_for_config_change(const std::string& change);
  WorkerSinkTask& task(int t) { return *tasks_[static_cast<std::size_t>(t)]; }

  sim::Simulation& sim_;
  ConnectOptions options_;
  OperatorOptions operator_;
  std::string connector_name_;
  int partitions_;
  ConsumerGroup group_;
  sink::SinkStateStore keeper_map_state_;  // shared when exactlyOnce=true
  std::vector<std::unique_ptr<sink::SinkStateStore>> in_memory_states_;
  std::vector<std::unique_ptr<WorkerSinkTask>> tasks_;
  std::vector<int> worker_of_;
  std::vector<bool> worker_down_;
  // The worker group: members in join order (the group coordinator's leader
  // is the oldest live member), and departed workers whose tasks wait for
  // the leader's delayed rebalance.
  std::vector<int> worker_join_order_;
  std::vector<bool> awaiting_delayed_rebalance_;
  std::vector<WorkerSinkTask*> owner_;  // per partition, from the last assignment
  TaskCounters counters_;
  sim::RandomStream operator_delay_;
  sim::RandomStream commit_phase_;  // connect.commit_phase "random"
  sim::ComponentId id_;
  ClusterPlans* plans_ = nullptr;
  std::multiset<sim::Time> planned_;

  // Consumer group state.
  std::vector<bool> member_;    // live consumer in the group
  std::vector<bool> awaiting_;  // asked to rejoin in the current rebalance
  int unevicted_ = 0;           // killed members the coordinator has not noticed yet
  bool rebalancing_ = false;
  bool completion_scheduled_ = false;

  // Operator state.
  std::vector<int> failures_since_progress_;
  // The task's last failure (partition -1: none since it last caught up), and
  // whether the restart after it comes with the runbook's remediation.
  std::vector<int> failed_partition_;
  std::vector<sink::DecisionError> failed_error_;
  std::vector<bool> remediate_;
  bool tolerate_override_ = false;
  int tolerate_watch_task_ = -1;
};

}  // namespace pipesim::connect
