#include "sim/report/story_lines.h"

#include <set>

#include "sim/report/summary.h"

namespace pipesim::sim {

StoryLines story_lines(const Trace& trace) {
  StoryLines out;
  std::set<std::string> seen;
  std::vector<const TraceRecord*> run;
  const auto end_run = [&] {
    if (run.size() == 1) {
      out.lines.push_back(format_clock(run.front()->at) + "  " + run.front()->story);
    } else if (run.size() > 1) {
      out.lines.push_back(format_clock(run.front()->at) + "  ... to " + format_clock(run.back()->at) + ": " +
                          std::to_string(run.size()) +
                          " lines that repeat earlier ones word for word (--format json lists them)");
    }
    run.clear();
  };
  for (const auto& r : trace.records()) {
    if (r.story.empty()) continue;
    ++out.records;
    if (seen.count(r.story) != 0) {
      run.push_back(&r);
      continue;
    }
    end_run();
    seen.insert(r.story);
    out.lines.push_back(format_clock(r.at) + "  " + r.story);
  }
  end_run();
  return out;
}

}  // namespace pipesim::sim
