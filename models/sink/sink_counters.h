// Counters of the connector's rare paths (docs/model.md §6), shared by all tasks of a
// run, so a report can show that a branch really ran.
#pragma once

#include <array>
#include <cstdint>

#include "models/sink/decision.h"

namespace pipesim::sink {

struct SinkCounters {
  // [stored state BEFORE_PROCESSING=0 / AFTER_PROCESSING=1][RangeState]
  std::array<std::array<std::int64_t, 7>, 2> classifications{};
  std::int64_t state_mismatch_throws = 0;
  std::int64_t state_contains_throws = 0;
  std::int64_t error_state_throws = 0;  // BEFORE_ or AFTER_PROCESSING ERROR State
  std::int64_t retriable_exceptions = 0;
  std::int64_t insert_timeouts = 0;
  std::int64_t dlq_records = 0;
  std::int64_t dropped_records = 0;
  std::int64_t keeper_map_ops = 0;
};

}  // namespace pipesim::sink
