#include "models/pipeline/properties_input.h"

#include <algorithm>
#include <optional>

#include "models/connect/connect_options.h"
#include "models/pipeline/config.h"
#include "models/pipeline/real_keys.h"
#include "models/producer/producer_options.h"
#include "sim/config/options.h"
#include "sim/config/properties_file.h"

namespace pipesim::pipeline {
namespace {

using nlohmann::json;

// Worker keys the connect section models, and their names there.
std::optional<std::string> worker_key_in_connect(const std::string& key) {
  if (key == "offset.flush.interval.ms" || key == "scheduled.rebalance.max.delay.ms" ||
      key == "task.shutdown.graceful.timeout.ms") {
    return key;
  }
  if (key == "session.timeout.ms")
    return "worker.session.timeout.ms";  // the worker group's, not a consumer's
  return std::nullopt;
}

std::vector<std::string> producer_keys() {
  producer::ProducerOptions defaults;
  sim::OptionLister lister;
  visit(lister, defaults);
  std::vector<std::string> keys;
  for (const auto& row : lister.rows()) keys.push_back(row.key);
  return keys;
}

// A properties value typed as a JSON config would have it: numbers and
// booleans as such (ConfigDef trims before parsing), anything else a string.
json typed(const std::string& text) {
  const auto b = text.find_first_not_of(" \t");
  const auto e = text.find_last_not_of(" \t");
  const std::string trimmed = b == std::string::npos ? std::string() : text.substr(b, e - b + 1);
  try {
    const json v = json::parse(trimmed);
    if (v.is_number() || v.is_boolean()) return v;
  } catch (const json::exception&) {
  }
  return text;
}

// "config error at KEY: expected ..." of a one-key check, said of the file's line.
[[noreturn]] void rethrow_at(const sim::ConfigError& e, const std::string& file, int line) {
  std::string what = e.what();
  const std::string prefix = "config error at ";
  if (what.rfind(prefix, 0) == 0) what = what.substr(prefix.size());
  throw sim::ConfigError("config error: " + file + ": line " + std::to_string(line) + ": " + what);
}

// Checks one value with the section's own reader, so that a bad value names the file and line.
template <class Options>
void check_value(const std::string& key, const json& value, const std::string& file, int line) {
  Options scratch;
  const json one = json{{key, value}};
  try {
    sim::OptionReader reader(one, "", /*strings_allowed=*/true);
    visit(reader, scratch);
  } catch (const sim::ConfigError& e) {
    rethrow_at(e, file, line);
  }
}

[[noreturn]] void unknown(const sim::Property& p, const std::string& file, const std::string& what,
                          const std::vector<std::string>& candidates) {
  const std::string hint = sim::closest_key(p.key, candidates);
  throw sim::ConfigError("config error: " + file + ": line " + std::to_string(p.line) +
                         ": unknown key \"" + p.key + "\" (not a key of " + what + ")" +
                         (hint.empty() ? "" : "; did you mean \"" + hint + "\"?"));
}

// Worker keys Kafka has removed from WorkerConfig. Connect 3.7 does not
// refuse them: AbstractConfig.logUnused() logs every supplied key no
// ConfigDef defines ("These configurations '[...]' were supplied but are not
// used yet"), and the worker starts. So they are listed with what replaced
// them, not refused as typos. rest.host.name and rest.port: deprecated by
// KIP-208 (listeners), removed in 3.7 (KAFKA-12482); the internal converters
// and their sub-keys: removed in 3.0 (KIP-738, always JsonConverter without
// schemas since).
std::optional<std::string> removed_worker_key(const std::string& key) {
  if (key == "rest.host.name" || key == "rest.port") {
    return "removed from Kafka's WorkerConfig in 3.7 (KAFKA-12482): Connect logs it as unused; "
           "the REST server listens on \"listeners\"";
  }
  for (const char* converter : {"internal.key.converter", "internal.value.converter"}) {
    const std::string name = converter;
    if (key == name || key.rfind(name + ".", 0) == 0) {
      return "removed from Kafka's WorkerConfig in 3.0 (KIP-738): Connect logs it as unused; "
             "its internal topics always use JsonConverter without schemas";
    }
  }
  return std::nullopt;
}

json& section(json& raw, const char* name) {
  json& s = raw[name];
  if (!s.is_object()) s = json::object();
  return s;
}

// A consumer property (from consumer.properties, or consumer.* of the worker's).
bool apply_consumer(json& raw, const std::string& key, const sim::Property& p,
                    const std::string& file) {
  const auto& keys = modelled_consumer_keys();
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) return false;
  const json value = typed(p.value);
  check_value<connect::ConnectOptions>(key, value, file, p.line);
  section(raw, "connect")[key] = value;
  return true;
}

}  // namespace

