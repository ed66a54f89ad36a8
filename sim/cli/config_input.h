// Reading the config a subcommand was given: the file (or the production
// default when none; a Connect REST body on its own is the connector
// section), then the --worker/--producer/--consumer-properties files, then
// every --set override, then validation.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "models/pipeline/config.h"
#include "models/pipeline/properties_input.h"

namespace pipesim::cli {

// The three properties-file flags, the same on every command that takes a config.
void add_properties_options(CLI::App* cmd, pipeline::PropertiesFiles& files);

// Throws sim::ConfigError with a message naming the file or JSON path. The
// properties files' ignored keys join config.ignored.
pipeline::Config load_config_input(const std::string& path, const std::vector<std::string>& overrides,
                                   const pipeline::PropertiesFiles& properties = {}, bool lint = false);

}  // namespace pipesim::cli
