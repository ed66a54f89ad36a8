#include "models/pipeline/config.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "models/keeper/closed_loop.h"
#include "models/pipeline/config_detail.h"
#include "models/pipeline/config_reading.h"
#include "models/pipeline/real_keys.h"
#include "sim/config/duration.h"
#include "sim/engine/random.h"

namespace pipesim::pipeline {

using nlohmann::json;
using sim::ConfigError;
using sim::OptionReader;
using sim::Time;

using namespace config_detail;  // what the config reader's files share

namespace {

const std::vector<std::string> kSections = {"workload", "producer", "app",       "kafka",
                                            "connect",  "operator", "connector", "clickhouse",
                                            "keeper",   "faults",   "run"};

// Reads one section with its visit() declaration.
template <class Options>
void read_section(const json& raw, const std::string& name, Options& options,
                  std::vector<std::string>& ignored, ErrorList& errors) {
  const auto it = raw.find(name);
  if (it == raw.end()) return;
  if (!it->is_object()) {
    errors.add("config error at " + name + ": expected an object, found " +
               sim::describe_json_value(*it));
    return;
  }
  const bool real = name == "producer" || name == "connect";
  visit_collecting(*it, name, false, real ? name : std::string(), options, ignored, errors);
}

// ProducerConfig.postProcessAndValidateIdempotenceConfigs and
// KafkaProducer.configureDeliveryTimeout (kafka-clients 3.4): a conflict
// with an explicitly set property is an error; otherwise the client quietly
// disables idempotence or raises delivery.timeout.ms, and so do we (the
// effective config then shows the value the client runs with).
void apply_producer_rules(const json& raw, Config& c) {
  const json* given =
      raw.contains("producer") && raw["producer"].is_object() ? &raw["producer"] : nullptr;
  const bool explicit_idempotence = given && given->contains("enable.idempotence");
  auto& p = c.producer;
  if (p.enable_idempotence) {
    const auto conflict = [&](const std::string& what) {
      if (explicit_idempotence) {
        sim::throw_config_error("producer.enable.idempotence",
                                "the idempotent producer needs " + what +
                                    " (kafka-clients refuses this "
                                    "configuration), found enable.idempotence=true");
      }
      p.enable_idempotence = false;
    };
    if (p.retries == 0) conflict("retries > 0");
    if (p.enable_idempotence && p.acks != "all" && p.acks != "-1") conflict("acks=all");
    if (p.enable_idempotence && p.max_in_flight_requests_per_connection > 5) {
      conflict("max.in.flight.requests.per.connection <= 5");
    }
  }
  // ProducerConfig: linger.ms + request.timeout.ms as a long, capped at Integer.MAX_VALUE
  // (delivery.timeout.ms is an int): raised to it, delivery.timeout.ms stays in its range
  // (a swarm finding: the printed config did not load back).
  const Time floor = std::min(p.linger + p.request_timeout, Time::millis(2147483647));
  if (p.delivery_timeout < floor) {
    if (given && given->contains("delivery.timeout.ms")) {
      sim::throw_config_error("producer.delivery.timeout.ms",
                              "expected at least linger.ms + request.timeout.ms (" +
                                  std::to_string(floor.us / 1000) + "), found " +
                                  std::to_string(p.delivery_timeout.us / 1000));
    }
    p.delivery_timeout = floor;
  }
}

void check_consistency(const Config& c, bool lint) {
  if (c.clickhouse.parts_to_delay_insert > 0 && c.clickhouse.parts_to_throw_insert > 0 &&
      c.clickhouse.parts_to_delay_insert >= c.clickhouse.parts_to_throw_insert) {
    // MergeTreeData::delayInsertOrThrowIfNeeded divides by their difference.
    sim::throw_config_error("clickhouse.parts_to_delay_insert",
                            "must be below clickhouse.parts_to_throw_insert (" +
                                std::to_string(c.clickhouse.parts_to_throw_insert) + "), or 0");
  }
  if (c.clickhouse.async_insert) {
    // ClickHouse 25.3: an async insert is buffered with others and flushed
    // later; its block ids then depend on async_insert_deduplicate (off by
    // default: no dedup of a redelivery) and its answer on
    // wait_for_async_insert (0: success before anything is written, so a
    // server crash loses it). pipesim models neither: refused, not ignored.
    sim::throw_config_error("clickhouse.async_insert", async_insert_refusal());
  }
  if (!lint && c.connector.exactly_once && c.connector.buffer_count > 0) {
    // v1.3.9 refuses to start with both (ClickHouseSinkConfig validation).
    sim::throw_config_error("connector.bufferCount",
                            "bufferCount > 0 cannot be combined with exactlyOnce=true "
                            "(the connector refuses this configuration), found " +
                                std::to_string(c.connector.buffer_count));
  }
  if (c.kafka.replication_factor > c.kafka.brokers) {
    sim::throw_config_error("kafka.replication.factor",
                            "expected at most kafka.brokers (" + std::to_string(c.kafka.brokers) +
                                "), found " + std::to_string(c.kafka.replication_factor));
  }
  if (c.kafka.min_insync_replicas > c.kafka.replication_factor) {
    sim::throw_config_error("kafka.min.insync.replicas",
                            "expected at most kafka.replication.factor (" +
                                std::to_string(c.kafka.replication_factor) + "), found " +
                                std::to_string(c.kafka.min_insync_replicas));
  }
  // The background threads must be able to send their healthy rate to a
  // healthy leader: fewer than capacity, and enough threads that each, never
  // pausing, would send it (Keeper: the closed loop's away time >= round trip).
  const auto& k = c.keeper;
  if (k.background_ops_per_s > 0 && k.background_clients > 0) {
    if (k.background_ops_per_s >= k.capacity_ops_per_s) {
      sim::throw_config_error("keeper.background_ops_per_s",
                              "expected less than keeper.capacity_ops_per_s (" +
                                  std::to_string(k.capacity_ops_per_s) + "), found " +
                                  std::to_string(k.background_ops_per_s));
    }
    const double mu = static_cast<double>(k.capacity_ops_per_s);
    const sim::Time trip = keeper::threads_round_trip(k);
    const double most = keeper::ClosedLoop::throughput_of(mu, k.background_clients,
                                                          static_cast<double>(trip.us) / 1e6);
    if (most < static_cast<double>(k.background_ops_per_s)) {
      sim::throw_config_error("keeper.background_clients",
                              std::to_string(k.background_clients) + " threads with a " +
                                  sim::format_duration(trip) + " round trip send at most " +
                                  std::to_string(static_cast<std::int64_t>(most)) +
                                  " requests/s, fewer than keeper.background_ops_per_s (" +
                                  std::to_string(k.background_ops_per_s) + "): give more threads");
    }
  }
  if (c.run.start.us % sim::Time::hours(1).us != 0) {
    sim::throw_config_error("run.start",
                            "expected whole hours (the workload profile is hourly), found " +
                                sim::format_duration(c.run.start));
  }
  if (c.clickhouse.insert_quorum > c.clickhouse.replicas) {
    sim::throw_config_error("clickhouse.insert_quorum",
                            "expected at most clickhouse.replicas (" +
                                std::to_string(c.clickhouse.replicas) + "), found " +
                                std::to_string(c.clickhouse.insert_quorum));
  }
}

}  // namespace

std::string config_detail::async_insert_refusal() {
  return "async_insert=1 is not modelled (buffered inserts change what a redelivery "
         "and a crash do: async_insert_deduplicate, wait_for_async_insert); "
         "expected 0, found 1";
}

const std::vector<std::string>& modelled_consumer_keys() {
  static const std::vector<std::string> keys = {"max.poll.records",          "session.timeout.ms",
                                                "heartbeat.interval.ms",     "max.poll.interval.ms",
                                                "fetch.max.wait.ms",         "fetch.min.bytes",
                                                "max.partition.fetch.bytes", "fetch.max.bytes"};
  return keys;
}

const std::vector<std::string>& config_detail::section_names() { return kSections; }

json connect_rest_document(json raw) {
  if (!raw.is_object()) return raw;
  const bool has_section = std::any_of(kSections.begin(), kSections.end(),
                                       [&](const std::string& s) { return raw.contains(s); });
  if (has_section) return raw;
  // POST /connectors {"name", "config"}, or GET /connectors/NAME {"name", "config", "tasks",
  // "type"}.
  if (raw.contains("name") && raw.contains("config")) return json{{"connector", std::move(raw)}};
  // PUT /connectors/NAME/config: the flat map of the connector's properties.
  if (raw.contains("connector.class")) return json{{"connector", json{{"config", std::move(raw)}}}};
  return raw;
}

Config load_config(const json& raw, bool lint) {
  if (!raw.is_object()) {
    sim::throw_config_error(
        "(top level)", "expected an object with sections, found " + sim::describe_json_value(raw));
  }
  ErrorList errors;
  for (const auto& [key, value] : raw.items()) {
    if (std::find(kSections.begin(), kSections.end(), key) != kSections.end()) continue;
    if (key == "sweep")
      continue;  // the grid of `pipesim sweep`; other commands run the base config
    const std::string hint = sim::closest_key(key, kSections);
    errors.add("config error at " + key + ": unknown section" +
               (hint.empty() ? std::string() : "; did you mean \"" + hint + "\"?"));
  }
  Config c;
  read_section(raw, "workload", c.workload, c.ignored, errors);
  read_section(raw, "producer", c.producer, c.ignored, errors);
  read_section(raw, "app", c.app, c.ignored, errors);
  read_section(raw, "kafka", c.kafka, c.ignored, errors);
  read_section(raw, "connect", c.connect, c.ignored, errors);
  read_section(raw, "operator", c.operator_options, c.ignored, errors);
  read_section(raw, "clickhouse", c.clickhouse, c.ignored, errors);
  read_section(raw, "keeper", c.keeper, c.ignored, errors);
  read_section(raw, "run", c.run, c.ignored, errors);

  if (const auto it = raw.find("connector"); it != raw.end())
    errors.attempt([&] { read_connector(raw, *it, c, errors); });

  if (const auto it = raw.find("faults"); it != raw.end()) {
    if (!it->is_array()) {
      errors.add("config error at faults: expected a list of faults, found " +
                 sim::describe_json_value(*it));
    } else {
      for (std::size_t i = 0; i < it->size(); ++i) {
        errors.attempt(
            [&] { c.faults.push_back(read_fault((*it)[i], "faults[" + std::to_string(i) + "]")); });
      }
    }
  } else {
    c.faults = default_faults();
  }
  // The checks across sections read the values above: only once they are all good.
  errors.throw_if_any();
  apply_producer_rules(raw, c);
  check_consistency(c, lint);
  check_targets(c);
  check_fault_times(c);
  check_fault_partitions(c);
  return c;
}

nlohmann::ordered_json effective_config(const Config& config) {
  Config c = config;  // the writer visits non-const fields
  nlohmann::ordered_json out;
  const auto section = [&out](const char* name, auto& options) {
    nlohmann::ordered_json s = nlohmann::ordered_json::object();
    sim::OptionWriter w(s);
    visit(w, options);
    out[name] = s;
  };
  section("workload", c.workload);
  section("producer", c.producer);
  section("app", c.app);
  section("kafka", c.kafka);
  section("connect", c.connect);
  section("operator", c.operator_options);
  section("connector", c.connector);
  section("clickhouse", c.clickhouse);
  section("keeper", c.keeper);
  nlohmann::ordered_json faults = nlohmann::ordered_json::array();
  for (const auto& f : c.faults) {
    nlohmann::ordered_json o;
    o["kind"] = f.kind;
    if (f.at) o["at"] = sim::format_duration(*f.at);
    if (!f.at) o["rate_per_day"] = f.rate_per_day;
    // An explicit "0s" window of a kind with a default must be printed, or
    // the printed config would load with the default (a swarm finding).
    if (f.duration.us > 0 || (f.duration_mean.us == 0 && default_window(f.kind).us > 0)) {
      o["duration"] = sim::format_duration(f.duration);
    }
    if (f.duration_mean.us > 0) o["duration_mean"] = sim::format_duration(f.duration_mean);
    if (!f.target.empty()) o["target"] = f.target;
    for (const auto& [k, v] : f.params.items()) o[k] = v;
    faults.push_back(o);
  }
  out["faults"] = faults;
  section("run", c.run);
  return out;
}

std::vector<ConfigKey> config_keys() {
  Config c;
  std::vector<ConfigKey> out;
  const auto section = [&out](const char* name, auto& options) {
    sim::OptionLister lister;
    visit(lister, options);
    for (const auto& row : lister.rows()) out.push_back({name, row});
  };
  section("workload", c.workload);
  section("producer", c.producer);
  section("app", c.app);
  section("kafka", c.kafka);
  section("connect", c.connect);
  section("operator", c.operator_options);
  section("connector", c.connector);
  section("clickhouse", c.clickhouse);
  section("keeper", c.keeper);
  section("run", c.run);
  return out;
}

std::string config_reference_markdown() {
  std::string out;
  std::string section;
  for (const auto& [name, row] : config_keys()) {
    if (name != section) {
      if (!section.empty()) out += "\n";
      section = name;
      out += "### `" + name + "`\n\n| key | default | range | meaning |\n|---|---|---|---|\n";
    }
    const std::string range = row.range();
    out += "| `" + row.key + "` | `" + row.default_value + "` | " + (range.empty() ? "" : range) +
           " | " + row.doc + " |\n";
  }
  return out + "\n";
}

std::string config_digest(const Config& config) {
  static const char* kHex = "0123456789abcdef";
  std::uint64_t h = sim::fnv1a64(effective_config(config).dump());
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i) {
    s[static_cast<std::size_t>(i)] = kHex[h & 0xF];
    h >>= 4;
  }
  return s;
}

}  // namespace pipesim::pipeline
