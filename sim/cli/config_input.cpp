#include "sim/cli/config_input.h"

namespace pipesim::cli {

pipeline::Config load_config_input(const std::string& path, const std::vector<std::string>& overrides) {
  nlohmann::json raw = path.empty() ? nlohmann::json::object() : pipeline::read_config_file(path);
  for (const auto& o : overrides) pipeline::apply_override(raw, o);
  return pipeline::load_config(raw);
}

}  // namespace pipesim::cli
