// An optional record of what happened in one run, for `pipesim explain`
// (the story: plain-language sentences in time order) and `pipesim trace`
// (a Chrome trace-event timeline). Components reach it through
// Simulation::trace(), which is null unless a trace was asked for, so a
// normal run pays one predictable branch per hook.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/time.h"

namespace pipesim::sim {

struct TraceRecord {
  Time at;
  std::string track;  // "faults", "task-0", "partition-3", "inserts", "keeper", "producer"
  std::string name;
  char phase = 'i';   // 'i' instant, 'X' span with duration, 'C' counter
  Time duration{};
  double value = 0;   // counters
  std::string story;  // a sentence for explain (empty: timeline detail only)
  nlohmann::json args = nlohmann::json::object();
};

class Trace {
 public:
  // `detail`: keep timeline events (puts, inserts, commits, counters), not
  // only story sentences; only those within [from, to] are kept.
  // At most `max_detail` of them: a browser opens a trace of tens of MB, not
  // hundreds; the first one left out is remembered (detail_cut()).
  explicit Trace(bool detail, Time from = Time{0}, Time to = Time::max(),
                 std::size_t max_detail = SIZE_MAX)
      : detail_(detail), from_(from), to_(to), max_detail_(max_detail) {}

  [[nodiscard]] bool detail() const { return detail_; }
  // Within the window (max_detail aside: a record past it is counted as cut).
  [[nodiscard]] bool detail_at(Time at) const { return detail_ && at >= from_ && at <= to_; }
  // The time of the first detail left out for max_detail; nullopt if none was.
  [[nodiscard]] std::optional<Time> detail_cut() const { return detail_cut_; }

  // A sentence of the run's story (also shown on the timeline).
  void story(Time at, std::string track, std::string name, std::string text,
             nlohmann::json args = nlohmann::json::object());
  void instant(Time at, std::string track, std::string name, nlohmann::json args = nlohmann::json::object());
  void span(Time at, Time duration, std::string track, std::string name,
            nlohmann::json args = nlohmann::json::object());
  void counter(Time at, std::string track, std::string name, double value);

  [[nodiscard]] const std::vector<TraceRecord>& records() const { return records_; }

 private:
  // Whether to keep a detail record at `at` (counting it).
  bool keep(Time at);

  bool detail_;
  Time from_, to_;
  std::size_t max_detail_;
  std::size_t kept_detail_ = 0;
  std::optional<Time> detail_cut_;
  std::vector<TraceRecord> records_;
};

// "01:02:03.250" (days are added as "1d 01:02:03.250").
std::string format_clock(Time t);

}  // namespace pipesim::sim
