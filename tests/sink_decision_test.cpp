// Tests of decide(): the per-partition logic of the ClickHouse Kafka Connect sink v1.3.9
// (Processing.doLogic + RangeContainer.getOverLappingState). Expected ops are computed by hand
// from the v1.3.9 source; models/sink/DECISION_NOTES.md lists where it differs from docs/model.md §4.4.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <vector>

#include "models/sink/decision.h"

namespace pipesim::sink {

void PrintTo(const SinkOp& op, std::ostream* os) {
  static constexpr const char* kKinds[] = {"SET_STATE", "INSERT", "DLQ", "KEEP_STATE"};
  *os << kKinds[static_cast<int>(op.kind)];
  if (op.kind == SinkOpKind::SET_STATE) *os << " " << to_string(op.state);
  if (op.kind != SinkOpKind::KEEP_STATE) {
    *os << " [" << op.records.min << "," << op.records.max << "]";
  }
  if (op.kind == SinkOpKind::INSERT)
    *os << " token [" << op.token.min << "," << op.token.max << "]";
}

namespace {

constexpr ProcessingState kNone = ProcessingState::NONE;
constexpr ProcessingState kBefore = ProcessingState::BEFORE_PROCESSING;
constexpr ProcessingState kAfter = ProcessingState::AFTER_PROCESSING;

SinkOp set_state(const ProcessingState s, const std::int64_t min, const std::int64_t max) {
  return {SinkOpKind::SET_STATE, s, {min, max}, {}};
}

SinkOp insert(const std::int64_t min, const std::int64_t max, const std::int64_t token_min,
              const std::int64_t token_max) {
  return {SinkOpKind::INSERT, kNone, {min, max}, {token_min, token_max}};
}

SinkOp dlq(const std::int64_t min, const std::int64_t max) {
  return {SinkOpKind::DLQ, kNone, {min, max}, {}};
}

SinkOp keep_state() { return {SinkOpKind::KEEP_STATE, kNone, {}, {}}; }

std::vector<SinkOp> ops_of(const Decision& d) {
  const auto ops = d.side_effects();
  return {ops.begin(), ops.end()};
}

Decision run(const ProcessingState state, const OffsetRange stored, const OffsetRange batch,
             const bool tolerate = false) {
  return decide(StateRecord{state, stored}, batch, tolerate);
}

// ---------------------------------------------------------------------------------------------
// Classification (RangeContainer.getOverLappingState), stored range [10,20]

constexpr OffsetRange kStored{10, 20};

RangeState classify_before(const std::int64_t min, const std::int64_t max) {
  return classify(kStored, {min, max}, kBefore);
}

RangeState classify_after(const std::int64_t min, const std::int64_t max) {
  return classify(kStored, {min, max}, kAfter);
}

TEST(SinkClassify, SameWhenBatchEndsAtStoredMaxAndStartsAtOrBelowStoredMin) {
  EXPECT_EQ(classify_before(10, 20), RangeState::SAME);
  EXPECT_EQ(classify_before(5, 20), RangeState::SAME);
  EXPECT_EQ(classify_after(5, 20), RangeState::SAME);
}

TEST(SinkClassify, SameWinsOverZeroForBatchFromOffsetZeroToStoredMax) {
  EXPECT_EQ(classify_before(0, 20), RangeState::SAME);
}

TEST(SinkClassify, NewWhenBatchStartsAfterStoredMax) {
  EXPECT_EQ(classify_before(21, 30), RangeState::NEW);
  EXPECT_EQ(classify_before(25, 30), RangeState::NEW);
}

TEST(SinkClassify, BatchStartingAtStoredMaxIsNotNew) {
  EXPECT_EQ(classify_before(20, 25), RangeState::OVER_LAPPING);
}

TEST(SinkClassify, ContainsWhenBatchLiesInsideStoredRangeButIsNotSame) {
  EXPECT_EQ(classify_before(12, 18), RangeState::CONTAINS);
  EXPECT_EQ(classify_before(10, 15), RangeState::CONTAINS);
  EXPECT_EQ(classify_before(12, 20), RangeState::CONTAINS);
  EXPECT_EQ(classify_before(20, 20), RangeState::CONTAINS);
}

TEST(SinkClassify, OverlappingWhenBatchEndsAfterStoredMax) {
  EXPECT_EQ(classify_before(15, 30), RangeState::OVER_LAPPING);
  EXPECT_EQ(classify_before(5, 30), RangeState::OVER_LAPPING);
  EXPECT_EQ(classify_before(0, 30), RangeState::OVER_LAPPING);
}

TEST(SinkClassify, ZeroWhenBatchFromOffsetZeroEndsBeforeStoredMax) {
  EXPECT_EQ(classify_before(0, 8), RangeState::ZERO);
  EXPECT_EQ(classify_before(0, 15), RangeState::ZERO);
  EXPECT_EQ(classify_after(0, 15), RangeState::ZERO);
}

TEST(SinkClassify, ZeroRequiresTheBatchToStartAtOffsetZero) {
  EXPECT_EQ(classify_after(1, 8), RangeState::PREVIOUS);
  EXPECT_EQ(classify_before(1, 8), RangeState::ERROR);
}

TEST(SinkClassify, BatchFromZeroInsideStoredRangeFromZeroIsContainsNotZero) {
  EXPECT_EQ(classify({0, 20}, {0, 5}, kBefore), RangeState::CONTAINS);
}

TEST(SinkClassify, PreviousForAfterProcessingWhenBatchStartsBelowStoredMinAndEndsBeforeMax) {
  EXPECT_EQ(classify_after(5, 15), RangeState::PREVIOUS);
  EXPECT_EQ(classify_after(3, 8), RangeState::PREVIOUS);
  EXPECT_EQ(classify_after(9, 19), RangeState::PREVIOUS);
}

TEST(SinkClassify, ErrorInsteadOfPreviousForBeforeProcessing) {
  EXPECT_EQ(classify_before(5, 15), RangeState::ERROR);
  EXPECT_EQ(classify_before(3, 8), RangeState::ERROR);
}

// ---------------------------------------------------------------------------------------------
// NONE (doLogic l.166-172)

TEST(SinkDecision, NoneStateWritesBeforeInsertsWholeBatchThenWritesAfter) {
  const Decision d = run(kNone, {}, {5, 15});
  EXPECT_FALSE(d.classified);
  EXPECT_EQ(d.error, DecisionError::NONE);
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{set_state(kBefore, 5, 15), insert(5, 15, 5, 15),
                                            set_state(kAfter, 5, 15)}));
}

