// pipesim lint CONFIG: the hazards a config leaves open, before any long run.
// CONFIG is a pipesim config or a connector as POSTed to the Connect REST API
// ({"name": ..., "config": {...}}); --producer-properties adds the service's
// producer.properties (key=value lines). Exit 0 clean, 1 findings, 2 bad input.
#include <fstream>
#include <iostream>
#include <memory>

#include "models/pipeline/lint.h"
#include "sim/cli/commands.h"
#include "sim/cli/config_input.h"

namespace pipesim::cli {
namespace {

struct LintArgs {
  std::string config;
  std::string producer_properties;
  std::vector<std::string> overrides;
  std::string format = "table";
  int quick_seeds = 10;
};

// Java .properties: key=value or key: value, # and ! comments.
nlohmann::json read_properties(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw sim::ConfigError("config error: cannot read " + path);
  nlohmann::json out = nlohmann::json::object();
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#' || line[first] == '!') continue;
    const auto sep = line.find_first_of("=:", first);
    if (sep == std::string::npos) {
      throw sim::ConfigError("config error: " + path + ": line " + std::to_string(number) +
                             ": expected key=value, found \"" + line + "\"");
    }
    const auto trim = [](std::string s) {
      const auto b = s.find_first_not_of(" \t\r");
      const auto e = s.find_last_not_of(" \t\r");
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    const std::string key = trim(line.substr(first, sep - first));
    const std::string text = trim(line.substr(sep + 1));
    // Typed like a JSON config: numbers and booleans as such, anything else a string.
    try {
      const nlohmann::json v = nlohmann::json::parse(text);
      out[key] = v.is_number() || v.is_boolean() ? v : nlohmann::json(text);
    } catch (const nlohmann::json::parse_error&) {
      out[key] = text;
    }
  }
  return out;
}

int execute(const LintArgs& args) {
  pipeline::Config config;
  try {
    nlohmann::json raw = args.config.empty() ? nlohmann::json::object() : pipeline::read_config_file(args.config);
    if (raw.is_object() && raw.contains("config") && raw.contains("name")) {
      raw = nlohmann::json{{"connector", raw}};  // a Connect REST connector on its own
    }
    if (!args.producer_properties.empty()) raw["producer"] = read_properties(args.producer_properties);
    for (const auto& o : args.overrides) pipeline::apply_override(raw, o);
    config = pipeline::load_config(raw, /*lint=*/true);
  } catch (const sim::ConfigError& e) {
    std::cerr << "pipesim: " << e.what() << "\n";
    return 2;
  }
  const pipeline::QuickProfile profile = pipeline::quick_profile(config, args.quick_seeds);
  const std::vector<pipeline::Finding> findings = pipeline::lint(config, profile);
  if (args.format == "json") {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& f : findings) {
      out.push_back({{"id", f.id}, {"opens", f.opens}, {"message", f.message}, {"estimate", f.estimate}});
    }
    std::cout << out.dump(2) << "\n";
  } else if (findings.empty()) {
    std::cout << "no hazards found\n";
  } else {
    for (const auto& f : findings) {
      std::cout << "[" << f.id << "] opens " << f.opens << "\n  " << f.message << "\n";
      if (!f.estimate.empty()) std::cout << "  estimate: " << f.estimate << "\n";
    }
    std::cout << findings.size() << " finding(s); estimates from a quick simulation of "
              << args.quick_seeds << " x 1 h at the peak hour's rate with worker crashes\n";
  }
  return findings.empty() ? 0 : 1;
}

}  // namespace

Command register_lint(CLI::App& app) {
  auto args = std::make_shared<LintArgs>();
  CLI::App* cmd = app.add_subcommand("lint", "name the hazards a config leaves open (exit 1 if any)");
  cmd->add_option("config", args->config, "pipesim config, or a Connect REST connector JSON");
  cmd->add_option("--producer-properties", args->producer_properties, "the service's producer.properties");
  cmd->add_option("--set", args->overrides, "override: section.key=value (repeatable)");
  cmd->add_option("--format", args->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--quick-seeds", args->quick_seeds, "seeds of the quick simulation")->check(CLI::Range(1, 1000));
  return [args] { return execute(*args); };
}

}  // namespace pipesim::cli
