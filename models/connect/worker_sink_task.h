// One sink task as Kafka 3.7's WorkerSinkTask runs it (SPEC §4.3):
//   iteration(): commit if offset.flush.interval.ms has passed (the position
//   just past the last record whose put() returned); poll up to
//   max.poll.records; put(batch).
//   - put() returned: those offsets count as processed;
//   - RetriableException: pause, and put() the same batch again on the next
//     iteration, whose poll waits until the next commit time;
//   - anything else: the task is FAILED until someone restarts it.
// A kill -9 loses everything volatile and commits nothing; a successor reads
// from the committed offsets.
//
// Invariants: committed <= position for every owned partition; positions
// never go backwards within one task instance.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "models/broker/partition_log.h"
#include "models/connect/connect_options.h"
#include "models/connect/consumer_group.h"
#include "models/sink/clickhouse_sink_task.h"
#include "sim/engine/random.h"
#include "sim/engine/simulation.h"

namespace pipesim::connect {

enum class TaskStatus : std::uint8_t { RUNNING, FAILED, DOWN };

struct TaskCounters {
  std::int64_t failures = 0;       // transitions to FAILED
  std::int64_t restarts = 0;       // new task instances after a kill or failure
  sim::Time downtime{};            // time tasks were FAILED or down
  std::int64_t commits = 0;
  std::int64_t polls = 0;
  std::int64_t redeliveries = 0;   // put() of the same batch after a RetriableException
};

class WorkerSinkTask final : public sim::Component, public sink::SinkTaskHost {
 public:
  WorkerSinkTask(sim::Simulation& sim, int index, const ConnectOptions& options,
                 ConsumerGroup& group, const std::vector<broker::PartitionLog>& logs,
                 const sink::SinkDependencies& deps, sink::SinkStateStore* state,
                 TaskCounters& counters);

  [[nodiscard]] int index() const { return index_; }
  [[nodiscard]] TaskStatus status() const { return status_; }
  [[nodiscard]] const std::vector<int>& partitions() const { return partitions_; }
  [[nodiscard]] sim::Time down_for(sim::Time now) const {
    return status_ == TaskStatus::RUNNING ? sim::Time{} : now - down_since_;
  }

  void assign(std::vector<int> partitions) { partitions_ = std::move(partitions); }
  // A new task instance starts now: positions from the committed offsets.
  void start();
  // kill -9 of the worker process: nothing is committed, pending work is lost.
  void kill();
  // Schedules start() at `at` (e.g. when the worker is back).
  void restart_at(sim::Time at);
  // New records were appended to partition p (its leader answers a waiting fetch).
  void on_data(int partition);
  void set_max_poll_records(std::int64_t n) { max_poll_records_ = n; }
  // Graceful revocation (rebalance, task restart): once the put in progress
  // has ended, commit (preCommit + synchronous commit of the revoked
  // partitions), then resume from the committed offsets; `new_instance`
  // stops and starts the task (in-memory connector state is lost);
  // `max_poll_records` > 0 takes effect from then on.
  void revoke(bool new_instance, std::int64_t max_poll_records);
  // Told when this task turns FAILED (the operator's pager).
  void set_failure_listener(std::function<void(int task)> listener) {
    on_failed_ = std::move(listener);
  }

  // sim::Component
  void handle(const sim::Event& event) override;
  // sink::SinkTaskHost
  [[nodiscard]] sim::Time now() const override { return sim_.now(); }
  void schedule_step(sim::Time delay) override;
  void put_finished(sink::PutOutcome outcome, sink::DecisionError error) override;

 private:
  enum EventType : std::uint32_t { kIterate = 1, kConnectorStep = 2, kStart = 3, kRedeliver = 4 };

  void run_iterations();
  void iteration();
  void redeliver();
  void commit_offsets();
  bool poll(std::vector<sink::PartitionBatch>& out);
  void wait_for_data();
  void go_down(TaskStatus status);
  void complete_revocation();
  [[nodiscard]] std::size_t slot_of(int partition) const;

  sim::Simulation& sim_;
  int index_;
  ConnectOptions options_;
  ConsumerGroup& group_;
  const std::vector<broker::PartitionLog>& logs_;
  TaskCounters& counters_;
  sink::ClickHouseSinkTask connector_;
  sim::ComponentId id_;
  std::function<void(int)> on_failed_;

  TaskStatus status_ = TaskStatus::DOWN;
  sim::Time down_since_{};
  std::vector<int> partitions_;
  std::vector<std::int64_t> position_;      // next offset to fetch, per owned partition
  std::vector<std::int64_t> put_position_;  // just past the last record whose put() returned
  std::int64_t max_poll_records_;
  sim::Time next_commit_{};
  std::size_t cursor_ = 0;  // poll starts with this partition (rotating order)

  std::vector<sink::PartitionBatch> batch_;
  bool in_put_ = false;
  bool paused_for_redelivery_ = false;
  bool ready_ = false;           // an iteration may run now
  bool running_loop_ = false;    // run_iterations() is on the stack
  bool waiting_for_data_ = false;
  std::uint32_t wait_generation_ = 0;
  bool revoke_pending_ = false;
  bool revoke_new_instance_ = false;
  std::int64_t revoke_max_poll_records_ = 0;
};

}  // namespace pipesim::connect
