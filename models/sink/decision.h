// The per-partition decision of the ClickHouse Kafka Connect sink v1.3.9
// (Processing.doLogic with RangeContainer.getOverLappingState), as one pure
// function: no time, no I/O, no allocation. The sink model, `pipesim decide`
// and the tests all call decide(); there is no second copy of these rules.
//
// Invariants of a Decision:
//   - ops are the side effects in the order the connector performs them;
//   - when error != DecisionError::NONE the connector threw before any side
//     effect, so op_count == 0.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace pipesim::sink {

// The connector's stored state of a topic-partition (State enum of the sink).
enum class ProcessingState : std::uint8_t { NONE, BEFORE_PROCESSING, AFTER_PROCESSING };

// Inclusive range of Kafka offsets, as RangeContainer holds them.
struct OffsetRange {
  std::int64_t min = 0;
  std::int64_t max = -1;
  [[nodiscard]] std::int64_t count() const { return max - min + 1; }
  friend bool operator==(const OffsetRange&, const OffsetRange&) = default;
};

// One row of the connector's state table (KeeperMap or in-memory).
struct StateRecord {
  ProcessingState state = ProcessingState::NONE;
  OffsetRange range{};  // meaningless when state == NONE
};

// RangeState of the sink: how a batch's range relates to the stored range.
enum class RangeState : std::uint8_t { SAME, NEW, CONTAINS, OVER_LAPPING, ZERO, PREVIOUS, ERROR };

// The errors doLogic throws; names as `pipesim decide` prints them (docs/model.md §9).
enum class DecisionError : std::uint8_t {
  NONE,
  AFTER_PROCESSING_STATE_MISMATCH,
  BEFORE_PROCESSING_STATE_CONTAINS,
  BEFORE_PROCESSING_ERROR_STATE,
  AFTER_PROCESSING_ERROR_STATE,
};

enum class SinkOpKind : std::uint8_t { SET_STATE, INSERT, DLQ, KEEP_STATE };

// One side effect. Fields used per kind:
//   SET_STATE:  state, records (the range written into the state table)
//   INSERT:     records (the offsets inserted), token (insert_deduplication_token range)
//   DLQ:        records (sent to the DLQ as DuplicateException)
//   KEEP_STATE: none (batch skipped; the stored range is reported as inserted)
struct SinkOp {
  SinkOpKind kind = SinkOpKind::KEEP_STATE;
  ProcessingState state = ProcessingState::NONE;
  OffsetRange records{};
  OffsetRange token{};
  friend bool operator==(const SinkOp&, const SinkOp&) = default;
};

struct Decision {
  // False when the stored state was NONE: the connector does not classify then.
  bool classified = false;
  RangeState range_state = RangeState::ERROR;
  DecisionError error = DecisionError::NONE;
  std::uint8_t op_count = 0;
  std::array<SinkOp, 6> ops{};

  [[nodiscard]] std::span<const SinkOp> side_effects() const { return {ops.data(), op_count}; }
};

// REQUIRES: batch.min <= batch.max, batch.min >= 0; if stored.state != NONE then
// 0 <= stored.range.min <= stored.range.max. The batch is contiguous.
[[nodiscard]] Decision decide(const StateRecord& stored, OffsetRange batch,
                              bool tolerate_state_mismatch);

// RangeContainer.getOverLappingState: classification of batch against stored. The stored
// state matters only for the last rule: PREVIOUS when AFTER_PROCESSING, otherwise ERROR
// (so AFTER_PROCESSING never classifies as ERROR).
[[nodiscard]] RangeState classify(OffsetRange stored, OffsetRange batch,
                                  ProcessingState stored_state);

[[nodiscard]] std::string_view to_string(ProcessingState s);
[[nodiscard]] std::string_view to_string(RangeState s);
[[nodiscard]] std::string_view to_string(DecisionError e);  // "null" for NONE

}  // namespace pipesim::sink
