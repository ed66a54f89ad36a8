#include "models/connect/worker_sink_task.h"

#include <algorithm>

#include "sim/engine/invariant.h"

namespace pipesim::connect {

WorkerSinkTask::WorkerSinkTask(sim::Simulation& sim, int index, const ConnectOptions& options,
                               const FetchSettings& fetch, ConsumerGroup& group, LogView& view,
                               const sink::SinkDependencies& deps, sink::SinkStateStore* state,
                               TaskCounters& counters, TaskListener& listener)
    : sim_(sim),
      index_(index),
      name_("task-" + std::to_string(index)),
      options_(options),
      group_(group),
      view_(view),
      fetcher_(fetch),
      counters_(counters),
      listener_(listener),
      connector_(*this, deps, state),
      id_(sim.add_component(this)),
      max_poll_records_(options.max_poll_records) {}

std::size_t WorkerSinkTask::slot_of(int partition) const {
  const auto it = std::find(partitions_.begin(), partitions_.end(), partition);
  return static_cast<std::size_t>(it - partitions_.begin());
}

std::int64_t WorkerSinkTask::put_position_of(int partition) const {
  const std::size_t slot = slot_of(partition);
  return slot < put_position_.size() ? put_position_[slot] : -1;
}

void WorkerSinkTask::start_at(sim::Time at) { sim_.schedule(at, id_, kStart); }

void WorkerSinkTask::on_log_truncated(int partition, std::int64_t end_offset) {
  // KIP-320: the consumer detects the truncation through the leader epoch and
  // seeks back to the divergence point (auto.offset.reset is set).
  const std::size_t slot = slot_of(partition);
  if (slot >= partitions_.size()) return;
  if (aggregate_) leave_aggregate();
  fetcher_.seek(partition, end_offset);
  put_position_[slot] = std::min(put_position_[slot], end_offset);
}

void WorkerSinkTask::on_data(int partition) {
  if (status_ != TaskStatus::RUNNING || joining_ || aggregate_ ||
      slot_of(partition) >= partitions_.size()) {
    return;
  }
  // A fetch waiting at the broker for this partition may be answered now.
  if (fetcher_.on_visible(partition, sim_.now(), view_, waiting_for_data_) && waiting_for_data_) {
    wait_for_data(fetcher_.next_response(view_));
  }
}

void WorkerSinkTask::before_view_change() {
  if (status_ != TaskStatus::RUNNING || joining_ || aggregate_) return;
  fetcher_.settle(sim_.now(), view_, waiting_for_data_);
}

void WorkerSinkTask::after_view_change() {
  if (status_ != TaskStatus::RUNNING || joining_ || aggregate_ || !waiting_for_data_) return;
  wait_for_data(fetcher_.next_response(view_));
}

void WorkerSinkTask::on_leader(int partition) {
  if (status_ != TaskStatus::RUNNING || joining_ || aggregate_ ||
      slot_of(partition) >= partitions_.size()) {
    return;
  }
  // A poll blocked without a fetch for it sends one to the new leader now.
  if (waiting_for_data_) wait_for_data(sim_.now());
}

void WorkerSinkTask::handle(const sim::Event& event) {
  switch (event.type) {
    case kStart:
      if (status_ != TaskStatus::RUNNING) start_instance();
      return;
    case kIterate:
      if (event.arg != wait_generation_ || in_put_) return;  // superseded wake-up
      // A consumer that waited in poll kept fetching meanwhile.
      blocked_poll_ = waiting_for_data_;
      waiting_for_data_ = false;
      ready_ = true;
      run_iterations();
      return;
    case kRedeliver:
      if (event.arg != wait_generation_ || in_put_ || !paused_for_redelivery_) return;
      redeliver();
      run_iterations();
      return;
    case kConnectorStep:
      connector_.step();
      run_iterations();
      return;
    case kInsertAnswer:
      // ClickHouse answers an insert; a task that failed or stopped since
      // sent it no longer listens.
      if (status_ != TaskStatus::RUNNING || !in_put_) return;
      connector_.on_insert_answer(event.arg);
      run_iterations();
      return;
    case kPollTimeout:
      watchdog_pending_ = false;
      poll_timeout();
      return;
    case kStopTimeout:
      if (!stop_pending_ || !in_put_ || cancelled_) return;
      cancel();
      return;
    default:
      PIPESIM_INVARIANT(false, "unknown task event");
  }
}

void WorkerSinkTask::schedule_step(sim::Time delay) {
  sim_.schedule_in(delay, id_, kConnectorStep);
}

// A trampoline: put() may finish synchronously (a skipped batch), and the next
// iteration then runs here rather than deeper on the stack.
void WorkerSinkTask::run_iterations() {
  if (running_loop_) return;
  running_loop_ = true;
  while (ready_ && status_ == TaskStatus::RUNNING) {
    ready_ = false;
    iteration();
  }
  running_loop_ = false;
}

void WorkerSinkTask::iteration() {
  if (joining_ || in_put_) return;
  const sim::Time now = sim_.now();
  if (blocked_poll_ && now >= next_commit_ && connector_.time_flush_due(now)) {
    // poll(timeout) returned nothing at its timeout and deliverMessages puts
    // the empty batch: the connector's buffer flushes by time, before the
    // next iteration's commit.
    blocked_poll_ = false;
    batch_.clear();
    put_started_ = now;
    start_put();
    return;
  }
  if (now >= next_commit_) {
    commit_offsets(false);
    next_commit_ = now + options_.offset_flush_interval;
  }
  if (paused_for_redelivery_) {
    // The consumer is paused, so poll(nextCommit - now) returns nothing after
    // waiting its full timeout; deliverMessages() then puts the same batch
    // again, before the next iteration's commit check.
    if (now < next_commit_) {
      sim_.schedule(next_commit_, id_, kRedeliver, ++wait_generation_);
      return;
    }
    redeliver();
    return;
  }
  batch_.clear();
  put_started_ = now;
  const Fetcher::PollResult polled = poll(batch_);
  if (!polled.records) {
    // Caught up: nothing returned and nothing left to read (the consumer's
    // records-lag is 0), not merely a fetch still on its way.
    bool caught_up = true;
    for (const int p : partitions_)
      caught_up = caught_up && fetcher_.position(p) >= view_.high_watermark(p);
    if (caught_up) listener_.task_caught_up(index_);
    if (status_ == TaskStatus::RUNNING && !joining_ && !in_put_) wait_for_data(polled.wake_at);
    return;
  }
  start_put();
}

void WorkerSinkTask::start_put() {
  in_put_ = true;
  if (!watchdog_pending_ && !left_group_) {
    watchdog_pending_ = true;
    sim_.schedule(put_started_ + options_.max_poll_interval, id_, kPollTimeout);
  }
  connector_.put(batch_);
}

// KIP-62 (AbstractCoordinator's heartbeat thread): when poll() has not been
// called for max.poll.interval.ms the member sends LeaveGroup, and the group
// rebalances without it while its put() goes on.
void WorkerSinkTask::poll_timeout() {
  if (status_ != TaskStatus::RUNNING || !in_put_ || left_group_ || joining_) return;
  const sim::Time due = put_started_ + options_.max_poll_interval;
  if (sim_.now() < due) {  // a later put is running: watch that one
    watchdog_pending_ = true;
    sim_.schedule(due, id_, kPollTimeout);
    return;
  }
  left_group_ = true;
  revoke_pending_ = false;  // no longer a member: no revocation to do
  ++counters_.poll_timeouts;
  if (auto* t = sim_.trace()) {
    t->story(
        sim_.now(), name_, "poll_timeout",
        name_ + "'s put() has run for max.poll.interval.ms (" +
            std::to_string(options_.max_poll_interval.us / 1000) +
            " ms): its consumer leaves the group; the offsets of this put will not be committed");
  }
  listener_.task_left(index_);
  // A cancelled instance's consumer is gone: the new instance takes over.
  if (cancelled_) stop_and_restart(false);
}

// After the put that outlived the poll timeout: the next poll() finds the
// member gone; onJoinPrepare calls onPartitionsLost (no commit: the
// generation is no longer valid) and the consumer joins again.
void WorkerSinkTask::rejoin_after_poll_timeout() {
  left_group_ = false;
  drop_partitions();
  listener_.task_started(index_);  // a join request, as a new instance's
}

void WorkerSinkTask::redeliver() {
  ++counters_.redeliveries;
  if (auto* t = sim_.trace()) {
    std::string ranges;
    for (const auto& pb : batch_) {
      ranges += (ranges.empty() ? "" : ", ") + std::string("p") + std::to_string(pb.partition) +
                " [" + std::to_string(pb.offsets.min) + ", " + std::to_string(pb.offsets.max) + "]";
    }
    t->story(sim_.now(), name_, "redelivery",
             name_ + " puts the same batch again after the RetriableException (" + ranges + ")");
  }
  for (auto& pb : batch_) pb.tag = ledger::InsertTag::REDELIVERY;
  put_started_ = sim_.now();
  start_put();
}

Fetcher::PollResult WorkerSinkTask::poll(std::vector<sink::PartitionBatch>& out) {
  ++counters_.polls;
  const Fetcher::PollResult result =
      fetcher_.poll(sim_.now(), view_, max_poll_records_, out, blocked_poll_);
  blocked_poll_ = false;
  for (auto& pb : out) {
    // Offsets handed to put() before (by any task): a replay.
    const bool replay = pb.offsets.min < group_.delivered(pb.partition);
    pb.tag = replay ? ledger::InsertTag::REPLAY : ledger::InsertTag::NORMAL;
    group_.note_delivered(pb.partition, pb.offsets.max + 1);
  }
  return result;
}

void WorkerSinkTask::wait_for_data(sim::Time response) {
  // poll(nextCommit - now) blocks until a fetch response brings records or
  // the commit is due.
  waiting_for_data_ = true;
  const sim::Time wake = std::max(std::min(response, next_commit_), sim_.now());
  sim_.schedule(wake, id_, kIterate, ++wait_generation_);
}

void WorkerSinkTask::commit_offsets(bool closing) {
  ++counters_.commits;
  // commitOffsets: task.preCommit(currentOffsets) says what to commit; an
  // offset it leaves out keeps the last committed one, and one past the
  // current offset is ignored ("not yet consumed").
  task_offsets_ = put_position_;
  connector_.pre_commit(partitions_, task_offsets_);
  if (!closing && !group_.coordinator_available()) {
    // doCommitAsync: the OffsetCommit finds no coordinator (its broker is
    // dead and not yet fenced, so __consumer_offsets has no leader that
    // answers); the callback gets a RetriableCommitFailedException and
    // onCommitCompleted counts a commit failure. Nothing is retried: the
    // next try is the next offset.flush.interval.ms, so the committed
    // offsets stay behind. (The answer comes at once: a killed broker
    // refuses connections. A commit in flight blocks the next one, up to
    // offset.flush.timeout.ms, which a refusal never reaches.)
    // A closing commit is commitSync, which looks the coordinator up again
    // until default.api.timeout.ms (60 s); the fenced broker's partition
    // has a new leader after broker.session.timeout.ms, so it succeeds:
    // modelled as at once (the wait is not).
    ++counters_.commit_failures;
    if (auto* t = sim_.trace()) {
      t->story(sim_.now(), name_, "commit_failed",
               name_ +
                   "'s offset commit failed: the group coordinator (leader of "
                   "__consumer_offsets-" +
                   std::to_string(group_.offsets_partition()) +
                   ") does not answer; the committed offsets stay where they were until the next "
                   "commit, one offset.flush.interval.ms later");
    }
    return;
  }
  for (std::size_t slot = 0; slot < partitions_.size(); ++slot) {
    const int p = partitions_[slot];
    PIPESIM_INVARIANT(put_position_[slot] <= fetcher_.position(p),
                      "commit beyond the consumed position");
    PIPESIM_INVARIANT(put_position_[slot] >= group_.committed(p),
                      "committed offset would move backwards");
    group_.note_high_watermark(p, view_.high_watermark(p));
    const std::int64_t offset = task_offsets_[slot];
    if (offset < 0 || offset > put_position_[slot]) continue;
    group_.commit(p, offset, sim_.now());
  }
  if (auto* t = sim_.trace(); t && t->detail_at(sim_.now()) && !partitions_.empty()) {
    nlohmann::json offsets = nlohmann::json::object();
    for (const int p : partitions_) offsets[std::to_string(p)] = group_.committed(p);
    t->instant(sim_.now(), name_, "commit", {{"offsets", offsets}});
  }
}

void WorkerSinkTask::put_finished(sink::PutOutcome outcome, sink::PutFailure failure) {
  in_put_ = false;
  if (auto* t = sim_.trace(); t && t->detail_at(sim_.now())) {
    nlohmann::json ranges = nlohmann::json::array();
    for (const auto& pb : batch_) ranges.push_back({pb.partition, pb.offsets.min, pb.offsets.max});
    static const char* kOutcome[] = {"returned", "retriable", "failed"};
    t->span(put_started_, sim_.now() - put_started_, name_, "put",
            {{"batch", ranges}, {"outcome", kOutcome[static_cast<int>(outcome)]}});
  }
  switch (outcome) {
    case sink::PutOutcome::RETURNED:
      fetcher_.set_paused(false);
      for (const auto& pb : batch_) {
        const std::size_t slot = slot_of(pb.partition);
        if (slot < partitions_.size())
          put_position_[slot] = std::max(put_position_[slot], pb.offsets.max + 1);
      }
      note_steady_put();
      batch_.clear();
      paused_for_redelivery_ = false;
      listener_.task_progressed(index_);
      break;
    case sink::PutOutcome::RETRIABLE:
      steady_puts_ = 0;
      full_puts_ = 0;
      // WorkerSinkTask.deliverMessages: pause every partition; the consumer
      // keeps what it has buffered and fetches nothing until the resume.
      paused_for_redelivery_ = true;
      fetcher_.set_paused(true);
      break;
    case sink::PutOutcome::FAILED:
      if (stop_pending_) {
        // Thrown after the worker asked the task to stop: WorkerTask.doRun
        // logs it ("After being scheduled for shutdown, task threw") and
        // reports no failure; closeAllPartitions still commits unless the
        // task was cancelled, and the new instance starts.
        stop_pending_ = false;
        stop_and_restart(!cancelled_);
        return;
      }
      ++counters_.failures;
      // The exception leaves WorkerSinkTask.execute's loop, whose closer,
      // closeAllPartitions -> closePartitions(lost=false) ->
      // commitOffsets(closing=true), commits synchronously the positions of
      // every put() that returned (currentOffsets; the failed batch is not
      // among them) before the consumer closes (Kafka 3.7 WorkerSinkTask
      // execute() and closeAllPartitions()). A consumer that already left the
      // group (poll timeout) cannot: commitSync fails and doCommitSync swallows it.
      if (!joining_ && !left_group_) commit_offsets(true);
      go_down(TaskStatus::FAILED);  // (never in aggregate: it just put)
      listener_.task_failed(index_, failure);
      return;
  }
  after_put();
}

void WorkerSinkTask::after_put() {
  if (stop_pending_) {
    // The stop waited for this put: commit (unless cancelled or no longer
    // a member), leave, start the new instance.
    stop_pending_ = false;
    stop_and_restart(!cancelled_);
    return;
  }
  if (left_group_) {
    rejoin_after_poll_timeout();
    return;
  }
  if (revoke_pending_) {
    revoke_pending_ = false;
    revoke();
    return;
  }
  if (aggregate_host_ && (steady_puts_ >= kSteadyPuts || full_puts_ >= kSteadyPuts) &&
      aggregate_host_->may_aggregate(*this)) {
    enter_aggregate();
    return;
  }
  ready_ = true;
}

void WorkerSinkTask::note_steady_put() {
  // Caught up: the batch hit neither max.poll.records nor a fetch's
  // per-partition cap (a lagging consumer's batches are cut by them), and
  // no more than a poll's worth waits in the fetcher. Whether this rate is a
  // steady state is then the steady chain's call (may_aggregate).
  std::int64_t records = 0;
  bool capped = false;
  for (const auto& pb : batch_) {
    const std::int64_t n = pb.offsets.max - pb.offsets.min + 1;
    records += n;
    capped = capped || n >= fetcher_.settings().max_partition_records;
  }
  const bool plain = connector_.plain_puts() && !batch_.empty() &&
                     batch_.front().tag == ledger::InsertTag::NORMAL && !left_group_ &&
                     !stop_pending_ && !revoke_pending_;
  const bool steady = plain && !capped && records < max_poll_records_ &&
                      fetcher_.buffered_records() < max_poll_records_;
  steady_puts_ = steady ? steady_puts_ + 1 : 0;
  // Lagging: after the put, every partition still has more than a poll's
  // worth visible and not put (the aggregate's catch-up,
  // models/pipeline/sink_aggregate_lagging.cpp). Its polls are full but for
  // the tail of each capped fetch (at the defaults 1,006 records of 1,042
  // bytes fill max.partition.fetch.bytes: polls of 500, 500, 6), which is
  // why the backlog says it, not the batch.
  bool behind = plain && !partitions_.empty();
  for (std::size_t slot = 0; behind && slot < partitions_.size(); ++slot) {
    behind = view_.high_watermark(partitions_[slot]) - put_position_[slot] > max_poll_records_;
  }
  full_puts_ = behind ? full_puts_ + 1 : 0;
}

void WorkerSinkTask::enter_aggregate() {
  aggregate_ = true;
  ++wait_generation_;  // no wake-up of the loop is pending any more
  waiting_for_data_ = false;
  fetcher_.clear();
  aggregate_host_->entered(*this);
}

void WorkerSinkTask::leave_aggregate() {
  aggregate_host_->leaving(*this);
  aggregate_ = false;
  steady_puts_ = 0;
  full_puts_ = 0;
  // As a put that just returned: consumption goes on from the put position.
  fetcher_.assign(partitions_, put_position_);
  sim_.schedule(sim_.now(), id_, kIterate, ++wait_generation_);
}

void WorkerSinkTask::set_put_position(int partition, std::int64_t offset) {
  const std::size_t slot = slot_of(partition);
  if (slot < put_position_.size()) put_position_[slot] = std::max(put_position_[slot], offset);
}

}  // namespace pipesim::connect
