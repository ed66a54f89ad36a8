// The story of a traced run as `pipesim explain` prints it: one line per
// story record ("HH:MM:SS.mmm  text"), with each run of lines that only
// repeat earlier ones word for word (a task that fails, is restarted and
// fails again the same way) told as one line.
#pragma once

#include <string>
#include <vector>

#include "sim/engine/trace.h"

namespace pipesim::sim {

struct StoryLines {
  std::vector<std::string> lines;
  std::size_t records = 0;  // story records before collapsing
};

[[nodiscard]] StoryLines story_lines(const Trace& trace);

}  // namespace pipesim::sim
