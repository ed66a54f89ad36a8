#include "models/connect/connect_cluster.h"

#include <algorithm>
#include <cmath>

#include "sim/engine/interrupt.h"
#include "sim/engine/invariant.h"

namespace pipesim::connect {

ConnectCluster::ConnectCluster(sim::Simulation& sim, const ConnectOptions& connect,
                               const OperatorOptions& operator_options,
                               const std::string& connector_name, int partitions,
                               const FetchSettings& fetch, LogView& view,
                               const sink::SinkDependencies& deps, bool exactly_once,
                               std::uint64_t seed)
    : sim_(sim),
      options_(connect),
      operator_(operator_options),
      connector_name_(connector_name),
      partitions_(partitions),
      group_(partitions),
      keeper_map_state_(partitions, true),
      worker_down_(static_cast<std::size_t>(connect.workers), false),
      awaiting_delayed_rebalance_(static_cast<std::size_t>(connect.workers), false),
      owner_(static_cast<std::size_t>(partitions), nullptr),
      operator_delay_(seed, "operator/restart-delay"),
      commit_phase_(seed, "connect/commit-phase"),
      id_(sim.add_component(this)) {
  // The KeeperMap table's committed writes land in the shared state.
  if (exactly_once && deps.keeper_map != nullptr) deps.keeper_map->set_rows(&keeper_map_state_);
  const int task_count = static_cast<int>(connect.tasks_max);
  for (int t = 0; t < task_count; ++t) {
    // Thousands of tasks of thousands of partitions take seconds to build: Ctrl-C acts
    // within a second whatever the config (sim/engine/interrupt.h).
    sim::throw_if_interrupted();
    sink::SinkStateStore* state = &keeper_map_state_;
    if (!exactly_once) {
      in_memory_states_.push_back(std::make_unique<sink::SinkStateStore>(partitions, false));
      state = in_memory_states_.back().get();
    }
    tasks_.push_back(std::make_unique<WorkerSinkTask>(sim, t, connect, fetch, group_, view, deps,
                                                      state, counters_, *this));
    worker_of_.push_back(t % static_cast<int>(connect.workers));
  }
  for (int w = 0; w < static_cast<int>(connect.workers); ++w) worker_join_order_.push_back(w);
  member_.assign(tasks_.size(), false);
  awaiting_.assign(tasks_.size(), false);
  failures_since_progress_.assign(tasks_.size(), 0);
  failed_partition_.assign(tasks_.size(), -1);
  failed_error_.assign(tasks_.size(), sink::DecisionError::NONE);
  remediate_.assign(tasks_.size(), false);
}

void ConnectCluster::start() {
  for (auto& t : tasks_) {
    t->start_at(sim_.now());
    if (options_.commit_phase == "random") {
      // Started at an arbitrary moment before the run: its first commit
      // comes after a uniform share (0, 1] of the interval.
      const double share = 1.0 - commit_phase_.uniform01();
      const auto us = static_cast<std::int64_t>(
          std::ceil(share * static_cast<double>(options_.offset_flush_interval.us)));
      t->set_first_commit(sim_.now() + sim::Time{std::max<std::int64_t>(us, 1)});
    }
  }
}

// --- consumer group -------------------------------------------------------

void ConnectCluster::request_rebalance() {
  // Each call visits every task: with thousands of tasks starting at once, the first
  // rebalance's calls take seconds inside one event (Ctrl-C acts within a second).
  sim::throw_if_interrupted();
  rebalancing_ = true;
  for (auto& t : tasks_) {
    const auto i = static_cast<std::size_t>(t->index());
    if (!member_[i] || t->joining() || awaiting_[i]) continue;
    awaiting_[i] = true;
    t->begin_rebalance();  // may call task_joined() at once
  }
  try_complete_rebalance();
}

void ConnectCluster::try_complete_rebalance() {
  if (!rebalancing_ || completion_scheduled_) return;
  if (unevicted_ > 0) return;  // the coordinator waits for the dead member's session to expire
  if (std::any_of(awaiting_.begin(), awaiting_.end(), [](bool a) { return a; })) return;
  completion_scheduled_ = true;
  plan(options_.rebalance_time, kCompleteRebalance);
}

void ConnectCluster::complete_rebalance() {
  completion_scheduled_ = false;
  if (unevicted_ > 0 || std::any_of(awaiting_.begin(), awaiting_.end(), [](bool a) { return a; })) {
    return;  // membership changed meanwhile; the last change completes it
  }
  std::vector<int> members;
  std::vector<std::string> member_ids;
  for (auto& t : tasks_) {
    if (!member_[static_cast<std::size_t>(t->index())]) continue;
    members.push_back(t->index());
    member_ids.push_back(ConsumerGroup::member_id(connector_name_, t->index()));
  }
  const auto assignment = ConsumerGroup::range_assign(partitions_, member_ids);
  std::fill(owner_.begin(), owner_.end(), nullptr);
  rebalancing_ = false;
  ++counters_.rebalances;
  if (sim_.trace() && counters_.rebalances > 1) {
    std::string text = "rebalance of connect-" + connector_name_ + " done:";
    for (std::size_t m = 0; m < members.size(); ++m) {
      text += " " + task(members[m]).name() + " reads";
      for (const int p : assignment[m]) {
        text += " p" + std::to_string(p) + "@" + std::to_string(group_.committed(p));
      }
      text += ";";
    }
    if (members.empty()) text += " no live member, nobody reads";
    story("rebalance", text);
  }
  for (std::size_t m = 0; m < members.size(); ++m) {
    for (const int p : assignment[m]) owner_[static_cast<std::size_t>(p)] = &task(members[m]);
  }
  // A member's assign() may reenter (a task catching up at once reverts
  // tolerateStateMismatch: every task restarts, leaves and rejoins). Each
  // member gets the SyncGroup answer of the generation it joined: one that
  // left meanwhile is no longer in it (its new instance joins the next
  // generation), and once a new rebalance has begun the rest wait for it.
  for (std::size_t m = 0; m < members.size() && !rebalancing_; ++m) {
    if (member_[static_cast<std::size_t>(members[m])]) task(members[m]).assign(assignment[m]);
  }
}

void ConnectCluster::task_joined(int t) {
  awaiting_[static_cast<std::size_t>(t)] = false;
  try_complete_rebalance();
}

void ConnectCluster::task_started(int t) {
  member_[static_cast<std::size_t>(t)] = true;
  request_rebalance();
}

void ConnectCluster::remove_member(int t) {
  const auto i = static_cast<std::size_t>(t);
  member_[i] = false;
  awaiting_[i] = false;
  for (auto& o : owner_) {
    if (o == &task(t)) o = nullptr;
  }
}

void ConnectCluster::task_left(int t) {
  // A consumer that already left (its poll timeout expired) is not a member:
  // nothing to do.
  if (!member_[static_cast<std::size_t>(t)]) return;
  // consumer.close() sends LeaveGroup: the coordinator rebalances at once.
  remove_member(t);
  request_rebalance();
}

void ConnectCluster::on_data(int partition) {
  if (WorkerSinkTask* t = owner_[static_cast<std::size_t>(partition)]) t->on_data(partition);
}

void ConnectCluster::before_view_change() {
  for (auto& t : tasks_) t->before_view_change();
}

void ConnectCluster::after_view_change() {
  for (auto& t : tasks_) t->after_view_change();
}

void ConnectCluster::on_leader(int partition) {
  if (WorkerSinkTask* t = owner_[static_cast<std::size_t>(partition)]) t->on_leader(partition);
}

void ConnectCluster::on_log_truncated(int partition, std::int64_t end_offset) {
  group_.truncate(partition, end_offset);
  for (auto& t : tasks_) t->on_log_truncated(partition, end_offset);
}

// --- workers ----------------------------------------------------------------

void ConnectCluster::story(const std::string& name, const std::string& text) {
  if (auto* t = sim_.trace()) t->story(sim_.now(), "connect", name, text);
}

void ConnectCluster::kill_worker(int worker) {
  if (worker_down_[static_cast<std::size_t>(worker)]) return;
  if (sim_.trace()) {
    std::string text =
        "worker-" + std::to_string(worker) + " killed (kill -9): nothing is committed";
    for (auto& t : tasks_) {
      if (worker_of(t->index()) != worker || t->status() != TaskStatus::RUNNING) continue;
      for (const int p : t->partitions()) {
        text += "; partition " + std::to_string(p) + " (" + t->name() +
                "): last commit at offset " + std::to_string(group_.committed(p)) + " (" +
                sim::format_clock(group_.committed_at(p)) + "), " +
                std::to_string(t->put_position_of(p) - group_.committed(p)) + " records put since";
      }
    }
    story("worker_crash", text);
  }
  worker_down_[static_cast<std::size_t>(worker)] = true;
  for (auto& t : tasks_) {
    if (worker_of(t->index()) != worker || t->status() == TaskStatus::DOWN) continue;
    const bool was_member = member_[static_cast<std::size_t>(t->index())];
    t->kill();
    remove_member(t->index());
    if (was_member) {
      // Nobody notices until the member's session expires.
      ++unevicted_;
      plan(options_.session_timeout, kEvict, static_cast<std::uint32_t>(t->index()));
    }
  }
  plan(options_.worker_restart_delay, kWorkerBack, static_cast<std::uint32_t>(worker));
  const bool was_leader = worker_join_order_.front() == worker;
  worker_join_order_.erase(std::find(worker_join_order_.begin(), worker_join_order_.end(), worker));
  if (options_.workers > 1 && !worker_join_order_.empty()) {
    // The worker group notices the departure after its session timeout and
    // rebalances (Kafka 3.7 IncrementalCooperativeAssignor):
    // - the leader died: the new leader's view of the previous assignment is
    //   cleared (previousGenerationId != lastCompletedGenerationId), so the
    //   departed worker's tasks are not "lost" but unassigned, and are
    //   assigned at once, like new tasks;
    // - a follower died: handleLostAssignments keeps its tasks unassigned
    //   until scheduled.rebalance.max.delay.ms has passed (0: at once), even
    //   if the worker is back earlier; then they go to the candidate workers
    //   (members with no assignment, i.e. the worker if it is back), else to
    //   the others.
    const bool delayed = !was_leader && options_.scheduled_rebalance_max_delay.us > 0;
    awaiting_delayed_rebalance_[static_cast<std::size_t>(worker)] = delayed;
    plan(options_.worker_session_timeout + (delayed ? options_.scheduled_rebalance_max_delay : sim::Time{}),
         kMoveTasks, static_cast<std::uint32_t>(worker));
  }
}

void ConnectCluster::start_tasks_of(int worker) {
  for (auto& t : tasks_) {
    if (worker_of(t->index()) == worker && t->status() == TaskStatus::DOWN) t->start_at(sim_.now());
  }
}

void ConnectCluster::restart_task(int t) { task(t).restart_gracefully(0); }

void ConnectCluster::rebalance(std::int64_t max_poll_records) {
  if (max_poll_records > 0) {
    // A connector config update restarts every task with the new config.
    for (auto& t : tasks_) t->restart_gracefully(max_poll_records);
    return;
  }
  request_rebalance();
}

void ConnectCluster::plan(sim::Time delay, std::uint32_t type, std::uint32_t arg) {
  const sim::Time at = sim_.now() + delay;
  planned_.insert(at);
  if (plans_) plans_->connect_change_planned(at);
  sim_.schedule(at, id_, type, arg);
}

bool ConnectCluster::settled() const {
  if (rebalancing_ || unevicted_ > 0) return false;
  return std::none_of(worker_down_.begin(), worker_down_.end(), [](bool d) { return d; });
}

void ConnectCluster::handle(const sim::Event& e) {
  // Every event of the cluster is a planned change.
  if (const auto it = planned_.find(e.at); it != planned_.end()) planned_.erase(it);
  switch (e.type) {
    case kCompleteRebalance:
      complete_rebalance();
      return;
    case kEvict:
      --unevicted_;
      story("evict", "the group coordinator evicts task-" + std::to_string(e.arg) + "'s consumer (on worker-" +
                         std::to_string(worker_of(static_cast<int>(e.arg))) +
                         ", dead): its session.timeout.ms (" +
                         std::to_string(options_.session_timeout.us / 1000) + " ms) expired");
      request_rebalance();
      return;
    case kWorkerBack: {
      const auto w = static_cast<int>(e.arg);
      if (!worker_down_[static_cast<std::size_t>(w)]) return;
      worker_down_[static_cast<std::size_t>(w)] = false;
      worker_join_order_.push_back(w);
      if (awaiting_delayed_rebalance_[static_cast<std::size_t>(w)]) {
        story("worker_back", "worker-" + std::to_string(w) +
                                 " is back; its tasks stay unassigned until the delayed rebalance "
                                 "(scheduled.rebalance.max.delay.ms after the worker group noticed it left)");
        return;
      }
      story("worker_back", "worker-" + std::to_string(w) + " is back and starts its tasks");
      start_tasks_of(w);
      return;
    }
    case kMoveTasks: {
      const auto w = static_cast<int>(e.arg);
      const bool delayed = awaiting_delayed_rebalance_[static_cast<std::size_t>(w)];
      awaiting_delayed_rebalance_[static_cast<std::size_t>(w)] = false;
      if (!worker_down_[static_cast<std::size_t>(w)]) {
        // Back before the delayed rebalance: the worker has no assignment, so
        // it is the candidate that gets its lost tasks.
        if (!delayed) return;
        story("delayed_rebalance", "the delayed rebalance gives worker-" + std::to_string(w) +
                                       "'s tasks back to it");
        start_tasks_of(w);
        return;
      }
      story("move_tasks", "worker-" + std::to_string(w) +
                              (delayed ? " stayed away past scheduled.rebalance.max.delay.ms: "
                                         "its tasks start on the surviving workers"
                                       : " was the worker group's leader: the new leader does not "
                                         "know its tasks were assigned and starts them on the "
                                         "surviving workers at once"));
      int next = 0;
      for (auto& t : tasks_) {
        if (worker_of(t->index()) != w || t->status() != TaskStatus::DOWN) continue;
        // The next surviving worker in turn.
        for (int k = 1; k <= options_.workers; ++k) {
          const int candidate = (w + next + k) % static_cast<int>(options_.workers);
          if (!worker_down_[static_cast<std::size_t>(candidate)]) {
            worker_of_[static_cast<std::size_t>(t->index())] = candidate;
            ++next;
            break;
          }
        }
        if (worker_of(t->index()) != w) t->start_at(sim_.now());
      }
      return;
    }
    case kOperatorRestart: {
      const auto t = static_cast<int>(e.arg);
      if (task(t).status() != TaskStatus::FAILED) return;
      const auto i = static_cast<std::size_t>(t);
      if (remediate_[i]) {
        // The restart failed again: apply the runbook before this restart.
        if (operator_.remediation != "restart_only") {
          story("remediation", "the restart failed again: the operator applies " +
                                   operator_.remediation + " for " + task(t).name());
        }
        if (operator_.remediation == "delete_state_row" && failed_partition_[i] >= 0) {
          // The documented troubleshooting step: delete the partition's row
          // from the state table, so the replay is inserted again.
          task(t).connector().state().reset(failed_partition_[i]);
        } else if (operator_.remediation == "tolerate_then_revert" && !tolerate_override_) {
          tolerate_watch_task_ = t;
          set_tolerate_state_mismatch(true);
          restart_for_config_change("tolerateStateMismatch=true");  // this task among them
          return;
        }
      }
      story("operator_restart", "the operator restarts " + task(t).name());
      if (!worker_down_[static_cast<std::size_t>(worker_of(t))]) task(t).start_at(sim_.now());
      return;
    }
    default:
      PIPESIM_INVARIANT(false, "unknown cluster event");
  }
}

// --- operator ---------------------------------------------------------------

void ConnectCluster::task_failed(int t, const sink::PutFailure& failure) {
  const auto i = static_cast<std::size_t>(t);
  // The restart failed again: no put returned since the last failure, or the
  // same error on the same partition as then (a restart that put other
  // partitions' records first, then stopped where it stopped before).
  remediate_[i] = failures_since_progress_[i] > 0 ||
                  (failure.start_error == nullptr && failure.partition == failed_partition_[i] &&
                   failure.error == failed_error_[i]);
  ++failures_since_progress_[i];
  failed_partition_[i] = failure.partition;
  failed_error_[i] = failure.error;
  if (failure.start_error != nullptr) {
    story("task_failed", task(t).name() + " FAILED at start (" + failure.start_error +
                             "): a start query reached a ClickHouse server that is down; it "
                             "stays FAILED until someone restarts it");
  } else {
    story("task_failed",
          task(t).name() + " FAILED (" +
              (failure.error == sink::DecisionError::NONE
                   ? std::string("Tolerance exceeded in error handler")
                   : std::string(sink::to_string(failure.error))) +
              ", partition " + std::to_string(failure.partition) +
              "); its consumer leaves the group; it stays FAILED until someone restarts it");
  }
  // The FAILED task's consumer closes and leaves the group: its partitions
  // move to the other tasks, which may fail on them in turn.
  task_left(t);
  const bool first = !remediate_[i] || operator_.remediation == "restart_only";
  sim::Time delay;
  if (!first) {
    delay = operator_.remediation_delay;
  } else if (operator_.restart_delay_distribution == "fixed") {
    delay = operator_.restart_delay;
  } else {
    delay = operator_delay_.exponential_time(operator_.restart_delay);
  }
  plan(delay, kOperatorRestart, static_cast<std::uint32_t>(t));
}

void ConnectCluster::task_progressed(int t) {
  failures_since_progress_[static_cast<std::size_t>(t)] = 0;
}

void ConnectCluster::task_caught_up(int t) {
  // Caught up: a later failure is a new incident, not this one again.
  failed_partition_[static_cast<std::size_t>(t)] = -1;
  if (!tolerate_override_ || t != tolerate_watch_task_) return;
  // Caught up: the engineer reverts tolerateStateMismatch to false, a config
  // change that restarts every task.
  tolerate_watch_task_ = -1;
  set_tolerate_state_mismatch(false);
  restart_for_config_change("tolerateStateMismatch=false");
}

// A PUT of the connector's config (Kafka 3.7 DistributedHerder: the
// connector restarts, its new task configs are written, and the assignor
// revokes and restarts every task of the connector): a running task stops
// gracefully and starts again, a FAILED one starts again (it has a new
// config), a task of a worker that is down starts when its worker is back.
void ConnectCluster::restart_for_config_change(const std::string& change) {
  story("config_change", change + ": a config change of the connector, so every task restarts");
  for (auto& t : tasks_) {
    if (t->status() == TaskStatus::RUNNING) {
      t->restart_gracefully(0);
    } else if (t->status() == TaskStatus::FAILED &&
               !worker_down_[static_cast<std::size_t>(worker_of(t->index()))]) {
      t->start_at(sim_.now());
    }
  }
}

void ConnectCluster::set_tolerate_state_mismatch(bool on) {
  tolerate_override_ = on;
  for (auto& t : tasks_) t->connector().set_tolerate_state_mismatch(on);
}

bool ConnectCluster::healthy() const {
  for (const auto& t : tasks_) {
    if (t->status() != TaskStatus::RUNNING) return false;
  }
  for (const int f : failures_since_progress_) {
    if (f > 0) return false;
  }
  return true;
}

sim::Time ConnectCluster::downtime(sim::Time now) const {
  sim::Time total = counters_.downtime;
  for (const auto& t : tasks_) total += t->down_for(now);
  return total;
}

}  // namespace pipesim::connect
