// The sink's `clickhouseSettings`: ClickHouse settings the connector sends
// with every insert (clickhouse-kafka-connect v1.3.9 ClickHouseSinkConfig:
// the text split at ',', each piece trimmed and split at '='; a piece that is
// not exactly key=value is dropped; ClickHouseWriter passes each as a server
// setting of the insert). A query's setting wins over the server's profile,
// so those pipesim models for inserts override the clickhouse section.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipesim::pipeline {

// The insert settings pipesim models, as the clickhouse section names them.
const std::vector<std::string>& insert_settings();

struct ClickHouseSettingsInput {
  // The modelled ones, typed as the clickhouse section reads them (a
  // boolean setting's 0 or 1 as false or true).
  nlohmann::json modelled = nlohmann::json::object();
  // Read and not modelled for inserts, each as "<path>.<key>" (and why).
  std::vector<std::string> ignored;
};

// Splits `text` as the connector does; `path` names the key in messages.
ClickHouseSettingsInput parse_clickhouse_settings(const std::string& text, const std::string& path);

// `text` with setting `key` set to `value` where it is given (a --set of
// clickhouse.<key> applies last); returns false if `text` does not give it.
bool set_clickhouse_setting(std::string& text, const std::string& key, const std::string& value);

}  // namespace pipesim::pipeline
