#include "sim/report/chrome_trace.h"

#include <algorithm>
#include <map>
#include <vector>

namespace pipesim::sim {

std::string chrome_trace_json(const Trace& trace, const std::string& title) {
  // A track's spans must nest or follow one another for a trace viewer
  // (Perfetto draws partial overlaps wrongly): a span that overlaps an
  // earlier one of its track without ending inside it goes to the track's
  // next lane ("faults on worker-0 #2"). Spans are placed in start order.
  const auto& records = trace.records();
  std::vector<std::size_t> by_start;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (records[i].phase == 'X') by_start.push_back(i);
  }
  std::stable_sort(by_start.begin(), by_start.end(),
                   [&](std::size_t a, std::size_t b) { return records[a].at < records[b].at; });
  std::map<std::string, std::vector<std::vector<Time>>> lanes;  // track -> lane -> open span ends (a stack)
  std::vector<std::string> lane_of(records.size());
  for (const std::size_t i : by_start) {
    const TraceRecord& r = records[i];
    const Time end = r.at + r.duration;
    auto& track_lanes = lanes[r.track];
    std::size_t lane = 0;
    for (;; ++lane) {
      if (lane == track_lanes.size()) track_lanes.emplace_back();
      auto& open = track_lanes[lane];
      while (!open.empty() && open.back() <= r.at) open.pop_back();  // ended before this one starts
      if (open.empty() || end <= open.back()) {  // free, or nested inside the innermost open span
        open.push_back(end);
        break;
      }
    }
    lane_of[i] = lane == 0 ? r.track : r.track + " #" + std::to_string(lane + 1);
  }
  const auto track_of = [&](std::size_t i) -> const std::string& {
    return records[i].phase == 'X' ? lane_of[i] : records[i].track;
  };
  // Tracks get thread ids in order of first appearance: deterministic.
  std::map<std::string, int> tids;
  std::vector<std::string> order;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (tids.emplace(track_of(i), static_cast<int>(tids.size()) + 1).second) order.push_back(track_of(i));
  }
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 0},
                    {"args", {{"name", title}}}});
  for (const auto& track : order) {
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", tids[track]},
                      {"args", {{"name", track}}}});
  }
  for (std::size_t i = 0; i < records.size(); ++i) {
    const TraceRecord& r = records[i];
    nlohmann::ordered_json e;
    e["name"] = r.name;
    e["ph"] = std::string(1, r.phase);
    e["ts"] = r.at.us;  // trace-event timestamps are microseconds, like sim::Time
    e["pid"] = 1;
    e["tid"] = tids[track_of(i)];
    if (r.phase == 'X') e["dur"] = r.duration.us;
    if (r.phase == 'i') e["s"] = "t";
    if (r.phase == 'C') {
      e["args"] = {{r.name, r.value}};
    } else {
      nlohmann::ordered_json args = nlohmann::ordered_json::object();
      if (!r.story.empty()) args["story"] = r.story;
      for (const auto& [k, v] : r.args.items()) args[k] = v;
      e["args"] = args;
    }
    events.push_back(e);
  }
  nlohmann::ordered_json out;
  out["traceEvents"] = events;
  out["displayTimeUnit"] = "ms";
  return out.dump() + "\n";
}

}  // namespace pipesim::sim
