// Per-partition decision of the ClickHouse Kafka Connect sink v1.3.9.
//
// References are to the v1.3.9 tag of github.com/ClickHouse/clickhouse-kafka-connect,
// under src/main/java/com/clickhouse/kafka/connect/sink/:
//   Processing.java        doLogic (l.131-266), dropRecords (l.112), splitRecordsByOffset (l.121)
//   kafka/RangeContainer   getOverLappingState (l.52-79), empty container = [Long.MAX, -1]
// Where this differs from docs/model.md §4.4, models/sink/DECISION_NOTES.md says so.
//
// The connector works on a list of records; here the batch is the contiguous offset range
// [batch.min, batch.max], so "drop records below x" and "split at x" become range clamps.
#include "models/sink/decision.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace pipesim::sink {
namespace {

constexpr std::int64_t kNoOffset = std::numeric_limits<std::int64_t>::max();

bool is_empty(const OffsetRange r) { return r.max < r.min; }

// Processing.extractRange over a sub-list: a RangeContainer that saw no offset keeps its
// initial [min = Long.MAX_VALUE, max = -1] (RangeContainer.java l.10-14).
OffsetRange extracted(const OffsetRange r) { return is_empty(r) ? OffsetRange{kNoOffset, -1} : r; }

// Processing.dropRecords(stored min): keeps offsets >= from.
OffsetRange drop_below(const OffsetRange batch, const std::int64_t from) {
  return {std::max(batch.min, from), batch.max};
}

// splitRecordsByOffset, partitioningBy(offset > at).get(false): offsets <= at.
OffsetRange part_up_to(const OffsetRange r, const std::int64_t at) {
  return {r.min, std::min(r.max, at)};
}

// splitRecordsByOffset, partitioningBy(offset > at).get(true): offsets > at.
// REQUIRES: at < INT64_MAX (holds: only called when some offset exceeds `at`).
OffsetRange part_above(const OffsetRange r, const std::int64_t at) {
  return {std::max(r.min, at + 1), r.max};
}

// Appends side effects in the order doLogic performs them.
class OpWriter {
 public:
  explicit OpWriter(Decision& d) : d_(d) {}

  // StateProvider.setStateRecord: one state-table write (a KeeperMap INSERT with exactlyOnce).
  void set_state(const ProcessingState s, const OffsetRange r) {
    push({SinkOpKind::SET_STATE, s, r, {}});
  }

  // Processing.doInsert returns early on an empty list: no query, not an op.
  void insert(const OffsetRange records, const OffsetRange token) {
    if (is_empty(records)) return;
    push({SinkOpKind::INSERT, ProcessingState::NONE, records, token});
  }

  // Utils.sendTODlq per record; adjacent sends are reported as one op.
  void dlq(const OffsetRange records) {
    if (is_empty(records)) return;
    if (d_.op_count > 0) {
      SinkOp& last = d_.ops[d_.op_count - 1];
      if (last.kind == SinkOpKind::DLQ && last.records.max + 1 == records.min) {
        last.records.max = records.max;
        return;
      }
    }
    push({SinkOpKind::DLQ, ProcessingState::NONE, records, {}});
  }

  // StateProvider.onStateUpdate(stored record): no write; preCommit may report the stored
  // range as inserted (reportInsertedOffsets=true).
  void keep_state() { push({SinkOpKind::KEEP_STATE, ProcessingState::NONE, {}, {}}); }

  // The usual three steps: BEFORE[r], insert with token r, AFTER[r].
  void guarded_insert(const OffsetRange records, const OffsetRange range) {
    set_state(ProcessingState::BEFORE_PROCESSING, range);
    insert(records, range);
    set_state(ProcessingState::AFTER_PROCESSING, range);
  }

 private:
  void push(const SinkOp& op) {
    assert(d_.op_count < d_.ops.size());
    d_.ops[d_.op_count++] = op;
  }

