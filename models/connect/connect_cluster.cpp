#include "models/connect/connect_cluster.h"

#include <algorithm>

namespace pipesim::connect {

ConnectCluster::ConnectCluster(sim::Simulation& sim, const ConnectOptions& connect,
                               const OperatorOptions& operator_options,
                               const std::string& connector_name, int partitions,
                               const std::vector<broker::PartitionLog>& logs,
                               const sink::SinkDependencies& deps, bool exactly_once,
                               std::uint64_t seed)
    : sim_(sim),
      options_(connect),
      operator_(operator_options),
      group_(partitions),
      keeper_map_state_(partitions, true),
      owner_(static_cast<std::size_t>(partitions), nullptr),
      operator_delay_(seed, "operator/restart-delay"),
      id_(sim.add_component(this)) {
  const int task_count = static_cast<int>(connect.tasks_max);
  std::vector<std::string> members;
  for (int t = 0; t < task_count; ++t) {
    sink::SinkStateStore* state = &keeper_map_state_;
    if (!exactly_once) {
      in_memory_states_.push_back(std::make_unique<sink::SinkStateStore>(partitions, false));
      state = in_memory_states_.back().get();
    }
    tasks_.push_back(std::make_unique<WorkerSinkTask>(sim, t, connect, group_, logs, deps, state, counters_));
    tasks_.back()->set_failure_listener([this](int task) { on_task_failed(task); });
    members.push_back(ConsumerGroup::member_id(connector_name, t));
  }
  const auto assignment = ConsumerGroup::range_assign(partitions, members);
  for (int t = 0; t < task_count; ++t) {
    for (const int p : assignment[static_cast<std::size_t>(t)]) owner_[static_cast<std::size_t>(p)] = tasks_[static_cast<std::size_t>(t)].get();
    tasks_[static_cast<std::size_t>(t)]->assign(assignment[static_cast<std::size_t>(t)]);
  }
}

void ConnectCluster::start() {
  for (auto& t : tasks_) t->start();
}

void ConnectCluster::kill_worker(int worker) {
  const sim::Time back = sim_.now() + std::max(options_.worker_restart_delay, options_.session_timeout);
  for (auto& t : tasks_) {
    if (t->index() % options_.workers != worker || t->status() == TaskStatus::DOWN) continue;
    t->kill();
    t->restart_at(back);
  }
}

void ConnectCluster::restart_task(int task) {
  tasks_[static_cast<std::size_t>(task)]->revoke(true, 0);
}

void ConnectCluster::rebalance(std::int64_t max_poll_records) {
  for (auto& t : tasks_) t->revoke(max_poll_records > 0, max_poll_records);
}

void ConnectCluster::on_data(int partition) {
  if (WorkerSinkTask* t = owner_[static_cast<std::size_t>(partition)]) t->on_data(partition);
}

void ConnectCluster::on_task_failed(int task) {
  const sim::Time delay = operator_.restart_delay_distribution == "fixed"
                              ? operator_.restart_delay
                              : operator_delay_.exponential_time(operator_.restart_delay);
  tasks_[static_cast<std::size_t>(task)]->restart_at(sim_.now() + delay);
}

sim::Time ConnectCluster::downtime(sim::Time now) const {
  sim::Time total = counters_.downtime;
  for (const auto& t : tasks_) total += t->down_for(now);
  return total;
}

}  // namespace pipesim::connect