TEST(SinkDecision, NoneStateIgnoresTheStoredRange) {
  const Decision d = run(kNone, {10, 20}, {12, 18});
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{set_state(kBefore, 12, 18), insert(12, 18, 12, 18),
                                            set_state(kAfter, 12, 18)}));
}

// ---------------------------------------------------------------------------------------------
// BEFORE_PROCESSING (doLogic l.173-221), stored [10,20]

TEST(SinkDecision, BeforeProcessingZeroResetsStateAndInsertsTheUntrimmedBatch) {
  const Decision d = run(kBefore, kStored, {0, 15});
  EXPECT_EQ(d.range_state, RangeState::ZERO);
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{set_state(kBefore, 0, 15), insert(0, 15, 0, 15),
                                            set_state(kAfter, 0, 15)}));
}

TEST(SinkDecision, BeforeProcessingSameRetryReinsertsWithTheSameTokenWithoutBeforeWrite) {
  const Decision d = run(kBefore, kStored, {10, 20});
  EXPECT_EQ(d.range_state, RangeState::SAME);
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{insert(10, 20, 10, 20), set_state(kAfter, 10, 20)}));
}

TEST(SinkDecision, BeforeProcessingSameDropsRecordsBelowStoredMinButTokensTheWholeBatch) {
  const Decision d = run(kBefore, kStored, {5, 20});
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{insert(10, 20, 5, 20), set_state(kAfter, 5, 20)}));
}

TEST(SinkDecision, BeforeProcessingNewInsertsBatchWithoutWritingBeforeState) {
  const Decision d = run(kBefore, kStored, {21, 30});
  EXPECT_EQ(d.range_state, RangeState::NEW);
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{insert(21, 30, 21, 30), set_state(kAfter, 21, 30)}));
}

TEST(SinkDecision, BeforeProcessingNewAfterAGapInsertsBatch) {
  const Decision d = run(kBefore, kStored, {25, 30});
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{insert(25, 30, 25, 30), set_state(kAfter, 25, 30)}));
}

TEST(SinkDecision, BeforeProcessingContainsThrowsStateContainsWithoutSideEffects) {
  const Decision d = run(kBefore, kStored, {12, 18});
  EXPECT_EQ(d.range_state, RangeState::CONTAINS);
  EXPECT_EQ(d.error, DecisionError::BEFORE_PROCESSING_STATE_CONTAINS);
  EXPECT_TRUE(ops_of(d).empty());
}

TEST(SinkDecision, BeforeProcessingBatchEndingAtStoredMaxButStartingLaterIsContains) {
  const Decision d = run(kBefore, kStored, {12, 20});
  EXPECT_EQ(d.error, DecisionError::BEFORE_PROCESSING_STATE_CONTAINS);
  EXPECT_TRUE(ops_of(d).empty());
}

TEST(SinkDecision, BeforeProcessingContainsIgnoresTolerateStateMismatch) {
  const Decision d = run(kBefore, kStored, {12, 18}, true);
  EXPECT_EQ(d.error, DecisionError::BEFORE_PROCESSING_STATE_CONTAINS);
}