std::vector<std::string> apply_properties_files(json& raw, const PropertiesFiles& files) {
  if (raw.is_null()) raw = json::object();
  if (!raw.is_object()) {
    sim::throw_config_error(
        "(top level)", "expected an object with sections, found " + sim::describe_json_value(raw));
  }
  std::vector<std::string> ignored;
  if (!files.worker.empty()) {
    for (const auto& p : sim::read_properties_file(files.worker)) {
      if (const auto key = worker_key_in_connect(p.key)) {
        const json value = typed(p.value);
        check_value<connect::ConnectOptions>(*key, value, files.worker, p.line);
        section(raw, "connect")[*key] = value;
      } else if (p.key.rfind("consumer.", 0) == 0 &&
                 apply_consumer(raw, p.key.substr(9), p, files.worker)) {
      } else if (real_key("connect", p.key) &&
                 (configdef_has("worker", p.key) || !configdef_has("consumer", p.key))) {
        ignored.push_back(files.worker + ": " + p.key);
      } else if (const auto removed = removed_worker_key(p.key)) {
        ignored.push_back(files.worker + ": " + p.key + " (line " + std::to_string(p.line) + ": " +
                          *removed + ")");
      } else if (configdef_has("consumer", p.key)) {
        // A worker passes on only consumer.-prefixed keys (WorkerConfig's
        // originalsWithPrefix("consumer.")); a plain one is unused.
        throw sim::ConfigError(
            "config error: " + files.worker + ": line " + std::to_string(p.line) + ": \"" + p.key +
            "\" is a consumer key: a worker passes it to its tasks' consumers as \"consumer." +
            p.key + "\"");
      } else {
        unknown(p, files.worker, "Kafka 3.7's WorkerConfig or DistributedConfig",
                configdef_keys("worker"));
      }
    }
  }
  if (!files.consumer.empty()) {
    for (const auto& p : sim::read_properties_file(files.consumer)) {
      if (apply_consumer(raw, p.key, p, files.consumer)) continue;
      if (configdef_has("consumer", p.key)) {
        ignored.push_back(files.consumer + ": " + p.key);
      } else {
        unknown(p, files.consumer, "Kafka 3.7's ConsumerConfig", configdef_keys("consumer"));
      }
    }
  }
  if (!files.producer.empty()) {
    const std::vector<std::string> modelled = producer_keys();
    for (const auto& p : sim::read_properties_file(files.producer)) {
      if (std::find(modelled.begin(), modelled.end(), p.key) != modelled.end()) {
        const json value = typed(p.value);
        check_value<producer::ProducerOptions>(p.key, value, files.producer, p.line);
        section(raw, "producer")[p.key] = value;
      } else if (configdef_has("producer", p.key)) {
        ignored.push_back(files.producer + ": " + p.key);
      } else {
        unknown(p, files.producer, "Kafka 3.7's ProducerConfig", configdef_keys("producer"));
      }
    }
  }
  return ignored;
}

}  // namespace pipesim::pipeline
