// One sink task as Kafka 3.7's WorkerSinkTask runs it (docs/model.md §4.3):
//   iteration(): commit if offset.flush.interval.ms has passed (what the
//   connector's preCommit returns for the positions just past the last
//   record whose put() returned: those, or its flushed or inserted offsets);
//   poll up to max.poll.records; put(batch). A new instance joins the group
//   once SinkTask.start returned (it may fail there instead).
//   - put() returned: those offsets count as processed;
//   - RetriableException: pause, and put() the same batch again when the
//     next poll returns, i.e. after waiting until the next commit time;
//   - anything else: the task commits the positions of the puts that
//     returned (closeAllPartitions) and is FAILED; its consumer closes
//     (leaves the group) until someone restarts the task.
// Group membership: on a rebalance the task finishes its put, commits the
// revoked partitions synchronously and waits for its new assignment. A
// kill -9 loses everything volatile and commits nothing. A put() that runs
// longer than max.poll.interval.ms makes the consumer leave the group at that
// moment (KIP-62's poll timeout); when the put returns, its partitions are
// lost, not revoked (nothing is committed), and the consumer joins again.
//
// Invariants: committed <= position for every owned partition; positions
// never go backwards within one assignment.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/broker/partition_log.h"
#include "models/connect/connect_options.h"
#include "models/connect/consumer_group.h"
#include "models/connect/fetcher.h"
#include "models/sink/clickhouse_sink_task.h"
#include "sim/engine/simulation.h"

namespace pipesim::connect {

enum class TaskStatus : std::uint8_t { RUNNING, FAILED, DOWN };

struct TaskCounters {
  std::int64_t failures = 0;  // transitions to FAILED
  std::int64_t restarts = 0;  // new task instances
  sim::Time downtime{};       // time tasks were FAILED or down (closed intervals)
  std::int64_t commits = 0;
  std::int64_t commit_failures = 0;  // periodic (asynchronous) commits the coordinator did not take
  std::int64_t polls = 0;
  std::int64_t redeliveries = 0;     // put() of the same batch after a RetriableException
  std::int64_t rebalances = 0;       // completed consumer-group rebalances
  std::int64_t abandoned_stops = 0;  // graceful stops that outlived the shutdown timeout
  std::int64_t poll_timeouts =
      0;  // consumers that left the group: a put() outlived max.poll.interval.ms
};

// What the task tells the Connect cluster (group coordinator and operator).
class TaskListener {
 public:
  virtual ~TaskListener() = default;
  // Revoked everything and committed: ready for an assignment.
  virtual void task_joined(int task) = 0;
  // A new instance started and wants to join the group.
  virtual void task_started(int task) = 0;
  // The consumer closed: graceful stop, or failure.
  virtual void task_left(int task) = 0;
  virtual void task_failed(int task, const sink::PutFailure& failure) = 0;
  // A poll found nothing left to read: its position is the high watermark.
  virtual void task_caught_up(int task) = 0;
  // A put() returned: the task makes progress.
  virtual void task_progressed(int task) = 0;
};

class WorkerSinkTask;

// Healthy stretches advanced in aggregate (models/pipeline/sink_aggregate.h):
// a task that has put steadily for a while asks whether it may go on in
// aggregate; from then on its puts are counted, not simulated, until anything
// touches it (a fault's pre-roll, a rebalance, a stop, a kill).
class AggregateHost {
 public:
  virtual ~AggregateHost() = default;
  [[nodiscard]] virtual bool may_aggregate(const WorkerSinkTask& task) = 0;
  virtual void entered(WorkerSinkTask& task) = 0;
  // Counts its puts up to now and sets its positions and state as a put
  // that just returned would leave them.
  virtual void leaving(WorkerSinkTask& task) = 0;
};

class WorkerSinkTask final : public sim::Component, public sink::SinkTaskHost {
 public:
  WorkerSinkTask(sim::Simulation& sim, int index, const ConnectOptions& options,
                 const FetchSettings& fetch, ConsumerGroup& group, LogView& view,
                 const sink::SinkDependencies& deps, sink::SinkStateStore* state,
                 TaskCounters& counters, TaskListener& listener);

  [[nodiscard]] int index() const { return index_; }
  [[nodiscard]] const std::string& name() const override { return name_; }
  // Just past the last record of `partition` whose put() returned (-1 if not owned).
  [[nodiscard]] std::int64_t put_position_of(int partition) const;
  [[nodiscard]] TaskStatus status() const { return status_; }
  [[nodiscard]] bool joining() const { return joining_; }
  [[nodiscard]] const std::vector<int>& partitions() const { return partitions_; }
  [[nodiscard]] std::int64_t max_poll_records() const { return max_poll_records_; }

  // Aggregate (AggregateHost): whether the task's puts are being counted in
  // aggregate, leaving that (it resumes its loop now), and what the host sets.
  void set_aggregate_host(AggregateHost* host) { aggregate_host_ = host; }
  [[nodiscard]] bool in_aggregate() const { return aggregate_; }
  // Full puts in a row (cut by max.poll.records or a fetch's cap): the task
  // lags, and may go on in aggregate as a lagging one.
  [[nodiscard]] bool lagging() const { return full_puts_ >= kSteadyPuts; }
  void leave_aggregate();
  void set_put_position(int partition, std::int64_t offset);
  [[nodiscard]] sim::Time next_commit() const { return next_commit_; }
  void set_next_commit(sim::Time at) { next_commit_ = at; }
  // The first instance's first commit, if not one interval after its start
  // (connect.commit_phase "random": the task was started before the run).
  void set_first_commit(sim::Time at) { first_commit_ = at; }
  [[nodiscard]] ConsumerGroup& group() { return group_; }
  [[nodiscard]] sim::Time down_for(sim::Time now) const {
    return status_ == TaskStatus::RUNNING ? sim::Time{} : now - down_since_;
  }
  sink::ClickHouseSinkTask& connector() { return connector_; }
  [[nodiscard]] const sink::ClickHouseSinkTask& connector() const { return connector_; }