TEST(SinkDecision, BeforeProcessingOverlapFromStoredMinReinsertsStoredRangeThenInsertsRest) {
  const Decision d = run(kBefore, kStored, {10, 30});
  EXPECT_EQ(d.range_state, RangeState::OVER_LAPPING);
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{insert(10, 20, 10, 20), set_state(kAfter, 10, 20),
                                            set_state(kBefore, 21, 30), insert(21, 30, 21, 30),
                                            set_state(kAfter, 21, 30)}));
}

TEST(SinkDecision, BeforeProcessingOverlapFromBelowStoredMinTokensLeftWithStoredRange) {
  // The left part is trimmed before its range is extracted: token [10,20], not [5,20].
  const Decision d = run(kBefore, kStored, {5, 30});
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{insert(10, 20, 10, 20), set_state(kAfter, 10, 20),
                                            set_state(kBefore, 21, 30), insert(21, 30, 21, 30),
                                            set_state(kAfter, 21, 30)}));
}

TEST(SinkDecision, BeforeProcessingOverlapFromOffsetZeroIsNotZeroAndDropsBelowStoredMin) {
  const Decision d = run(kBefore, kStored, {0, 30});
  EXPECT_EQ(d.range_state, RangeState::OVER_LAPPING);
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{insert(10, 20, 10, 20), set_state(kAfter, 10, 20),
                                            set_state(kBefore, 21, 30), insert(21, 30, 21, 30),
                                            set_state(kAfter, 21, 30)}));
}

TEST(SinkDecision, BeforeProcessingOverlapFromInsideStoredRangeSendsLeftToDlq) {
  const Decision d = run(kBefore, kStored, {15, 30});
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{dlq(15, 20), set_state(kBefore, 21, 30),
                                            insert(21, 30, 21, 30), set_state(kAfter, 21, 30)}));
}

TEST(SinkDecision, BeforeProcessingOverlapFromStoredMaxSendsOneRecordToDlq) {
  const Decision d = run(kBefore, kStored, {20, 25});
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{dlq(20, 20), set_state(kBefore, 21, 25),
                                            insert(21, 25, 21, 25), set_state(kAfter, 21, 25)}));
}

TEST(SinkDecision, BeforeProcessingOverlapOfSingleOffsetStoredRange) {
  const Decision d = run(kBefore, {7, 7}, {7, 9});
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{insert(7, 7, 7, 7), set_state(kAfter, 7, 7),
                                            set_state(kBefore, 8, 9), insert(8, 9, 8, 9),
                                            set_state(kAfter, 8, 9)}));
}

TEST(SinkDecision, BeforeProcessingBatchStartingBelowStoredMinAndEndingInsideIsErrorState) {
  const Decision d = run(kBefore, kStored, {5, 15});
  EXPECT_EQ(d.range_state, RangeState::ERROR);
  EXPECT_EQ(d.error, DecisionError::BEFORE_PROCESSING_ERROR_STATE);
  EXPECT_TRUE(ops_of(d).empty());
}

TEST(SinkDecision, BeforeProcessingBatchEntirelyBelowStoredRangeIsErrorState) {
  const Decision d = run(kBefore, kStored, {3, 8});
  EXPECT_EQ(d.error, DecisionError::BEFORE_PROCESSING_ERROR_STATE);
  EXPECT_TRUE(ops_of(d).empty());
}

TEST(SinkDecision, BeforeProcessingErrorStateIgnoresTolerateStateMismatch) {
  const Decision d = run(kBefore, kStored, {5, 15}, true);
  EXPECT_EQ(d.error, DecisionError::BEFORE_PROCESSING_ERROR_STATE);
}

// ---------------------------------------------------------------------------------------------
// AFTER_PROCESSING (doLogic l.222-264), stored [10,20]

TEST(SinkDecision, AfterProcessingSameBatchIsSkippedAndKeepsState) {
  const Decision d = run(kAfter, kStored, {10, 20});
  EXPECT_EQ(d.range_state, RangeState::SAME);
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{keep_state()}));
}

TEST(SinkDecision, AfterProcessingSameBatchStartingBelowStoredMinSkipsThoseRecordsToo) {
  const Decision d = run(kAfter, kStored, {5, 20});
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{keep_state()}));
}

TEST(SinkDecision, AfterProcessingContainedBatchIsSkippedAndKeepsState) {
  const Decision d = run(kAfter, kStored, {12, 18});
  EXPECT_EQ(d.range_state, RangeState::CONTAINS);
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{keep_state()}));
}

TEST(SinkDecision, AfterProcessingZeroResetsStateAndInsertsTheUntrimmedBatch) {
  const Decision d = run(kAfter, kStored, {0, 8});
  EXPECT_EQ(d.range_state, RangeState::ZERO);
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{set_state(kBefore, 0, 8), insert(0, 8, 0, 8),
                                            set_state(kAfter, 0, 8)}));
}

