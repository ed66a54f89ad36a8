// Reading the config a subcommand was given: the file (or the production
// default when none), then every --set override, then validation.
#pragma once

#include <string>
#include <vector>

#include "models/pipeline/config.h"

namespace pipesim::cli {

// Throws sim::ConfigError with a message naming the file or JSON path.
pipeline::Config load_config_input(const std::string& path, const std::vector<std::string>& overrides);

}  // namespace pipesim::cli