  Decision& d_;
};

Decision thrown(Decision d, const DecisionError e) {
  d.error = e;
  d.op_count = 0;
  return d;
}

// doLogic case NONE (l.166-172): no classification; the stored range is not looked at.
Decision decide_none(const OffsetRange batch) {
  Decision d;
  OpWriter(d).guarded_insert(batch, batch);
  return d;
}

// doLogic case BEFORE_PROCESSING (l.173-221): the previous insert of the stored range may or
// may not have happened.
Decision decide_before(const OffsetRange stored, const OffsetRange batch) {
  Decision d;
  d.classified = true;
  d.range_state = classify(stored, batch, ProcessingState::BEFORE_PROCESSING);
  OpWriter w(d);
  const OffsetRange trimmed = drop_below(batch, stored.min);
  switch (d.range_state) {
    case RangeState::ZERO:
      // l.180-185: taken as a recreated topic; inserts the untrimmed batch.
      w.guarded_insert(batch, batch);
      return d;
    case RangeState::SAME:
    case RangeState::NEW:
      // l.186-190: no BEFORE write first. The token is the whole batch range although only
      // the trimmed records are sent; SAME relies on ClickHouse block dedup, which hits only
      // when the earlier attempt used the same range.
      w.insert(trimmed, batch);
      w.set_state(ProcessingState::AFTER_PROCESSING, batch);
      return d;
    case RangeState::CONTAINS:
      // l.191-194: "BEFORE_PROCESSING: State CONTAINS", thrown before any write.
      return thrown(d, DecisionError::BEFORE_PROCESSING_STATE_CONTAINS);
    case RangeState::OVER_LAPPING: {
      // l.195-216. The left part is re-classified on its own extracted range: SAME exactly
      // when the batch reaches down to the stored min; it is then re-inserted with the left
      // range as token, otherwise every left record goes to the DLQ as DuplicateException.
      const OffsetRange left = extracted(part_up_to(trimmed, stored.max));
      if (classify(stored, left, ProcessingState::BEFORE_PROCESSING) == RangeState::SAME) {
        w.insert(left, left);
        w.set_state(ProcessingState::AFTER_PROCESSING, left);
      } else {
        w.dlq(left);
      }
      const OffsetRange right = extracted(part_above(trimmed, stored.max));
      w.guarded_insert(right, right);
      return d;
    }
    case RangeState::PREVIOUS:  // not returned for BEFORE_PROCESSING (RangeContainer l.75)
    case RangeState::ERROR:
      // l.217-219: the default branch, "BEFORE_PROCESSING: ERROR State".
      return thrown(d, DecisionError::BEFORE_PROCESSING_ERROR_STATE);
  }
  return d;
}

// doLogic case AFTER_PROCESSING (l.222-264): the stored range is known to be inserted.
Decision decide_after(const OffsetRange stored, const OffsetRange batch,
                      const bool tolerate_state_mismatch) {
  Decision d;
  d.classified = true;
  d.range_state = classify(stored, batch, ProcessingState::AFTER_PROCESSING);
  OpWriter w(d);
  const OffsetRange trimmed = drop_below(batch, stored.min);
  switch (d.range_state) {
    case RangeState::SAME:
    case RangeState::CONTAINS:
      // l.228-231: skipped, also the records below the stored min of a SAME batch.
      w.keep_state();
      return d;
    case RangeState::ZERO:
      // l.232-237: as for BEFORE_PROCESSING, the untrimmed batch.
      w.guarded_insert(batch, batch);
      return d;
    case RangeState::NEW:
      // l.238-242: trimming removes nothing here (batch.min > stored.max >= stored.min).
      w.guarded_insert(trimmed, batch);
      return d;
    case RangeState::OVER_LAPPING: {
      // l.243-251: the records up to the stored max are skipped silently (no DLQ).
      const OffsetRange right = extracted(part_above(trimmed, stored.max));
      w.guarded_insert(right, right);
      return d;
    }
    case RangeState::PREVIOUS:
      // l.252-260: tolerated means a log line only; unlike SAME/CONTAINS, onStateUpdate is
      // not called, so no op at all.
      if (tolerate_state_mismatch) return d;
      return thrown(d, DecisionError::AFTER_PROCESSING_STATE_MISMATCH);
    case RangeState::ERROR:
      // l.261-263: unreachable in v1.3.9, getOverLappingState returns PREVIOUS instead.
      return thrown(d, DecisionError::AFTER_PROCESSING_ERROR_STATE);
  }
  return d;
}

}  // namespace

RangeState classify(const OffsetRange stored, const OffsetRange batch,
                    const ProcessingState stored_state) {
  // RangeContainer.getOverLappingState: the first matching rule wins.
  if (batch.max == stored.max && batch.min <= stored.min) return RangeState::SAME;
  if (batch.min > stored.max) return RangeState::NEW;
  if (batch.max <= stored.max && batch.min >= stored.min) return RangeState::CONTAINS;
  if (batch.max > stored.max) return RangeState::OVER_LAPPING;
  // From here on: batch.min < stored.min and batch.max < stored.max.
  if (batch.min == 0) return RangeState::ZERO;
  if (stored_state == ProcessingState::AFTER_PROCESSING) return RangeState::PREVIOUS;
  return RangeState::ERROR;
}

Decision decide(const StateRecord& stored, const OffsetRange batch,
                const bool tolerate_state_mismatch) {
  assert(batch.min >= 0 && batch.min <= batch.max);
  assert(stored.state == ProcessingState::NONE ||
         (stored.range.min >= 0 && stored.range.min <= stored.range.max));
  switch (stored.state) {
    case ProcessingState::NONE:
      return decide_none(batch);
    case ProcessingState::BEFORE_PROCESSING:
      return decide_before(stored.range, batch);
    case ProcessingState::AFTER_PROCESSING:
      return decide_after(stored.range, batch, tolerate_state_mismatch);
  }
  return {};
}

std::string_view to_string(const ProcessingState s) {
  switch (s) {
    case ProcessingState::NONE:
      return "NONE";
    case ProcessingState::BEFORE_PROCESSING:
      return "BEFORE_PROCESSING";
    case ProcessingState::AFTER_PROCESSING:
      return "AFTER_PROCESSING";
  }
  return "?";
}

std::string_view to_string(const RangeState s) {
  switch (s) {
    case RangeState::SAME:
      return "SAME";
    case RangeState::NEW:
      return "NEW";
    case RangeState::CONTAINS:
      return "CONTAINS";
    case RangeState::OVER_LAPPING:
      return "OVER_LAPPING";
    case RangeState::ZERO:
      return "ZERO";
    case RangeState::PREVIOUS:
      return "PREVIOUS";
    case RangeState::ERROR:
      return "ERROR";
  }
  return "?";
}

std::string_view to_string(const DecisionError e) {
  switch (e) {
    case DecisionError::NONE:
      return "null";
    case DecisionError::AFTER_PROCESSING_STATE_MISMATCH:
      return "AFTER_PROCESSING_STATE_MISMATCH";
    case DecisionError::BEFORE_PROCESSING_STATE_CONTAINS:
      return "BEFORE_PROCESSING_STATE_CONTAINS";
    case DecisionError::BEFORE_PROCESSING_ERROR_STATE:
      return "BEFORE_PROCESSING_ERROR_STATE";
    case DecisionError::AFTER_PROCESSING_ERROR_STATE:
      return "AFTER_PROCESSING_ERROR_STATE";
  }
  return "?";
}

}  // namespace pipesim::sink