TEST(SinkDecision, AfterProcessingZeroReinsertsStoredOffsetsBelowTheBatchMax) {
  const Decision d = run(kAfter, kStored, {0, 15});
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{set_state(kBefore, 0, 15), insert(0, 15, 0, 15),
                                            set_state(kAfter, 0, 15)}));
}

TEST(SinkDecision, AfterProcessingNewWritesBeforeInsertsThenWritesAfter) {
  const Decision d = run(kAfter, kStored, {21, 30});
  EXPECT_EQ(d.range_state, RangeState::NEW);
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{set_state(kBefore, 21, 30), insert(21, 30, 21, 30),
                                            set_state(kAfter, 21, 30)}));
}

TEST(SinkDecision, AfterProcessingOverlapInsertsOnlyRecordsAboveStoredMaxWithoutDlq) {
  const Decision d = run(kAfter, kStored, {15, 30});
  EXPECT_EQ(d.range_state, RangeState::OVER_LAPPING);
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{set_state(kBefore, 21, 30), insert(21, 30, 21, 30),
                                            set_state(kAfter, 21, 30)}));
}

TEST(SinkDecision, AfterProcessingOverlapFromBelowStoredMinInsertsOnlyRecordsAboveStoredMax) {
  const Decision d = run(kAfter, kStored, {5, 30});
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{set_state(kBefore, 21, 30), insert(21, 30, 21, 30),
                                            set_state(kAfter, 21, 30)}));
}

TEST(SinkDecision, AfterProcessingReplayStartingBeforeStoredRangeIsStateMismatch) {
  const Decision d = run(kAfter, kStored, {5, 15});
  EXPECT_EQ(d.range_state, RangeState::PREVIOUS);
  EXPECT_EQ(d.error, DecisionError::AFTER_PROCESSING_STATE_MISMATCH);
  EXPECT_TRUE(ops_of(d).empty());
}

TEST(SinkDecision, AfterProcessingReplayEntirelyBeforeStoredRangeIsStateMismatch) {
  const Decision d = run(kAfter, kStored, {3, 8});
  EXPECT_EQ(d.error, DecisionError::AFTER_PROCESSING_STATE_MISMATCH);
  EXPECT_TRUE(ops_of(d).empty());
}

TEST(SinkDecision, AfterProcessingToleratedStateMismatchSkipsWithoutAnyOp) {
  // Unlike SAME/CONTAINS there is no onStateUpdate call, hence no keep_state op.
  const Decision d = run(kAfter, kStored, {5, 15}, true);
  EXPECT_EQ(d.range_state, RangeState::PREVIOUS);
  EXPECT_EQ(d.error, DecisionError::NONE);
  EXPECT_TRUE(ops_of(d).empty());
}

TEST(SinkDecision, AfterProcessingStoredRangeFromZeroTreatsBatchFromZeroAsContained) {
  const Decision d = run(kAfter, {0, 5}, {0, 3});
  EXPECT_EQ(d.range_state, RangeState::CONTAINS);
  EXPECT_EQ(ops_of(d), (std::vector<SinkOp>{keep_state()}));
}

TEST(SinkDecision, LargeOffsetsDoNotOverflow) {
  constexpr std::int64_t kTop = std::numeric_limits<std::int64_t>::max();
  const Decision same = run(kAfter, {kTop - 5, kTop}, {kTop - 10, kTop});
  EXPECT_EQ(ops_of(same), (std::vector<SinkOp>{keep_state()}));
  const Decision overlap = run(kBefore, {kTop - 10, kTop - 5}, {kTop - 7, kTop});
  EXPECT_EQ(ops_of(overlap),
            (std::vector<SinkOp>{dlq(kTop - 7, kTop - 5), set_state(kBefore, kTop - 4, kTop),
                                 insert(kTop - 4, kTop, kTop - 4, kTop),
                                 set_state(kAfter, kTop - 4, kTop)}));
}

TEST(SinkDecision, NamesOfStatesClassificationsAndErrors) {
  EXPECT_EQ(to_string(kNone), "NONE");
  EXPECT_EQ(to_string(kBefore), "BEFORE_PROCESSING");
  EXPECT_EQ(to_string(kAfter), "AFTER_PROCESSING");
  EXPECT_EQ(to_string(RangeState::SAME), "SAME");
  EXPECT_EQ(to_string(RangeState::NEW), "NEW");
  EXPECT_EQ(to_string(RangeState::CONTAINS), "CONTAINS");
  EXPECT_EQ(to_string(RangeState::OVER_LAPPING), "OVER_LAPPING");
  EXPECT_EQ(to_string(RangeState::ZERO), "ZERO");
  EXPECT_EQ(to_string(RangeState::PREVIOUS), "PREVIOUS");
  EXPECT_EQ(to_string(RangeState::ERROR), "ERROR");
  EXPECT_EQ(to_string(DecisionError::NONE), "null");
  EXPECT_EQ(to_string(DecisionError::AFTER_PROCESSING_STATE_MISMATCH),
            "AFTER_PROCESSING_STATE_MISMATCH");
  EXPECT_EQ(to_string(DecisionError::BEFORE_PROCESSING_STATE_CONTAINS),
            "BEFORE_PROCESSING_STATE_CONTAINS");
  EXPECT_EQ(to_string(DecisionError::BEFORE_PROCESSING_ERROR_STATE),
            "BEFORE_PROCESSING_ERROR_STATE");
  EXPECT_EQ(to_string(DecisionError::AFTER_PROCESSING_ERROR_STATE), "AFTER_PROCESSING_ERROR_STATE");
}

