#include "cli/config_input.h"

namespace pipesim::cli {

void add_properties_options(CLI::App* cmd, pipeline::PropertiesFiles& files) {
  cmd->add_option("--worker-properties", files.worker,
                  "a Connect worker's properties file (connect-distributed.properties)");
  cmd->add_option("--producer-properties", files.producer, "the service's Kafka producer properties file");
  cmd->add_option("--consumer-properties", files.consumer,
                  "the sink tasks' consumer properties (as a worker's consumer.* keys, unprefixed)");
}

namespace {

// The JSON path an override sets: "connect.max.poll.records" of
// "connect.max.poll.records=0", "faults" of "faults=[...]".
std::string override_path(const std::string& assignment) {
  const auto eq = assignment.find('=');
  return assignment.substr(0, eq == std::string::npos ? assignment.size() : eq);
}

// Whether the error path lies at or under `set` ("connector.config.x" counts
// as "connector.x": a REST-form connector keeps its properties under config).
bool under(std::string error_path, const std::string& set) {
  if (error_path.rfind("connector.config.", 0) == 0) error_path = "connector." + error_path.substr(17);
  return error_path == set || error_path.rfind(set + ".", 0) == 0 || error_path.rfind(set + "[", 0) == 0;
}

}  // namespace

std::string name_origins(const std::string& message, const std::string& path,
                         const std::vector<std::string>& overrides) {
  const std::string at = "config error at ";
  std::string out;
  std::size_t from = 0;
  while (from <= message.size()) {
    const auto nl = message.find('\n', from);
    std::string line = message.substr(from, nl == std::string::npos ? std::string::npos : nl - from);
    if (line.rfind(at, 0) == 0) {
      const auto colon = line.find(": ", at.size());
      const std::string error_path = line.substr(at.size(), colon == std::string::npos ? std::string::npos
                                                                                       : colon - at.size());
      std::string origin;
      for (const auto& o : overrides) {  // the last override of a path is the one that counts
        if (under(error_path, override_path(o))) origin = "--set " + o;
      }
      if (origin.empty() && !path.empty()) origin = path;
      if (!origin.empty()) line = origin + ": " + line;
    }
    out += (out.empty() ? "" : "\n") + line;
    if (nl == std::string::npos) break;
    from = nl + 1;
  }
  return out;
}

void reject_sweep_manifest(const nlohmann::json& raw, const std::string& path) {
  if (raw.is_object() && raw.contains("base_config") && raw.contains("grid") &&
      raw.contains("points")) {
    throw sim::ConfigError(
        path +
        " is a sweep's manifest (pipesim sweep --out DIR writes DIR/sweep.json), not a "
        "config: finish that sweep with pipesim sweep CONFIG --grid GRID --out DIR "
        "--resume, or sweep its base_config (a config) with its grid");
  }
}

pipeline::Config load_config_input(const std::string& path, const std::vector<std::string>& overrides,
                                   const pipeline::PropertiesFiles& properties, bool lint) {
  pipeline::Config config;
  std::vector<std::string> ignored;
  nlohmann::json raw;
  try {
    raw = path.empty() ? nlohmann::json::object() : pipeline::read_config_file(path);
  } catch (const sim::ConfigError& e) {
    throw sim::ConfigError(name_origins(e.what(), path, overrides));
  }
  reject_sweep_manifest(raw, path);
  try {
    ignored = pipeline::apply_properties_files(raw, properties);
    for (const auto& o : overrides) pipeline::apply_override(raw, o);
    config = pipeline::load_config(raw, lint);
  } catch (const sim::ConfigError& e) {
    throw sim::ConfigError(name_origins(e.what(), path, overrides));
  }
  config.ignored.insert(config.ignored.end(), ignored.begin(), ignored.end());
  return config;
}

std::vector<std::pair<std::string, std::string>> config_input_files(
    const std::string& path, const pipeline::PropertiesFiles& properties) {
  return {{"config", path},
          {"worker properties", properties.worker},
          {"producer properties", properties.producer},
          {"consumer properties", properties.consumer}};
}

}  // namespace pipesim::cli
