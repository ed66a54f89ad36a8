// Which disruptions end in a connector stop (docs/model.md §1, question 2): each
// worker crash, or rebalance / task restart, that finds the connector
// healthy (every task running, none failing since its last progress) opens
// an episode that lasts until the next such one; it "ends in State
// MISMATCH" (or CONTAINS, or ERROR State) if the connector threw that at
// least once during the episode, and "stopped" if any task failed during it,
// whatever the message (one episode may end in several messages: the
// per-message counts overlap; "stopped" counts each episode once). A disruption that comes while the connector
// is still down or failing from an earlier one joins that episode: its stops
// are the earlier disruption's doing, and it is not a trial of its own.
// Summed over seeds these give the proportions that `pipesim check`
// estimates with Wilson intervals (state_mismatch_per_crash, ...).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "models/sink/sink_counters.h"

namespace pipesim::pipeline {

class DisruptionEpisodes {
 public:
  enum Kind : std::uint8_t { CRASH = 0, REBALANCE = 1 };

  // A disruption of `kind` starts now; closes the episode before it if the
  // connector is `healthy`, else joins the open episode.
  // `task_failures`: the tasks failed so far in the run.
  void begin(Kind kind, const sink::SinkCounters& counters, std::int64_t task_failures,
             bool healthy) {
    if (open_ && !healthy) return;
    close(counters, task_failures);
    open_ = true;
    kind_ = kind;
    at_begin_ = snapshot(counters, task_failures);
    ++counts_[kind][0];
  }
  // Closes the open episode (call once more at the end of the run).
  void close(const sink::SinkCounters& counters, std::int64_t task_failures) {
    if (!open_) return;
    const auto now = snapshot(counters, task_failures);
    for (std::size_t i = 0; i < now.size(); ++i) {
      if (now[i] > at_begin_[i]) ++counts_[kind_][i + 1];
    }
    open_ = false;
  }
  // [episodes, ending in State MISMATCH, in State CONTAINS, in ERROR State,
  // stopped at all]
  [[nodiscard]] const std::array<std::int64_t, 5>& counts(Kind kind) const { return counts_[kind]; }

 private:
  static std::array<std::int64_t, 4> snapshot(const sink::SinkCounters& c,
                                              std::int64_t task_failures) {
    return {c.state_mismatch_throws, c.state_contains_throws, c.error_state_throws, task_failures};
  }
  bool open_ = false;
  Kind kind_ = CRASH;
  std::array<std::int64_t, 4> at_begin_{};
  std::array<std::array<std::int64_t, 5>, 2> counts_{};
};

}  // namespace pipesim::pipeline