// ---------------------------------------------------------------------------------------------
// Exhaustive over small offsets: every stored range and batch within 0..12, all states, both
// tolerate values.

constexpr std::int64_t kMaxOffset = 12;

struct Case {
  StateRecord stored;
  OffsetRange batch;
  bool tolerate = false;
};

void for_all_cases(const std::function<void(const Case&, const Decision&)>& check) {
  std::vector<OffsetRange> ranges;
  for (std::int64_t lo = 0; lo <= kMaxOffset; ++lo) {
    for (std::int64_t hi = lo; hi <= kMaxOffset; ++hi) ranges.push_back({lo, hi});
  }
  for (const ProcessingState state : {kNone, kBefore, kAfter}) {
    for (const OffsetRange stored : ranges) {
      for (const OffsetRange batch : ranges) {
        for (const bool tolerate : {false, true}) {
          const Case c{{state, stored}, batch, tolerate};
          check(c, decide(c.stored, c.batch, c.tolerate));
        }
      }
    }
  }
}

std::string describe(const Case& c) {
  return std::string(to_string(c.stored.state)) + " [" + std::to_string(c.stored.range.min) + "," +
         std::to_string(c.stored.range.max) + "] batch [" + std::to_string(c.batch.min) + "," +
         std::to_string(c.batch.max) + "] tolerate=" + (c.tolerate ? "true" : "false");
}

bool contains(const OffsetRange outer, const OffsetRange inner) {
  return outer.min <= inner.min && inner.max <= outer.max;
}

// Offsets of the batch that the decision inserts (count per offset, index = offset).
std::vector<int> insert_counts(const Decision& d) {
  std::vector<int> counts(kMaxOffset + 1, 0);
  for (const SinkOp& op : d.side_effects()) {
    if (op.kind != SinkOpKind::INSERT) continue;
    for (std::int64_t o = op.records.min; o <= op.records.max; ++o) ++counts[o];
  }
  return counts;
}

std::vector<int> dlq_counts(const Decision& d) {
  std::vector<int> counts(kMaxOffset + 1, 0);
  for (const SinkOp& op : d.side_effects()) {
    if (op.kind != SinkOpKind::DLQ) continue;
    for (std::int64_t o = op.records.min; o <= op.records.max; ++o) ++counts[o];
  }
  return counts;
}

// A record-level transcription of Processing.doLogic v1.3.9, independent of decision.cpp:
// lists of offsets, dropRecords, splitRecordsByOffset, extractRange with the empty container
// [Long.MAX_VALUE, -1], one DLQ send per record. Writes made before a throw are kept.
struct Container {
  std::int64_t min = std::numeric_limits<std::int64_t>::max();
  std::int64_t max = -1;
};

Container extract(const std::vector<std::int64_t>& records) {
  Container c;
  for (const std::int64_t o : records) {
    c.min = std::min(c.min, o);
    c.max = std::max(c.max, o);
  }
  return c;
}

RangeState reference_overlap(const Container& stored, const Container& actual,
                             const ProcessingState state) {
  if (actual.max == stored.max && actual.min <= stored.min) return RangeState::SAME;
  if (actual.min > stored.max) return RangeState::NEW;
  if (actual.max <= stored.max && actual.min >= stored.min) return RangeState::CONTAINS;
  if (actual.max > stored.max) return RangeState::OVER_LAPPING;
  if (actual.min == 0) return RangeState::ZERO;
  if (state == kAfter) return RangeState::PREVIOUS;
  return RangeState::ERROR;
}

struct Reference {
  std::vector<SinkOp> ops;
  DecisionError error = DecisionError::NONE;
};

