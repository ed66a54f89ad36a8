// The connector section: the sink's own keys, or a Connect REST body (what is
// POSTed, PUT or returned by GET), with what such a body carries for the
// framework (tasks.max, consumer.override.*), the ClickHouse settings the
// sink sends with its inserts and the client's URL options.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "models/pipeline/clickhouse_settings.h"
#include "models/pipeline/config.h"
#include "models/pipeline/config_detail.h"
#include "models/pipeline/config_reading.h"
#include "models/sink/jdbc_properties.h"

namespace pipesim::pipeline::config_detail {

using nlohmann::json;
using sim::OptionReader;

void read_connector(const json& raw, const json& section, Config& c, ErrorList& errors) {
  if (!section.is_object()) {
    sim::throw_config_error("connector",
                            "expected an object, found " + sim::describe_json_value(section));
  }
  const bool rest_form = section.contains("config");
  json props = rest_form ? section["config"] : section;
  const std::string path = rest_form ? "connector.config" : "connector";
  if (!props.is_object()) {
    sim::throw_config_error(path, "expected an object, found " + sim::describe_json_value(props));
  }
  if (rest_form) {
    for (const auto& [key, value] : section.items()) {
      if (key != "name" && key != "config" && key != "tasks" && key != "type") {
        sim::throw_config_error("connector." + key,
                                "unknown key in a Connect REST connector (expected \"name\" and "
                                "\"config\", and \"tasks\" and \"type\" of a GET)");
      }
    }
    // GET /connectors/NAME's "type": this sink, not a source connector.
    if (section.contains("type") && section["type"] != "sink") {
      sim::throw_config_error("connector.type",
                              "expected \"sink\" (the ClickHouse sink connector), found " +
                                  sim::describe_json_value(section["type"]));
    }
    if (section.contains("name")) {
      const json& name = section["name"];
      if (!name.is_string()) {
        sim::throw_config_error("connector.name",
                                "expected a string, found " + sim::describe_json_value(name));
      }
      // The Connect REST API refuses a config whose name differs from the connector's.
      if (props.contains("name") && props["name"] != name) {
        sim::throw_config_error("connector.config.name",
                                "expected the connector's name " + name.dump() + ", found " +
                                    sim::describe_json_value(props["name"]));
      }
      props["name"] = name;
    }
    // Connect refuses a connector config without its class
    // (AbstractHerder.validateConnectorConfig: "contains no connector type").
    if (!props.contains("connector.class")) {
      sim::throw_config_error(
          path,
          "a Connect REST connector config names its class: expected \"connector.class\": "
          "\"com.clickhouse.kafka.connect.ClickHouseSinkConnector\" (Connect refuses a config "
          "without one: \"contains no connector type\")");
    }
  }
  // A connector body is the ClickHouse sink's (Connect takes its class by
  // full name or by the plugin aliases, the simple name with or without
  // "Connector"), reading one topic: pipesim models nothing else.
  if (props.contains("connector.class")) {
    const json& cls = props["connector.class"];
    static const std::vector<std::string> kSinkClass = {
        "com.clickhouse.kafka.connect.ClickHouseSinkConnector", "ClickHouseSinkConnector",
        "ClickHouseSink"};
    if (!cls.is_string() || std::find(kSinkClass.begin(), kSinkClass.end(),
                                      cls.get<std::string>()) == kSinkClass.end()) {
      sim::throw_config_error(
          path + ".connector.class",
          "expected com.clickhouse.kafka.connect.ClickHouseSinkConnector (pipesim "
          "simulates the ClickHouse sink, no other connector), found " +
              sim::describe_json_value(cls));
    }
    props.erase("connector.class");  // read: not an ignored property
  }
  if (props.contains("topics.regex")) {
    sim::throw_config_error(path + ".topics.regex",
                            "a pattern may name several topics, and pipesim models one: give "
                            "\"topics\" with one topic name");
  }
  if (props.contains("topics") && props["topics"].is_string() &&
      props["topics"].get<std::string>().find(',') != std::string::npos) {
    sim::throw_config_error(
        path + ".topics",
        "expected one topic (pipesim models one topic and its partitions), found " +
            sim::describe_json_value(props["topics"]));
  }
  // Properties of the framework that a connector config carries map onto
  // the connect section: tasks.max, and consumer.override.* of the
  // consumer properties pipesim models (Connect's per-connector override of
  // the tasks' consumer, AbstractHerder's connector client config override
  // policy permitting). Kafka 3.7 Worker.connectorClientConfigOverrides puts
  // them over the worker's consumer.* and the defaults: given in both
  // places, the connector's wins, and the connect value it replaces is
  // listed. (--set and sweep grids on connect.* apply last: apply_override
  // sets the connector's override too.)
  connect::ConnectOptions from_connector = c.connect;
  {
    json framework = json::object();
    std::vector<std::pair<std::string, std::string>> given;  // (key as given, key in connect)
    if (props.contains("tasks.max")) given.emplace_back("tasks.max", "tasks.max");
    for (const std::string& key : modelled_consumer_keys()) {
      const std::string override_key = "consumer.override." + key;
      if (props.contains(override_key)) given.emplace_back(override_key, key);
    }
    OptionReader reader(framework, path, rest_form);
    for (const auto& [as_given, key] : given) {
      framework[as_given] = props[as_given];
      props.erase(as_given);
      if (as_given != key) reader.alias(as_given, key);
    }
    visit(reader, from_connector);
    const json* connect_raw = raw.contains("connect") ? &raw["connect"] : nullptr;
    nlohmann::ordered_json mine, theirs;
    sim::OptionWriter write_mine(mine), write_theirs(theirs);
    visit(write_mine, from_connector);
    visit(write_theirs, c.connect);
    for (const auto& [as_given, key] : given) {
      if (connect_raw && connect_raw->contains(key) && mine[key] != theirs[key]) {
        c.ignored.push_back("connect." + key + " (" + theirs[key].dump() + "): " + path + "." +
                            as_given + " (" + mine[key].dump() + ") overrides it");
      }
    }
  }
  // clickhouseSettings: the insert settings pipesim models override the
  // clickhouse section (a query's setting wins over the server's
  // profile), the value replaced listed; the others are listed.
  if (const auto it = props.find("clickhouseSettings"); it != props.end()) {
    const std::string text = it->is_string() ? it->get<std::string>() : it->dump();
    props.erase(it);
    ClickHouseSettingsInput settings =
        parse_clickhouse_settings(text, path + ".clickhouseSettings");
    if (settings.modelled.value("async_insert", nlohmann::json(false)) == nlohmann::json(true)) {
      errors.add("config error at " + path +
                 ".clickhouseSettings.async_insert: " + async_insert_refusal());
      settings.modelled.erase("async_insert");
    }
    c.ignored.insert(c.ignored.end(), settings.ignored.begin(), settings.ignored.end());
    clickhouse::ClickHouseOptions from_settings = c.clickhouse;
    visit_collecting(settings.modelled, path + ".clickhouseSettings", true, "", from_settings,
                     c.ignored, errors);
    const json* clickhouse_raw = raw.contains("clickhouse") ? &raw["clickhouse"] : nullptr;
    nlohmann::ordered_json mine, theirs;
    sim::OptionWriter write_mine(mine), write_theirs(theirs);
    visit(write_mine, from_settings);
    visit(write_theirs, c.clickhouse);
    for (const auto& [key, value] : settings.modelled.items()) {
      if (clickhouse_raw && clickhouse_raw->contains(key) && mine[key] != theirs[key]) {
        c.ignored.push_back("clickhouse." + key + " (" + theirs[key].dump() + "): " + path +
                            ".clickhouseSettings " + key + "=" + mine[key].dump() +
                            " overrides it");
      }
    }
    c.clickhouse = from_settings;
  }
  visit_collecting(props, path, rest_form, "connector", c.connector, c.ignored, errors);
  const sink::JdbcProperties jdbc = sink::parse_jdbc_properties(
      c.connector.jdbc_connection_properties, path + ".jdbcConnectionProperties");
  c.connector.socket_timeout = jdbc.socket_timeout;
  c.connector.connect_timeout = jdbc.connect_timeout;
  c.ignored.insert(c.ignored.end(), jdbc.ignored.begin(), jdbc.ignored.end());
  c.connect = from_connector;
}

}  // namespace pipesim::pipeline::config_detail
