#include "sim/report/chrome_trace.h"

#include <map>

namespace pipesim::sim {

std::string chrome_trace_json(const Trace& trace, const std::string& title) {
  // Tracks get thread ids in order of first appearance: deterministic.
  std::map<std::string, int> tids;
  std::vector<std::string> order;
  for (const auto& r : trace.records()) {
    if (tids.emplace(r.track, static_cast<int>(tids.size()) + 1).second) order.push_back(r.track);
  }
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 0},
                    {"args", {{"name", title}}}});
  for (const auto& track : order) {
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", tids[track]},
                      {"args", {{"name", track}}}});
  }
  for (const auto& r : trace.records()) {
    nlohmann::ordered_json e;
    e["name"] = r.name;
    e["ph"] = std::string(1, r.phase);
    e["ts"] = r.at.us;  // trace-event timestamps are microseconds, like sim::Time
    e["pid"] = 1;
    e["tid"] = tids[r.track];
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