  // Schedules a new instance at `at`; it joins the group and waits for partitions.
  void start_at(sim::Time at);
  // kill -9 of the worker process: nothing is committed, pending work is lost.
  void kill();
  // The group rebalances: finish the put, commit, revoke, then task_joined().
  void begin_rebalance();
  // The group's new assignment; consumption resumes from the committed offsets.
  void assign(std::vector<int> partitions);
  // Graceful stop and start of a new instance (task restart, config change):
  // the put ends, the task commits and leaves the group; a put that outlives
  // task.shutdown.graceful.timeout.ms is cancelled: it still runs to its end,
  // then leaves without a commit. `max_poll_records` > 0 applies to the new
  // instance.
  void restart_gracefully(std::int64_t max_poll_records);
  // Partition p's high watermark moved (its leader answers a waiting fetch).
  void on_data(int partition);
  // Partition p has a new leader: a fetch goes to it.
  void on_leader(int partition);
  // The brokers' view is about to change (the producer leaves or joins its
  // direct feed): settle what the old view can tell, then (changed) look
  // again when a blocked poll should wake.
  void before_view_change();
  void after_view_change();
  // An unclean leader election cut partition p's log below what was read.
  void on_log_truncated(int partition, std::int64_t end_offset);

  // sim::Component
  void handle(const sim::Event& event) override;
  // sink::SinkTaskHost
  [[nodiscard]] sim::Time now() const override { return sim_.now(); }
  [[nodiscard]] sim::Trace* trace() const override { return sim_.trace(); }
  void schedule_step(sim::Time delay) override;
  [[nodiscard]] clickhouse::ReplyAddress insert_reply_address() const override {
    return clickhouse::ReplyAddress{id_, kInsertAnswer};
  }
  void put_finished(sink::PutOutcome outcome, sink::PutFailure failure) override;
  void start_finished(bool ok, const char* error) override;

 private:
  // Puts in a row that must look caught up before the task may go on in aggregate.
  static constexpr int kSteadyPuts = 16;
  enum EventType : std::uint32_t {
    kIterate = 1,
    kConnectorStep = 2,
    kStart = 3,
    kRedeliver = 4,
    kStopTimeout = 5,
    kInsertAnswer = 6,
    kPollTimeout = 7
  };

  void start_instance();
  void run_iterations();
  void iteration();
  void redeliver();
  // closing: the synchronous commit of a revocation or a close; otherwise
  // the iteration's asynchronous one.
  void commit_offsets(bool closing);
  Fetcher::PollResult poll(std::vector<sink::PartitionBatch>& out);
  void wait_for_data(sim::Time response);
  void revoke();
  void drop_partitions();
  void stop_and_restart(bool commit);
  void cancel();
  void go_down(TaskStatus status);
  void after_put();
  void start_put();
  void poll_timeout();
  void rejoin_after_poll_timeout();
  // A put that returned as a caught-up (or a lagging) task's do; enough of
  // them in a row and the task may go on in aggregate.
  void note_steady_put();
  void enter_aggregate();
  [[nodiscard]] std::size_t slot_of(int partition) const;

  sim::Simulation& sim_;
  int index_;
  std::string name_;
  ConnectOptions options_;
  ConsumerGroup& group_;
  LogView& view_;
  Fetcher fetcher_;
  TaskCounters& counters_;
  TaskListener& listener_;
  sink::ClickHouseSinkTask connector_;
  sim::ComponentId id_;

  TaskStatus status_ = TaskStatus::DOWN;
  sim::Time down_since_{};
  bool joining_ = false;  // revoked, waiting for an assignment
  std::vector<int> partitions_;
  std::vector<std::int64_t> put_position_;  // just past the last record whose put() returned
  std::int64_t max_poll_records_;
  std::int64_t next_max_poll_records_ = 0;
  sim::Time next_commit_{};
  sim::Time first_commit_ = sim::Time::max();

  std::vector<sink::PartitionBatch> batch_;
  std::vector<std::int64_t> task_offsets_;  // scratch: preCommit's answer
  sim::Time put_started_{};
  bool in_put_ = false;
  bool paused_for_redelivery_ = false;
  bool ready_ = false;         // an iteration may run now
  bool running_loop_ = false;  // run_iterations() is on the stack
  bool waiting_for_data_ = false;
  bool blocked_poll_ = false;  // the next poll ends a wait in poll
  std::uint32_t wait_generation_ = 0;
  bool revoke_pending_ = false;
  bool stop_pending_ = false;
  bool cancelled_ = false;  // the stop outlived its timeout: an orphan finishing its put
  // The poll-timeout watchdog: at most one pending kPollTimeout per instance,
  // re-armed for the put running when it fires, so a run costs one event per
  // max.poll.interval.ms of puts rather than one per put.
  bool watchdog_pending_ = false;
  bool left_group_ = false;  // the poll timeout expired during the current put
  AggregateHost* aggregate_host_ = nullptr;
  bool aggregate_ = false;
  int steady_puts_ = 0;
  int full_puts_ = 0;
};

}  // namespace pipesim::connect
