// Reading the config a subcommand was given: the file (or the production
// default when none; a Connect REST body on its own is the connector
// section), then the --worker/--producer/--consumer-properties files, then
// every --set override, then validation.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "models/pipeline/config.h"
#include "models/pipeline/properties_input.h"

namespace pipesim::cli {

// The three properties-file flags, the same on every command that takes a config.
void add_properties_options(CLI::App* cmd, pipeline::PropertiesFiles& files);

// Throws sim::ConfigError with every error of the input (up to a bound), one
// per line, each naming where its key came from (the file, or the --set that
// gave it) and its JSON path. The properties files' ignored keys join
// config.ignored.
pipeline::Config load_config_input(const std::string& path, const std::vector<std::string>& overrides,
                                   const pipeline::PropertiesFiles& properties = {}, bool lint = false);

// Throws sim::ConfigError when `raw` (read from `path`) is a sweep's
// manifest (OUT/sweep.json): no config, and the message says what it is.
void reject_sweep_manifest(const nlohmann::json& raw, const std::string& path);

// The files a config input was read from, named for sim::check_not_an_input:
// the config and the three properties files (empty ones are skipped there).
std::vector<std::pair<std::string, std::string>> config_input_files(
    const std::string& path, const pipeline::PropertiesFiles& properties);

// Prefixes each "config error at PATH: ..." line of `message` with where PATH
// came from: "--set ASSIGNMENT: " when an override set it, else "FILE: " when
// a file was given. Lines that name their file already are left as they are.
std::string name_origins(const std::string& message, const std::string& path,
                         const std::vector<std::string>& overrides);

}  // namespace pipesim::cli
