// The connector side of one sink task: ProxySinkTask.put of ClickHouse Kafka
// Connect v1.3.9 (docs/model.md §4.4, DECISION_NOTES.md). put() groups the batch by
// partition (visited in Java HashMap order) and runs the decision function
// for each partition in turn; each side effect takes the time its real
// counterpart takes (a KeeperMap query, an INSERT with its client timeout).
// Exceptions are classified as Utils.handleException does: a socket timeout
// or a retriable ClickHouse code becomes a RetriableException for the whole
// put batch; anything else fails the task, or with errors.tolerance=all the
// partition's records go to the errant-record reporter after the loop.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/broker/partition_log.h"
#include "models/clickhouse/keeper_map_table.h"
#include "models/clickhouse/table.h"
#include "models/ledger/ledger.h"
#include "models/sink/connector_options.h"
#include "models/sink/decision.h"
#include "models/sink/partition_batch.h"
#include "models/sink/put_buffer.h"
#include "models/sink/sink_counters.h"
#include "models/sink/sink_state.h"
#include "sim/engine/time.h"
#include "sim/engine/trace.h"

namespace pipesim::sink {

enum class PutOutcome : std::uint8_t { RETURNED, RETRIABLE, FAILED };

// Why put() failed the task (PutOutcome::FAILED).
struct PutFailure {
  int partition = -1;
  DecisionError error = DecisionError::NONE;  // NONE: "Tolerance exceeded" on a DLQ send
  const char* start_error = nullptr;          // SinkTask.start threw this (no put ran)
};

// What the framework (WorkerSinkTask) offers the connector.
class SinkTaskHost {
 public:
  virtual ~SinkTaskHost() = default;
  [[nodiscard]] virtual sim::Time now() const = 0;
  [[nodiscard]] virtual const std::string& name() const = 0;  // "task-3"
  [[nodiscard]] virtual sim::Trace* trace() const = 0;
  // Calls back step() after `delay` unless the task dies first.
  virtual void schedule_step(sim::Time delay) = 0;
  // Where ClickHouse sends an insert's outcome: the framework hands it to
  // on_insert_answer() (an event of this task; a dead task drops it).
  [[nodiscard]] virtual clickhouse::ReplyAddress insert_reply_address() const = 0;
  // put() has ended; may be called from within put().
  virtual void put_finished(PutOutcome outcome, PutFailure failure) = 0;
  // start() that returned false has ended: the task may poll, or it failed.
  virtual void start_finished(bool ok, const char* error) = 0;
};

struct SinkDependencies {
  const ConnectorOptions* options = nullptr;
  clickhouse::ReplicatedTable* table = nullptr;
  clickhouse::KeeperMapTable* keeper_map = nullptr;  // exactlyOnce's state queries
  ledger::Ledger* ledger = nullptr;
  const std::vector<broker::PartitionLog>* logs = nullptr;
  SinkCounters* counters = nullptr;
};

class ClickHouseSinkTask {
 public:
  // Which query a client sends, for how it connects.
  enum class Query : std::uint8_t { INSERT, STATE_READ, STATE_WRITE, HELPER };
  ClickHouseSinkTask(SinkTaskHost& host, const SinkDependencies& deps, SinkStateStore* state);

  // A new task instance (SinkTask.start): with in-memory state, the state is
  // empty again. True when the task may poll at once; false when its start
  // queries wait for an answer (a ClickHouse replica is down): the outcome
  // comes as host.start_finished().
  [[nodiscard]] bool start();
  // ClickHouseSinkTask.put; the framework calls it with an empty batch too
  // when a poll returns nothing (it matters only to a buffer's time flush).
  void put(const std::vector<PartitionBatch>& batch);
  // ClickHouseSinkTask.preCommit: `offsets` come in as the framework's
  // current offsets of `partitions` and go out as what the task provides,
  // -1 for none (the framework keeps the last committed offset then).
  void pre_commit(const std::vector<int>& partitions, std::vector<std::int64_t>& offsets);
  // close(partitions) of every owned partition (a revocation, a lost
  // assignment, a stop): buffered records and reported offsets go.
  void close();
  // An empty put now would flush the buffer by time (bufferFlushTime).
  [[nodiscard]] bool time_flush_due(sim::Time now) const;
  // Puts that insert what they are given, partition by partition, and
  // commits of the put positions: what the aggregate path assumes.
  [[nodiscard]] bool plain_puts() const;
  void step();
  // The outcome of an insert (the arg of the event sent to insert_reply_address()).
  void on_insert_answer(std::uint32_t reply);
  // tolerateStateMismatch of this instance's config (an operator may change it).
  void set_tolerate_state_mismatch(bool on) { tolerate_state_mismatch_ = on; }
  [[nodiscard]] SinkStateStore& state() { return *state_; }
  // How this task's client sends each kind of query (for the aggregate path).
  [[nodiscard]] clickhouse::ClientPath path_of_insert() const { return client_path(Query::INSERT); }
  [[nodiscard]] clickhouse::ClientPath path_of_state_read() const {
    return client_path(Query::STATE_READ);
  }
  [[nodiscard]] clickhouse::ClientPath path_of_state_write() const {
    return client_path(Query::STATE_WRITE);
  }

