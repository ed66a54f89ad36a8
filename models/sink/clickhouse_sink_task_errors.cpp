// How a put() of the sink ends badly: a retriable error (RetriableException,
// the framework redelivers), a failure, and the non-retriable decisions
// (State MISMATCH, CONTAINS, ERROR State) thrown or reported to the DLQ as
// errors.tolerance says.
#include "models/sink/clickhouse_sink_task.h"

#include <algorithm>

#include "models/sink/decide_cases.h"
#include "models/sink/partition_order.h"
#include "sim/engine/invariant.h"

namespace pipesim::sink {

namespace {

std::string offsets_text(OffsetRange r) {
  return "[" + std::to_string(r.min) + ", " + std::to_string(r.max) + "]";
}

}  // namespace

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

void ClickHouseSinkTask::throw_non_retriable(DecisionError error) {
  if (auto* t = host_.trace()) {
    const PartitionBatch& pb = batch_[index_];
    const DecideCase c{state_->get(pb.partition), pb.offsets, tolerate_state_mismatch_, true};
    const ErrorHandling handling{deps_.options->errors_tolerance == "all",
                                 !deps_.options->errors_deadletterqueue_topic_name.empty()};
    t->story(host_.now(), host_.name(), std::string(to_string(error)),
             host_.name() + ", partition " + std::to_string(pb.partition) + ": " +
                 explain_decision(c, decision_, &handling),
             {{"partition", pb.partition}, {"batch", {pb.offsets.min, pb.offsets.max}}});
  }
  switch (error) {
    case DecisionError::AFTER_PROCESSING_STATE_MISMATCH:
      ++deps_.counters->state_mismatch_throws;
      break;
    case DecisionError::BEFORE_PROCESSING_STATE_CONTAINS:
      ++deps_.counters->state_contains_throws;
      break;
    case DecisionError::BEFORE_PROCESSING_ERROR_STATE:
    case DecisionError::AFTER_PROCESSING_ERROR_STATE:
      ++deps_.counters->error_state_throws;
      break;
    case DecisionError::NONE:
      break;
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
             host_.name() + ": offsets " + offsets_text(records) + " of partition " +
                 std::to_string(partition) +
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
