// The whole configuration of a scenario (docs/model.md §7, §9): one section per real
// component with the real property names, plus pipesim's own "run" and
// "faults". Every value has a default; an empty config is the production
// baseline of docs/model.md §8.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/broker/kafka_options.h"
#include "models/clickhouse/clickhouse_options.h"
#include "models/connect/connect_options.h"
#include "models/keeper/keeper_options.h"
#include "models/pipeline/run_options.h"
#include "models/producer/producer_options.h"
#include "models/sink/connector_options.h"
#include "models/workload/workload_options.h"
#include "sim/engine/fault_schedule.h"

namespace pipesim::pipeline {

struct Config {
  workload::WorkloadOptions workload;
  producer::ProducerOptions producer;
  producer::AppOptions app;
  broker::KafkaOptions kafka;
  connect::ConnectOptions connect;
  connect::OperatorOptions operator_options;
  sink::ConnectorOptions connector;
  clickhouse::ClickHouseOptions clickhouse;
  keeper::KeeperOptions keeper;
  std::vector<sim::FaultSpec> faults;
  RunOptions run;

  // Paths of real properties given in the config that pipesim does not model.
  std::vector<std::string> ignored;
};

// The fault kinds of docs/model.md §5.
const std::vector<std::string>& fault_kinds();

// The tasks' consumer properties the connect section models, under their own
// names (a connector's consumer.override.KEY, a worker's consumer.KEY).
const std::vector<std::string>& modelled_consumer_keys();
// The default fault mix of docs/model.md §8 (used when the config has no "faults" key).
std::vector<sim::FaultSpec> default_faults();

// Reads a config file; ConfigError (naming the file) if unreadable or malformed.
// Reads a config file: a pipesim config, or a connector as the Connect REST
// API has it (connect_rest_document).
nlohmann::json read_config_file(const std::string& path);
// A document that is a Connect REST body on its own — POST /connectors
// {"name", "config"}, GET /connectors/NAME {"name", "config", "tasks", "type"},
// or PUT /connectors/NAME/config (the flat map, told by its
// "connector.class") — becomes {"connector": ...}; anything else is returned as is.
nlohmann::json connect_rest_document(nlohmann::json raw);
// The file's bytes, read once (a pipe, e.g. <(...), cannot be read twice);
// ConfigError naming the file when it cannot be read.
std::string read_config_text(const std::string& path);
// Parses config text read from `source` (named in messages); ConfigError if malformed.
nlohmann::json parse_config_text(const std::string& text, const std::string& source);
// The same for a whole config file: a top level of `null` is refused ("config
// error at (top level)"), not taken for the empty config.
nlohmann::json parse_config_text_not_null(const std::string& text, const std::string& source);
// Applies one "section.key=value" override to the raw JSON; the value is
// parsed as JSON when it is valid JSON, else taken as a string.
void apply_override(nlohmann::json& raw, const std::string& assignment);
// Validates and builds; ConfigError names the JSON path on any bad value.
// `lint`: combinations the real connector refuses to start with (bufferCount
// with exactlyOnce) are let through so that `pipesim lint` can report them.
Config load_config(const nlohmann::json& raw, bool lint = false);

// The effective config: every section with every value, defaults filled in.
nlohmann::ordered_json effective_config(const Config& config);
// Every key of every section (not the faults), with its default, range and
// doc, from the same declarations that read the config: what the reference
// prints and what the swarm test draws from.
struct ConfigKey {
  std::string section;
  sim::OptionLister::Row row;
};
std::vector<ConfigKey> config_keys();
// The config reference as a Markdown table per section (key, default, range,
// doc), generated from config_keys().
std::string config_reference_markdown();

// 16 hex digits of FNV-1a over the effective config: two runs with the same
// digest ran the same scenario.
std::string config_digest(const Config& config);

}  // namespace pipesim::pipeline
