#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/config_input.h"
#include "cli/result_output.h"

namespace pipesim::cli {

Command register_validate(CLI::App& app) {
  struct Args {
    std::string config;
    std::vector<std::string> overrides;
    pipeline::PropertiesFiles properties;
    bool print = false;
    bool reference = false;
    std::string out;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("validate", "check a config without running it");
  cmd->add_option("config", args->config, "config JSON (default: the production baseline)");
  cmd->add_option("--set", args->overrides, "override: section.key=value (repeatable)");
  add_properties_options(cmd, args->properties);
  cmd->add_flag("--print", args->print, "print the effective config, every default filled in");
  cmd->add_flag("--reference", args->reference, "print the config reference (Markdown) and exit");
  cmd->add_option("--out", args->out, "write what it prints to this file (atomically)");
  return [args] {
    if (!result_out_usable(args->out, config_input_files(args->config, args->properties))) return 2;
    if (args->reference) return emit_result(pipeline::config_reference_markdown(), args->out);
    pipeline::Config config;
    try {
      config = load_config_input(args->config, args->overrides, args->properties);
    } catch (const sim::ConfigError& e) {
      std::cerr << "pipesim: " << e.what() << "\n";
      return 2;
    }
    if (args->print)
      return emit_result(pipeline::effective_config(config).dump(2) + "\n", args->out);
    std::ostringstream text;
    text << "config OK (digest " << pipeline::config_digest(config)
         << "): " << config.kafka.num_partitions << " partitions, " << config.connect.tasks_max
         << " tasks on " << config.connect.workers
         << " worker(s), exactlyOnce=" << (config.connector.exactly_once ? "true" : "false") << ", "
         << config.faults.size() << " fault spec(s)\n";
    for (const auto& path : config.ignored) {
      text << "ignored (a real property pipesim does not model): " << path << "\n";
    }
    return emit_result(text.str(), args->out);
  };
}

}  // namespace pipesim::cli
