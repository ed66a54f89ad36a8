#include "sim/cli/config_input.h"

namespace pipesim::cli {

void add_properties_options(CLI::App* cmd, pipeline::PropertiesFiles& files) {
  cmd->add_option("--worker-properties", files.worker,
                  "a Connect worker's properties file (connect-distributed.properties)");
  cmd->add_option("--producer-properties", files.producer, "the service's Kafka producer properties file");
  cmd->add_option("--consumer-properties", files.consumer,
                  "the sink tasks' consumer properties (as a worker's consumer.* keys, unprefixed)");
}

pipeline::Config load_config_input(const std::string& path, const std::vector<std::string>& overrides,
                                   const pipeline::PropertiesFiles& properties, bool lint) {
  nlohmann::json raw = path.empty() ? nlohmann::json::object() : pipeline::read_config_file(path);
  const std::vector<std::string> ignored = pipeline::apply_properties_files(raw, properties);
  for (const auto& o : overrides) pipeline::apply_override(raw, o);
  pipeline::Config config = pipeline::load_config(raw, lint);
  config.ignored.insert(config.ignored.end(), ignored.begin(), ignored.end());
  return config;
}

}  // namespace pipesim::cli
