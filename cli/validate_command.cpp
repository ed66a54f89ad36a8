#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/config_input.h"

namespace pipesim::cli {

Command register_validate(CLI::App& app) {
  struct Args {
    std::string config;
    std::vector<std::string> overrides;
    pipeline::PropertiesFiles properties;
    bool print = false;
    bool reference = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("validate", "check a config without running it");
  cmd->add_option("config", args->config, "config JSON (default: the production baseline)");
  cmd->add_option("--set", args->overrides, "override: section.key=value (repeatable)");
  add_properties_options(cmd, args->properties);
  cmd->add_flag("--print", args->print, "print the effective config, every default filled in");
  cmd->add_flag("--reference", args->reference, "print the config reference (Markdown) and exit");
  return [args] {
    if (args->reference) {
      std::cout << pipeline::config_reference_markdown();
      return 0;
    }
    pipeline::Config config;
    try {
      config = load_config_input(args->config, args->overrides, args->properties);
    } catch (const sim::ConfigError& e) {
      std::cerr << "pipesim: " << e.what() << "\n";
      return 2;
    }
    if (args->print) {
      std::cout << pipeline::effective_config(config).dump(2) << "\n";
      return 0;
    }
    std::cout << "config OK (digest " << pipeline::config_digest(config) << "): "
              << config.kafka.num_partitions << " partitions, " << config.connect.tasks_max
              << " tasks on " << config.connect.workers << " worker(s), exactlyOnce="
              << (config.connector.exactly_once ? "true" : "false") << ", " << config.faults.size()
              << " fault spec(s)\n";
    for (const auto& path : config.ignored) {
      std::cout << "ignored (a real property pipesim does not model): " << path << "\n";
    }
    return 0;
  };
}

}  // namespace pipesim::cli
