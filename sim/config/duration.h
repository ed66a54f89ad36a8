// pipesim's own duration syntax: a number and a unit, e.g. "500ms", "30s",
// "45m", "2h", "1d" (also "us"); compound from the largest unit down
// ("1h30m", "2m30s"); a fraction when it is a whole microsecond ("1.5h"). Real properties keep their
// real units (e.g. offset.flush.interval.ms is an integer of milliseconds).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sim/engine/time.h"

namespace pipesim::sim {

std::optional<Time> parse_duration(std::string_view text);
// The shortest exact rendering: 90000000us -> "90s", 5400s -> "90m".
std::string format_duration(Time t);

}  // namespace pipesim::sim