Reference reference_do_logic(const Case& c) {
  std::vector<std::int64_t> records;
  for (std::int64_t o = c.batch.min; o <= c.batch.max; ++o) records.push_back(o);
  const Container stored{c.stored.range.min, c.stored.range.max};
  Reference ref;
  const auto write = [&](const ProcessingState s, const Container& r) {
    ref.ops.push_back(set_state(s, r.min, r.max));
  };
  const auto do_insert = [&](const std::vector<std::int64_t>& list, const Container& r) {
    if (list.empty()) return;
    ref.ops.push_back(insert(list.front(), list.back(), r.min, r.max));
  };
  const auto send_to_dlq = [&](const std::int64_t offset) {
    if (!ref.ops.empty() && ref.ops.back().kind == SinkOpKind::DLQ &&
        ref.ops.back().records.max + 1 == offset) {
      ref.ops.back().records.max = offset;
    } else {
      ref.ops.push_back(dlq(offset, offset));
    }
  };
  const auto drop_below = [&](const std::int64_t from) {
    std::vector<std::int64_t> kept;
    for (const std::int64_t o : records) {
      if (o >= from) kept.push_back(o);
    }
    return kept;
  };
  const auto split = [&](const std::vector<std::int64_t>& list, const std::int64_t at,
                         const std::int64_t from, const bool above) {
    std::vector<std::int64_t> part;
    for (const std::int64_t o : list) {
      if (o >= from && (o > at) == above) part.push_back(o);
    }
    return part;
  };

  const Container range = extract(records);
  switch (c.stored.state) {
    case kNone:
      write(kBefore, range);
      do_insert(records, range);
      write(kAfter, range);
      break;
    case kBefore: {
      const auto trimmed = drop_below(stored.min);
      switch (reference_overlap(stored, range, kBefore)) {
        case RangeState::ZERO:
          write(kBefore, range);
          do_insert(records, range);
          write(kAfter, range);
          break;
        case RangeState::SAME:
        case RangeState::NEW:
          do_insert(trimmed, range);
          write(kAfter, range);
          break;
        case RangeState::CONTAINS:
          ref.error = DecisionError::BEFORE_PROCESSING_STATE_CONTAINS;
          break;
        case RangeState::OVER_LAPPING: {
          const auto left = split(trimmed, stored.max, stored.min, false);
          const Container left_range = extract(left);
          if (reference_overlap(stored, left_range, kBefore) == RangeState::SAME) {
            do_insert(left, left_range);
            write(kAfter, left_range);
          } else {
            for (const std::int64_t o : left) send_to_dlq(o);
          }
          const auto right = split(trimmed, stored.max, stored.min, true);
          const Container right_range = extract(right);
          write(kBefore, right_range);
          do_insert(right, right_range);
          write(kAfter, right_range);
          break;
        }
        default:
          ref.error = DecisionError::BEFORE_PROCESSING_ERROR_STATE;
      }
      break;
    }
    case kAfter: {
      const auto trimmed = drop_below(stored.min);
      switch (reference_overlap(stored, range, kAfter)) {
        case RangeState::SAME:
        case RangeState::CONTAINS:
          ref.ops.push_back(keep_state());
          break;
        case RangeState::ZERO:
          write(kBefore, range);
          do_insert(records, range);
          write(kAfter, range);
          break;
        case RangeState::NEW:
          write(kBefore, range);
          do_insert(trimmed, range);
          write(kAfter, range);
          break;
        case RangeState::OVER_LAPPING: {
          const auto right = split(trimmed, stored.max, stored.min, true);
          const Container right_range = extract(right);
          write(kBefore, right_range);
          do_insert(right, right_range);
          write(kAfter, right_range);
          break;
        }
        case RangeState::PREVIOUS:
          if (!c.tolerate) ref.error = DecisionError::AFTER_PROCESSING_STATE_MISMATCH;
          break;
        default:
          ref.error = DecisionError::AFTER_PROCESSING_ERROR_STATE;
      }
      break;
    }
  }
  return ref;
}

TEST(SinkDecisionExhaustive, MatchesRecordLevelTranscriptionOfDoLogic) {
  for_all_cases([](const Case& c, const Decision& d) {
    const Reference ref = reference_do_logic(c);
    ASSERT_EQ(d.error, ref.error) << describe(c);
    ASSERT_EQ(ops_of(d), ref.ops) << describe(c);
  });
}

TEST(SinkDecisionExhaustive, ClassificationIsReportedForStoredStatesOnly) {
  for_all_cases([](const Case& c, const Decision& d) {
    ASSERT_EQ(d.classified, c.stored.state != kNone) << describe(c);
    if (d.classified) {
      ASSERT_EQ(d.range_state, classify(c.stored.range, c.batch, c.stored.state)) << describe(c);
    }
  });
}

TEST(SinkDecisionExhaustive, AfterProcessingNeverClassifiesAsErrorNorBeforeAsPrevious) {
  for_all_cases([](const Case& c, const Decision& d) {
    if (c.stored.state == kAfter) {
      ASSERT_NE(d.range_state, RangeState::ERROR) << describe(c);
    }
    if (c.stored.state == kBefore) {
      ASSERT_NE(d.range_state, RangeState::PREVIOUS) << describe(c);
    }
    ASSERT_NE(d.error, DecisionError::AFTER_PROCESSING_ERROR_STATE) << describe(c);
  });
}

