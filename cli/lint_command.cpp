// pipesim lint CONFIG: the hazards a config leaves open, before any long run.
// CONFIG is a pipesim config or a connector's Connect REST body; the
// properties flags add a worker's, the service producer's and the tasks'
// consumer's own files. Exit 0 clean, 1 findings, 2 bad input.
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/config_input.h"
#include "cli/result_output.h"
#include "models/pipeline/lint.h"
#include "models/pipeline/lint_effects.h"
#include "sim/report/progress_line.h"
#include "sim/report/summary.h"

namespace pipesim::cli {
namespace {

struct LintArgs {
  std::string config;
  pipeline::PropertiesFiles properties;
  std::vector<std::string> overrides;
  std::string format = "table";
  int quick_seeds = 10;
  int effect_seeds = 4;
  std::string out;  // --out: the findings to this file
};

int execute(const LintArgs& args) {
  pipeline::Config config;
  try {
    config = load_config_input(args.config, args.overrides, args.properties, /*lint=*/true);
  } catch (const sim::ConfigError& e) {
    std::cerr << "pipesim: " << e.what() << "\n";
    return 2;
  }
  if (!result_out_usable(args.out, config_input_files(args.config, args.properties))) return 2;
  // On a terminal, what it is doing: two simulations of ~10-20 s each on the production config.
  std::unique_ptr<sim::ProgressLine> progress;
  if (sim::progress_wanted()) progress = std::make_unique<sim::ProgressLine>("pipesim lint", 2.0);
  if (progress) {
    progress->update("quick simulation: " + sim::counted(args.quick_seeds, "seed") +
                         " x 1 h at the peak hour's rate, with worker crashes",
                     0);
  }
  const pipeline::QuickProfile profile = pipeline::quick_profile(config, args.quick_seeds);
  std::vector<pipeline::Finding> findings = pipeline::lint(config, profile);
  if (progress) {
    progress->update("closing each of " +
                         sim::counted(static_cast<double>(findings.size()), "finding") + ": " +
                         sim::counted(args.effect_seeds, "paired seed") + " each",
                     1);
  }
  pipeline::estimate_effects(config, findings, args.effect_seeds);
  if (progress) progress->update("done", 2);
  const auto setting = [](const pipeline::Finding& f) {
    std::string text;
    for (const auto& a : f.closed_by) text += (text.empty() ? "--set " : " --set ") + a;
    return text;
  };
  std::ostringstream text;
  if (args.format == "json") {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& f : findings) {
      out.push_back({{"id", f.id},
                     {"opens", f.opens},
                     {"message", f.message},
                     {"closed_by", f.closed_by},
                     {"closes_note", f.closes_note},
                     {"metric", f.metric},
                     {"estimate", f.estimate},
                     {"effect", f.effect}});
    }
    text << out.dump(2) << "\n";
  } else if (findings.empty()) {
    text << "no hazards found\n";
  } else {
    for (const auto& f : findings) {
      text << "[" << f.id << "] opens " << f.opens << "\n  " << f.message << "\n";
      if (!f.estimate.empty()) text << "  estimate: " << f.estimate << "\n";
      if (!f.closed_by.empty()) {
        text << "  closed by: " << setting(f)
             << (f.closes_note.empty() ? "" : " (" + f.closes_note + ")") << "\n";
      }
      if (!f.effect.empty()) text << "  closing it: " << f.effect << "\n";
    }
    text << findings.size() << " finding(s); estimates from a quick simulation of "
         << args.quick_seeds
         << " x 1 h at the peak hour's rate with worker crashes; closing effects from "
         << args.effect_seeds << " paired seeds\n";
  }
  if (const int written = emit_result(text.str(), args.out); written != 0) return written;
  return findings.empty() ? 0 : 1;
}

}  // namespace

Command register_lint(CLI::App& app) {
  auto args = std::make_shared<LintArgs>();
  CLI::App* cmd = app.add_subcommand("lint", "name the hazards a config leaves open (exit 1 if any)");
  cmd->add_option("config", args->config, "pipesim config, or a Connect REST connector JSON");
  add_properties_options(cmd, args->properties);
  cmd->add_option("--set", args->overrides, "override: section.key=value (repeatable)");
  cmd->add_option("--format", args->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--out", args->out, "write the findings to this file (atomically)");
  cmd->add_option("--quick-seeds", args->quick_seeds, "seeds of the quick simulation")->check(CLI::Range(1, 1000));
  cmd->add_option("--effect-seeds", args->effect_seeds,
                  "seeds of the paired simulation of closing each finding (0: none)")
      ->check(CLI::Range(0, 1000));
  return [args] { return execute(*args); };
}

}  // namespace pipesim::cli
