// A WorkerSinkTask's life: starting an instance (the connector's start()),
// going down (failed, killed), rebalances (revoke, assign, the partitions it
// drops), a graceful restart with new settings, cancel and stop-and-restart.
#include "models/connect/worker_sink_task.h"

#include <algorithm>

#include "sim/engine/invariant.h"

namespace pipesim::connect {

void WorkerSinkTask::start_instance() {
  if (status_ != TaskStatus::RUNNING) counters_.downtime += sim_.now() - down_since_;
  status_ = TaskStatus::RUNNING;
  ++counters_.restarts;
  if (next_max_poll_records_ > 0) max_poll_records_ = next_max_poll_records_;
  next_max_poll_records_ = 0;
  partitions_.clear();
  fetcher_.clear();
  put_position_.clear();
  batch_.clear();
  in_put_ = false;
  paused_for_redelivery_ = false;
  waiting_for_data_ = false;
  revoke_pending_ = false;
  stop_pending_ = false;
  cancelled_ = false;
  watchdog_pending_ = false;  // the previous instance's died with sim_.crash
  left_group_ = false;
  joining_ = true;
  next_commit_ = first_commit_ != sim::Time::max() ? first_commit_
                                                   : sim_.now() + options_.offset_flush_interval;
  first_commit_ = sim::Time::max();
  // initializeAndStart: SinkTask.start runs before the first poll, so the
  // consumer joins the group only once it returned.
  if (connector_.start()) listener_.task_started(index_);
}

void WorkerSinkTask::start_finished(bool ok, const char* error) {
  if (ok) {
    listener_.task_started(index_);
    return;
  }
  // SinkTask.start threw: the task is FAILED before its consumer ever polled.
  ++counters_.failures;
  go_down(TaskStatus::FAILED);
  listener_.task_failed(index_, sink::PutFailure{-1, sink::DecisionError::NONE, error});
}

void WorkerSinkTask::go_down(TaskStatus status) {
  if (status_ == TaskStatus::RUNNING) down_since_ = sim_.now();
  aggregate_ = false;
  steady_puts_ = 0;
  full_puts_ = 0;
  status_ = status;
  sim_.crash(id_);  // every pending event of this instance is dropped
  in_put_ = false;
  ready_ = false;
  waiting_for_data_ = false;
  joining_ = false;
  revoke_pending_ = false;
  stop_pending_ = false;
  cancelled_ = false;
  watchdog_pending_ = false;
  left_group_ = false;
  partitions_.clear();
  fetcher_.clear();
  put_position_.clear();
}

void WorkerSinkTask::kill() {
  if (status_ == TaskStatus::DOWN) return;
  if (aggregate_) leave_aggregate();
  go_down(TaskStatus::DOWN);
}

void WorkerSinkTask::begin_rebalance() {
  if (status_ != TaskStatus::RUNNING || joining_) return;
  if (aggregate_) leave_aggregate();
  // The rebalance happens inside poll(): an ongoing put() ends first.
  if (in_put_) {
    revoke_pending_ = true;
    return;
  }
  revoke();
}

void WorkerSinkTask::revoke() {
  // onPartitionsRevoked: preCommit, then a synchronous commit of the revoked
  // partitions. A batch waiting for redelivery was not put, so not committed.
  commit_offsets(true);
  drop_partitions();
  listener_.task_joined(index_);
}

// The partitions are gone (revoked or lost): what was read of them, a batch
// waiting for redelivery and a pending wake-up go with them; the task waits
// for its next assignment.
void WorkerSinkTask::drop_partitions() {
  connector_.close();
  partitions_.clear();
  fetcher_.clear();
  put_position_.clear();
  batch_.clear();
  paused_for_redelivery_ = false;
  waiting_for_data_ = false;
  ++wait_generation_;
  joining_ = true;
}

void WorkerSinkTask::assign(std::vector<int> partitions) {
  if (status_ != TaskStatus::RUNNING) return;
  partitions_ = std::move(partitions);
  put_position_.clear();
  for (const int p : partitions_) put_position_.push_back(group_.committed(p));
  fetcher_.assign(partitions_, put_position_);
  joining_ = false;
  ready_ = true;
  run_iterations();
}

void WorkerSinkTask::restart_gracefully(std::int64_t max_poll_records) {
  if (max_poll_records > 0) next_max_poll_records_ = max_poll_records;
  if (status_ != TaskStatus::RUNNING) return;  // the next start picks up the new config
  if (aggregate_) leave_aggregate();
  if (in_put_) {
    stop_pending_ = true;
    sim_.schedule_in(options_.task_shutdown_graceful_timeout, id_, kStopTimeout);
    return;
  }
  stop_and_restart(true);
}

// task.shutdown.graceful.timeout.ms passed with put() still running
// (Worker.awaitStopTask -> WorkerTask.cancel, Kafka 3.7): the worker gives up
// waiting and starts the new instance, but nothing stops the old one. Its
// put() runs to its end, and it stays a member of the group until then:
// execute()'s loop sees isStopping, closeAllPartitions skips the commit
// ("Skipping final offset commit as task has been cancelled") and
// consumer.close() leaves the group. A failure of that put is not reported
// (onFailure skips the status update of a cancelled task). The new
// instance's consumer asks to join at once, so the other members revoke
// now; the rebalance waits for the old member to leave.
//
// Modelled in one object: the new instance starts (SinkTask.start, then
// its join) when the old put ends. Should the old put outlive
// max.poll.interval.ms first, its consumer leaves the group then and the
// new instance takes over at that moment: the old put's remaining steps
// are dropped there (the inserts it already sent still land), where the
// real orphan would go on inserting beside the new instance.
void WorkerSinkTask::cancel() {
  ++counters_.abandoned_stops;
  cancelled_ = true;
  if (auto* t = sim_.trace()) {
    t->story(sim_.now(), name_, "stop_abandoned",
             name_ + "'s put() outlived task.shutdown.graceful.timeout.ms (" +
                 std::to_string(options_.task_shutdown_graceful_timeout.us / 1000) +
                 " ms): the worker cancels it and starts a new instance; the old put goes on, "
                 "its consumer stays in the group until the put ends, and nothing of it is "
                 "committed");
  }
  listener_.task_started(index_);  // the new instance's consumer asks to join
}

void WorkerSinkTask::stop_and_restart(bool commit) {
  if (cancelled_ && sim_.trace()) {
    sim_.trace()->story(sim_.now(), name_, "orphan_gone",
                        name_ + "'s cancelled instance " +
                            (in_put_ ? std::string("left the group (max.poll.interval.ms)")
                                     : std::string("finished its put")) +
                            " without a commit; the new instance takes over");
  }
  // A consumer that already left the group (poll timeout) can neither commit
  // nor leave again.
  if (commit && !joining_ && !left_group_) commit_offsets(true);
  if (!left_group_) listener_.task_left(index_);
  sim_.crash(id_);  // the old instance's timers and put steps die with it
  start_instance();
}

}  // namespace pipesim::connect