TEST(SinkDecisionExhaustive, ErrorsFollowFromStateAndClassification) {
  for_all_cases([](const Case& c, const Decision& d) {
    const bool before = c.stored.state == kBefore;
    const bool after = c.stored.state == kAfter;
    ASSERT_EQ(d.error == DecisionError::AFTER_PROCESSING_STATE_MISMATCH,
              after && d.range_state == RangeState::PREVIOUS && !c.tolerate)
        << describe(c);
    ASSERT_EQ(d.error == DecisionError::BEFORE_PROCESSING_STATE_CONTAINS,
              before && d.range_state == RangeState::CONTAINS)
        << describe(c);
    ASSERT_EQ(d.error == DecisionError::BEFORE_PROCESSING_ERROR_STATE,
              before && d.range_state == RangeState::ERROR)
        << describe(c);
  });
}

TEST(SinkDecisionExhaustive, ThrownErrorHasNoSideEffects) {
  for_all_cases([](const Case& c, const Decision& d) {
    if (d.error != DecisionError::NONE) {
      ASSERT_EQ(d.op_count, 0) << describe(c);
    }
  });
}

TEST(SinkDecisionExhaustive, ToleranceChangesOnlyThePreviousCase) {
  for_all_cases([](const Case& c, const Decision& d) {
    const Decision other = decide(c.stored, c.batch, !c.tolerate);
    if (d.range_state == RangeState::PREVIOUS) return;
    ASSERT_EQ(ops_of(d), ops_of(other)) << describe(c);
    ASSERT_EQ(d.error, other.error) << describe(c);
  });
}

TEST(SinkDecisionExhaustive, NoOffsetIsInsertedTwiceOrBothInsertedAndSentToDlq) {
  for_all_cases([](const Case& c, const Decision& d) {
    const std::vector<int> inserted = insert_counts(d);
    const std::vector<int> dlqed = dlq_counts(d);
    for (std::int64_t o = 0; o <= kMaxOffset; ++o) {
      ASSERT_LE(inserted[o] + dlqed[o], 1) << describe(c) << " offset " << o;
    }
  });
}

TEST(SinkDecisionExhaustive, InsertedAndDlqRecordsLieInsideTheBatchAndInsertsInsideTheirToken) {
  for_all_cases([](const Case& c, const Decision& d) {
    for (const SinkOp& op : d.side_effects()) {
      if (op.kind == SinkOpKind::INSERT || op.kind == SinkOpKind::DLQ) {
        ASSERT_TRUE(contains(c.batch, op.records)) << describe(c);
        ASSERT_GE(op.records.count(), 1) << describe(c);
      }
      if (op.kind == SinkOpKind::INSERT) {
        ASSERT_TRUE(contains(op.token, op.records)) << describe(c);
      }
    }
  });
}

TEST(SinkDecisionExhaustive, TokenDiffersFromInsertedRecordsOnlyForBeforeProcessingSame) {
  for_all_cases([](const Case& c, const Decision& d) {
    for (const SinkOp& op : d.side_effects()) {
      if (op.kind != SinkOpKind::INSERT || op.token == op.records) continue;
      ASSERT_EQ(c.stored.state, kBefore) << describe(c);
      ASSERT_EQ(d.range_state, RangeState::SAME) << describe(c);
      ASSERT_LT(c.batch.min, c.stored.range.min) << describe(c);
    }
  });
}

TEST(SinkDecisionExhaustive, NoInsertBelowStoredMinExceptForNoneAndZero) {
  for_all_cases([](const Case& c, const Decision& d) {
    if (c.stored.state == kNone || d.range_state == RangeState::ZERO) return;
    for (const SinkOp& op : d.side_effects()) {
      if (op.kind == SinkOpKind::INSERT) {
        ASSERT_GE(op.records.min, c.stored.range.min) << describe(c);
      }
    }
  });
}

TEST(SinkDecisionExhaustive, AfterProcessingReinsertsStoredOffsetsOnlyOnZero) {
  for_all_cases([](const Case& c, const Decision& d) {
    if (c.stored.state != kAfter || d.range_state == RangeState::ZERO) return;
    for (const SinkOp& op : d.side_effects()) {
      if (op.kind == SinkOpKind::INSERT) {
        ASSERT_GT(op.records.min, c.stored.range.max) << describe(c);
      }
    }
  });
}

TEST(SinkDecisionExhaustive, EveryInsertIsFollowedByAfterProcessingOfItsToken) {
  for_all_cases([](const Case& c, const Decision& d) {
    const auto ops = d.side_effects();
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != SinkOpKind::INSERT) continue;
      ASSERT_LT(i + 1, ops.size()) << describe(c);
      ASSERT_EQ(ops[i + 1], set_state(kAfter, ops[i].token.min, ops[i].token.max)) << describe(c);
    }
  });
}

