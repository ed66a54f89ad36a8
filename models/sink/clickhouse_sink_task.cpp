#include "models/sink/clickhouse_sink_task.h"

#include "models/sink/decide_cases.h"
#include "models/sink/partition_order.h"
#include "sim/engine/invariant.h"

namespace pipesim::sink {

ClickHouseSinkTask::ClickHouseSinkTask(SinkTaskHost& host, const SinkDependencies& deps,
                                       SinkStateStore* state)
    : host_(host),
      deps_(deps),
      state_(state),
      tolerate_state_mismatch_(deps.options->tolerate_state_mismatch) {}

void ClickHouseSinkTask::start() {
  // ProxySinkTask creates an InMemoryState per task instance; KeeperMap
  // state lives in ClickHouse and survives.
  if (!state_->keeper_map()) state_->clear();
  batch_.clear();
  failed_.clear();
  phase_ = Phase::IDLE;
}

void ClickHouseSinkTask::put(const std::vector<PartitionBatch>& batch) {
  PIPESIM_INVARIANT(phase_ == Phase::IDLE, "put() while a put is in progress");
  keys_.clear();
  for (const auto& pb : batch) keys_.push_back(deps_.options->topics + "-" + std::to_string(pb.partition));
  batch_.clear();
  for (const std::size_t i : java_hashmap_order(keys_)) batch_.push_back(batch[i]);
  failed_.clear();
  index_ = 0;
  start_partition();
}

bool ClickHouseSinkTask::has_reporter() const {
  return !deps_.options->errors_deadletterqueue_topic_name.empty() || deps_.options->errors_log_enable;
}

void ClickHouseSinkTask::wait_for_keeper(Phase next) {
  // One KeeperMap query: a ClickHouse query whose time is Keeper's answer time.
  ++deps_.counters->keeper_map_ops;
  phase_ = next;
  host_.schedule_step(deps_.keeper->submit(host_.now(), 1));
}

void ClickHouseSinkTask::start_partition() {
  if (index_ == batch_.size()) {
    // ProxySinkTask.put: partitions that failed under errors.tolerance=all
    // are handed to the reporter only now, after the loop.
    for (const auto& pb : failed_) report(pb.partition, pb.offsets);
    failed_.clear();
    phase_ = Phase::IDLE;
    host_.put_finished(PutOutcome::RETURNED, {});
    return;
  }
  if (state_->keeper_map()) {
    wait_for_keeper(Phase::STATE_READ);
    return;
  }
  decide_partition();
}

void ClickHouseSinkTask::decide_partition() {
  const PartitionBatch& pb = batch_[index_];
  const StateRecord stored = state_->get(pb.partition);
  decision_ = decide(stored, pb.offsets, tolerate_state_mismatch_);
  if (decision_.classified) {
    const std::size_t row = stored.state == ProcessingState::BEFORE_PROCESSING ? 0 : 1;
    ++deps_.counters->classifications[row][static_cast<std::size_t>(decision_.range_state)];
  }
  // Copies made because the stored state was lost (a wiped or deleted state
  // row, or the ZERO branch) are state_reset copies.
  tag_ = pb.tag;
  if (pb.tag == ledger::InsertTag::NORMAL) state_->clear_reset(pb.partition);
  const bool replay_after_reset = pb.tag == ledger::InsertTag::REPLAY && state_->was_reset(pb.partition);
  if ((decision_.classified && decision_.range_state == RangeState::ZERO) || replay_after_reset) {
    tag_ = ledger::InsertTag::STATE_RESET;
  }
  if (decision_.error != DecisionError::NONE) {
    throw_non_retriable(decision_.error);
    return;
  }
  op_index_ = 0;
  run_ops();
}

void ClickHouseSinkTask::run_ops() {
  const PartitionBatch& pb = batch_[index_];
  while (op_index_ < decision_.op_count) {
    const SinkOp& op = decision_.ops[op_index_++];
    switch (op.kind) {
      case SinkOpKind::SET_STATE:
        if (state_->keeper_map()) {
          // The write takes effect when Keeper answers (a crash before that loses it).
          --op_index_;
          wait_for_keeper(Phase::STATE_WRITE);
          return;
        }
        state_->set(pb.partition, StateRecord{op.state, op.records});
        break;
      case SinkOpKind::INSERT: {
        const clickhouse::InsertRequest request{
            pb.partition, op.records.min, op.records.max,
            clickhouse::BlockId{pb.partition, op.token.min, op.token.max}, tag_};
        const clickhouse::InsertAnswer answer = deps_.table->begin_insert(request);
        const sim::Time timeout = sim::Time::seconds(deps_.options->timeout_seconds);
        if (answer.latency > timeout) {
          // The client gives up; the server's insert goes on (SPEC §4.4).
          phase_ = Phase::INSERT_TIMEOUT;
          host_.schedule_step(timeout);
        } else if (!answer.committed) {
          phase_ = Phase::INSERT_ERROR;
          host_.schedule_step(answer.latency);
        } else {
          phase_ = Phase::INSERT_ANSWER;
          host_.schedule_step(answer.latency);
        }
        return;
      }
      case SinkOpKind::DLQ:
        // Records of an overlap that cannot be re-inserted as SAME, sent one
        // by one as DuplicateException (DECISION_NOTES.md row 10).
        if (!has_reporter()) {
          report(pb.partition, op.records);  // a no-op reporter: nothing kept
        } else if (deps_.options->errors_tolerance == "all") {
          report(pb.partition, op.records);
        } else {
          // errors.tolerance=none: the framework's executeFailed reports the
          // first record, then throws "Tolerance exceeded in error handler".
          report(pb.partition, OffsetRange{op.records.min, op.records.min});
          fail(PutFailure{pb.partition, DecisionError::NONE});
          return;
        }
        break;
      case SinkOpKind::KEEP_STATE:
        break;
    }
  }
  ++index_;
  start_partition();
}

void ClickHouseSinkTask::step() {
  switch (phase_) {
    case Phase::STATE_READ:
      decide_partition();
      return;
    case Phase::STATE_WRITE: {
      const SinkOp& op = decision_.ops[op_index_++];
      state_->set(batch_[index_].partition, StateRecord{op.state, op.records});
      run_ops();
      return;
    }
    case Phase::INSERT_ANSWER:
      run_ops();
      return;
    case Phase::INSERT_TIMEOUT:
      // A client socket timeout: clickhouse-java turns it into code 159,
      // which Utils.handleException makes a RetriableException.
      ++deps_.counters->insert_timeouts;
      retriable();
      return;
    case Phase::INSERT_ERROR:
      retriable();
      return;
    case Phase::IDLE:
      break;
  }
  PIPESIM_INVARIANT(false, "connector step without a pending operation");
}

void ClickHouseSinkTask::retriable() {
  // The loop is left at once: later partitions are not processed, failures
  // collected so far are not reported, and the whole batch comes again.
  ++deps_.counters->retriable_exceptions;
  failed_.clear();
  phase_ = Phase::IDLE;
  host_.put_finished(PutOutcome::RETRIABLE, {});
}

void ClickHouseSinkTask::fail(PutFailure failure) {
  failed_.clear();
  phase_ = Phase::IDLE;
  host_.put_finished(PutOutcome::FAILED, failure);
}

namespace {

std::string range_text(OffsetRange r) {
  return "[" + std::to_string(r.min) + ", " + std::to_string(r.max) + "]";
}

}  // namespace

void ClickHouseSinkTask::throw_non_retriable(DecisionError error) {
  if (auto* t = host_.trace()) {
    const PartitionBatch& pb = batch_[index_];
    const DecideCase c{state_->get(pb.partition), pb.offsets, tolerate_state_mismatch_, true};
    t->story(host_.now(), host_.name(), std::string(to_string(error)),
             host_.name() + ", partition " + std::to_string(pb.partition) + ": " + explain_decision(c, decision_),
             {{"partition", pb.partition}, {"batch", {pb.offsets.min, pb.offsets.max}}});
  }
  switch (error) {
    case DecisionError::AFTER_PROCESSING_STATE_MISMATCH: ++deps_.counters->state_mismatch_throws; break;
    case DecisionError::BEFORE_PROCESSING_STATE_CONTAINS: ++deps_.counters->state_contains_throws; break;
    case DecisionError::BEFORE_PROCESSING_ERROR_STATE:
    case DecisionError::AFTER_PROCESSING_ERROR_STATE: ++deps_.counters->error_state_throws; break;
    case DecisionError::NONE: break;
  }
  const PartitionBatch& pb = batch_[index_];
  if (deps_.options->errors_tolerance == "all") {
    // Utils.handleException swallows it; ProxySinkTask reports the partition's
    // records after the loop, and their offsets are committed like any others.
    failed_.push_back(pb);
    ++index_;
    start_partition();
    return;
  }
  fail(PutFailure{pb.partition, error});
}

void ClickHouseSinkTask::report(int partition, OffsetRange records) {
  if (auto* t = host_.trace()) {
    const bool has_dlq = !deps_.options->errors_deadletterqueue_topic_name.empty();
    t->story(host_.now(), host_.name(), has_dlq ? "dlq" : "dropped",
             host_.name() + ": offsets " + range_text(records) + " of partition " + std::to_string(partition) +
                 (has_dlq ? " sent to the DLQ " + deps_.options->errors_deadletterqueue_topic_name
                          : " skipped: no DLQ keeps them"));
  }
  pieces_.clear();
  (*deps_.logs)[static_cast<std::size_t>(partition)].translate(records.min, records.max, pieces_);
  const bool has_dlq = !deps_.options->errors_deadletterqueue_topic_name.empty();
  for (const auto& piece : pieces_) {
    if (has_dlq) {
      deps_.ledger->record_dlq(partition, piece.ids);
      deps_.counters->dlq_records += piece.ids.count;
    } else {
      deps_.ledger->record_mark(partition, piece.ids, ledger::LossCause::DROPPED_NO_DLQ);
      deps_.counters->dropped_records += piece.ids.count;
    }
  }
}

}  // namespace pipesim::sink
