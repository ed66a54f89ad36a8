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

void ClickHouseSinkTask::query_keeper_map(Phase next, int requests) {
  // KeeperStateProvider: a SELECT or INSERT on the KeeperMap table, a
  // ClickHouse query whose time is Keeper's answer time.
  ++deps_.counters->keeper_map_ops;
  phase_ = next;
  const clickhouse::QueryAnswer answer = deps_.table->keeper_map_query(requests);
  keeper_map_applied_ = answer.status == clickhouse::QueryStatus::OK;
  const sim::Time timeout = deps_.options->socket_timeout;
  if (answer.latency > timeout) {
    // The client gives up (a socket timeout, retriable); a write queued in
    // Keeper is still applied, and every later query queues behind it.
    keeper_map_status_ = clickhouse::QueryStatus::CLIENT_TIMEOUT;
    host_.schedule_step(timeout);
    return;
  }
  keeper_map_status_ = answer.status;
  host_.schedule_step(answer.latency);
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
    // getStateRecord: one read by key (a multi-get in Keeper).
    query_keeper_map(Phase::STATE_READ, 1);
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
          // The write takes effect when Keeper answers (a crash before that
          // loses it). StorageKeeperMapSink: an exists() of the key, then a
          // multi with its create or set: two Keeper requests.
          --op_index_;
          write_attempts_ = 1;
          query_keeper_map(Phase::STATE_WRITE, 2);
          return;
        }
        state_->set(pb.partition, StateRecord{op.state, op.records});
        break;
      case SinkOpKind::INSERT: {
        // The answer, or the client's socket timeout, comes as on_insert_answer();
        // a client timeout does not cancel the server's insert (SPEC §4.4).
        insert_token_ = (insert_token_ + 1) & clickhouse::kReplyTokenMask;
        const clickhouse::InsertRequest request{
            pb.partition,
            op.records.min,
            op.records.max,
            clickhouse::BlockId{pb.partition, op.token.min, op.token.max, 0},
            tag_,
            deps_.options->socket_timeout,
            host_.insert_reply_address(),
            insert_token_};
        phase_ = Phase::INSERT;
        deps_.table->begin_insert(request);
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
      // A failed KeeperMap query: KEEPER_EXCEPTION (999), NETWORK_ERROR (210)
      // or a socket timeout, all retriable (Utils.handleException).
      if (keeper_map_status_ != clickhouse::QueryStatus::OK) {
        retriable();
        return;
      }
      decide_partition();
      return;
    case Phase::STATE_WRITE: {
      const SinkOp& op = decision_.ops[op_index_];
      if (keeper_map_applied_) state_->set(batch_[index_].partition, StateRecord{op.state, op.records});
      if (keeper_map_status_ != clickhouse::QueryStatus::OK) {
        // setStateRecord goes through ClickHouseHelperClient.queryV1, which
        // sends a query that threw a ClickHouseException (a server error, or
        // a socket timeout: code 159) again at once, retryCount attempts in
        // all, before it throws; getStateRecord's read has no such loop.
        if (write_attempts_ < deps_.options->retry_count) {
          ++write_attempts_;
          query_keeper_map(Phase::STATE_WRITE, 2);
          return;
        }
        retriable();
        return;
      }
      ++op_index_;
      run_ops();
      return;
    }
    case Phase::INSERT:
    case Phase::IDLE:
      break;
  }
  PIPESIM_INVARIANT(false, "connector step without a pending operation");
}

void ClickHouseSinkTask::on_insert_answer(std::uint32_t reply) {
  // An answer for an earlier insert (one the client gave up on, or of an
  // earlier task instance) finds another token: nobody listens any more.
  if (phase_ != Phase::INSERT || clickhouse::reply_token(reply) != insert_token_) return;
  const clickhouse::QueryStatus status = clickhouse::reply_status(reply);
  if (clickhouse::succeeded(status)) {
    run_ops();
    return;
  }
  // A socket timeout (clickhouse-java: code 159) or a retriable server code
  // (159, 210, 242, 285, 319, 999): Utils.handleException makes it a
  // RetriableException.
  if (status == clickhouse::QueryStatus::CLIENT_TIMEOUT) ++deps_.counters->insert_timeouts;
  retriable();
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
