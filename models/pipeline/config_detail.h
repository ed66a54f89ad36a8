// What the files of the config reader share: config.cpp (sections, checks,
// load_config), config_connector.cpp (the connector section),
// config_faults.cpp (the faults section), config_text.cpp (text, JSON, --set).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/pipeline/config.h"
#include "sim/engine/fault_schedule.h"

namespace pipesim::pipeline::config_detail {

// The config's sections, in the order they are written out.
const std::vector<std::string>& section_names();

// The window a fault kind gets when the config gives none (0: an instant).
sim::Time default_window(const std::string& kind);

class ErrorList;
// The connector section `section` of `raw` into `c` (config_connector.cpp);
// a ConfigError for the first fault of its form, its keys' errors in `errors`.
void read_connector(const nlohmann::json& raw, const nlohmann::json& section, Config& c,
                    ErrorList& errors);
// Why async_insert=1 is refused, wherever it was set.
std::string async_insert_refusal();

// One entry of "faults" at `path` ("faults[3]"); ConfigError naming the key.
sim::FaultSpec read_fault(const nlohmann::json& f, const std::string& path);
// Each fault's target names a worker, task, broker or replica that exists.
void check_targets(const Config& c);
// A scheduled fault comes before run.duration.
void check_fault_times(const Config& c);
// A fault's partitions exist.
void check_fault_partitions(const Config& c);

}  // namespace pipesim::pipeline::config_detail