 private:
  enum class Phase : std::uint8_t { IDLE, STATE_READ, STATE_WRITE, INSERT, STARTING };
  // The queries of SinkTask.start in v1.3.9, in order.
  enum class StartQuery : std::uint8_t { STATE_PING, CREATE_STATE_TABLE, PING, VERSION, TABLES };

  void send_start_query();
  void start_step();

  [[nodiscard]] bool buffering() const { return deps_.options->buffer_count > 0; }
  // ignorePartitionsWhenBatching without exactlyOnce (Processing.doLogic l.143).
  [[nodiscard]] bool topic_wide() const {
    return deps_.options->ignore_partitions_when_batching && !deps_.options->exactly_once;
  }
  // The whole batch in one INSERT, no state and no deduplication token.
  void insert_topic_wide();
  // explain: the first records of each partition read again after a restart
  // or rebalance, with exactlyOnce off, are inserted again.
  void tell_replays(const std::vector<PartitionBatch>& records);
  // BaseStateProviderImpl.onStateUpdate of an AFTER_PROCESSING record.
  void note_inserted(int partition, std::int64_t next_offset);
  void start_partition();
  void decide_partition();
  void run_ops();
  void retriable();
  void fail(PutFailure failure);
  void throw_non_retriable(DecisionError error);
  // The errant-record reporter: the DLQ topic if set; logging only or no
  // reporter at all keeps nothing (docs/model.md §4.3).
  void report(int partition, OffsetRange records);
  [[nodiscard]] bool has_reporter() const;
  [[nodiscard]] clickhouse::ClientPath client_path(Query query) const;
  // One KeeperMap query (a ClickHouse query served by Keeper): a read of the
  // current partition's row, or a write of `*write`; step() comes when its
  // answer (or the client's socket timeout) does.
  void query_keeper_map(Phase next, const StateRecord* write);
  void insert_failed(clickhouse::QueryStatus status);

  SinkTaskHost& host_;
  SinkDependencies deps_;
  SinkStateStore* state_;
  bool tolerate_state_mismatch_;
  std::vector<PartitionBatch> batch_;  // in the order put() visits them
  std::vector<PartitionBatch> failed_;  // errors.tolerance=all: reported after the loop
  PutBuffer buffer_;                     // bufferCount > 0
  bool flushing_ = false;                // this put flushes the buffer
  // lastInsertedOffsets of the state provider (reportInsertedOffsets):
  // partition, one past the last range it inserted or kept.
  std::vector<std::pair<int, std::int64_t>> inserted_;
  StateRecord stored_;  // the partition's state as decide() saw it
  std::vector<int> replays_told_;  // partitions whose replay explain has told
  std::size_t index_ = 0;
  Decision decision_;
  std::size_t op_index_ = 0;
  ledger::InsertTag tag_ = ledger::InsertTag::NORMAL;
  Phase phase_ = Phase::IDLE;
  clickhouse::QueryStatus keeper_map_status_ = clickhouse::QueryStatus::OK;
  StateRecord write_record_;         // what the current state write stores
  std::int64_t write_attempts_ = 0;  // of the current state write (retryCount)
  StartQuery start_query_ = StartQuery::PING;
  std::int64_t start_attempts_ = 0;
  // Numbers this task's inserts, across task instances, so that an answer
  // meant for an earlier insert (or instance) is recognised and dropped.
  std::uint32_t insert_token_ = 0;  // of the query (insert or state query) awaited
  std::vector<broker::IdPiece> pieces_;  // scratch
  std::vector<std::string> keys_;        // scratch
};

}  // namespace pipesim::sink