TEST(SinkDecisionExhaustive, EveryAfterProcessingWriteFollowsAnInsertOfThatToken) {
  for_all_cases([](const Case& c, const Decision& d) {
    const auto ops = d.side_effects();
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != SinkOpKind::SET_STATE || ops[i].state != kAfter) continue;
      ASSERT_GT(i, 0u) << describe(c);
      ASSERT_EQ(ops[i - 1].kind, SinkOpKind::INSERT) << describe(c);
      ASSERT_EQ(ops[i - 1].token, ops[i].records) << describe(c);
    }
  });
}

TEST(SinkDecisionExhaustive, EveryBeforeProcessingWriteIsFollowedByAnInsertOfExactlyThatRange) {
  for_all_cases([](const Case& c, const Decision& d) {
    const auto ops = d.side_effects();
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != SinkOpKind::SET_STATE || ops[i].state != kBefore) continue;
      ASSERT_LT(i + 1, ops.size()) << describe(c);
      ASSERT_EQ(ops[i + 1], insert(ops[i].records.min, ops[i].records.max, ops[i].records.min,
                                   ops[i].records.max))
          << describe(c);
    }
  });
}

TEST(SinkDecisionExhaustive, EveryBatchOffsetAboveStoredMaxIsInsertedUnlessThrown) {
  for_all_cases([](const Case& c, const Decision& d) {
    if (d.error != DecisionError::NONE) return;
    const std::vector<int> inserted = insert_counts(d);
    const std::int64_t above = c.stored.state == kNone ? 0 : c.stored.range.max + 1;
    for (std::int64_t o = std::max(c.batch.min, above); o <= c.batch.max; ++o) {
      ASSERT_EQ(inserted[o], 1) << describe(c) << " offset " << o;
    }
  });
}

TEST(SinkDecisionExhaustive, BeforeProcessingInsertsOrSendsToDlqEveryStoredOffsetOfTheBatch) {
  for_all_cases([](const Case& c, const Decision& d) {
    if (c.stored.state != kBefore || d.error != DecisionError::NONE) return;
    const std::vector<int> inserted = insert_counts(d);
    const std::vector<int> dlqed = dlq_counts(d);
    const std::int64_t lo = std::max(c.batch.min, c.stored.range.min);
    const std::int64_t hi = std::min(c.batch.max, c.stored.range.max);
    for (std::int64_t o = lo; o <= hi; ++o) {
      ASSERT_EQ(inserted[o] + dlqed[o], 1) << describe(c) << " offset " << o;
    }
  });
}

TEST(SinkDecisionExhaustive, DlqOnlyForBeforeProcessingOverlapStartingInsideStoredRange) {
  for_all_cases([](const Case& c, const Decision& d) {
    const auto ops = d.side_effects();
    const auto n = std::count_if(ops.begin(), ops.end(),
                                 [](const SinkOp& op) { return op.kind == SinkOpKind::DLQ; });
    const bool expected = c.stored.state == kBefore && d.range_state == RangeState::OVER_LAPPING &&
                          c.batch.min > c.stored.range.min;
    ASSERT_EQ(n, expected ? 1 : 0) << describe(c);
    if (expected) {
      ASSERT_EQ(ops[0], dlq(c.batch.min, c.stored.range.max)) << describe(c);
    }
  });
}

TEST(SinkDecisionExhaustive, KeepStateOnlyForAfterProcessingSameOrContainsAndAlone) {
  for_all_cases([](const Case& c, const Decision& d) {
    const bool expected = c.stored.state == kAfter && (d.range_state == RangeState::SAME ||
                                                       d.range_state == RangeState::CONTAINS);
    if (expected) {
      ASSERT_EQ(ops_of(d), (std::vector<SinkOp>{keep_state()})) << describe(c);
    } else {
      for (const SinkOp& op : d.side_effects()) {
        ASSERT_NE(op.kind, SinkOpKind::KEEP_STATE) << describe(c);
      }
    }
  });
}

TEST(SinkDecisionExhaustive, LastStateWriteIsAfterProcessingEndingAtBatchMax) {
  for_all_cases([](const Case& c, const Decision& d) {
    const auto ops = d.side_effects();
    const bool writes = std::any_of(
        ops.begin(), ops.end(), [](const SinkOp& op) { return op.kind == SinkOpKind::SET_STATE; });
    if (!writes) return;
    ASSERT_EQ(ops.back().kind, SinkOpKind::SET_STATE) << describe(c);
    ASSERT_EQ(ops.back().state, kAfter) << describe(c);
    ASSERT_EQ(ops.back().records.max, c.batch.max) << describe(c);
  });
}

TEST(SinkDecisionExhaustive, AtMostThreeStateWritesAndFiveOps) {
  for_all_cases([](const Case& c, const Decision& d) {
    const auto ops = d.side_effects();
    const auto writes = std::count_if(
        ops.begin(), ops.end(), [](const SinkOp& op) { return op.kind == SinkOpKind::SET_STATE; });
    ASSERT_LE(writes, 3) << describe(c);
    ASSERT_LE(ops.size(), 5u) << describe(c);
  });
}

}  // namespace
}  // namespace pipesim::sink
