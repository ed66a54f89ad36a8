// Chrome trace-event JSON (the format ui.perfetto.dev and chrome://tracing
// open): one process, one thread ("track") per component, spans as complete
// events, counters as counter events, story sentences as instant events.
#pragma once

#include <string>

#include "sim/engine/trace.h"

namespace pipesim::sim {

std::string chrome_trace_json(const Trace& trace, const std::string& title);

}  // namespace pipesim::sim
