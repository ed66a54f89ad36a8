// pipesim: a deterministic discrete-event simulator of
// producer -> Kafka -> Kafka Connect (ClickHouse sink) -> ClickHouse + Keeper.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "cli/interrupts.h"
#include "sim/engine/interrupt.h"

int main(int argc, char** argv) {
  CLI::App app{"pipesim: estimates duplicate and lost rows of a Kafka -> ClickHouse pipeline "
               "under seeded faults"};
  app.set_version_flag("--version", std::string("pipesim ") + PIPESIM_VERSION);
  app.require_subcommand(1);
  app.footer(
      "pipesim help SUBCOMMAND (or pipesim SUBCOMMAND --help) shows a subcommand's options. "
      "A config named - is read from standard input.");
  // Every option's default in --help (the subcommands inherit this).
  app.option_defaults()->always_capture_default();
  const pipesim::cli::Command run = pipesim::cli::register_run(app);
  const pipesim::cli::Command validate = pipesim::cli::register_validate(app);
  const pipesim::cli::Command decide = pipesim::cli::register_decide(app);
  const pipesim::cli::Command compare = pipesim::cli::register_compare(app);
  const pipesim::cli::Command check = pipesim::cli::register_check(app);
  const pipesim::cli::Command lint = pipesim::cli::register_lint(app);
  const pipesim::cli::Command explain = pipesim::cli::register_explain(app);
  const pipesim::cli::Command trace = pipesim::cli::register_trace(app);
  const pipesim::cli::Command sweep = pipesim::cli::register_sweep(app);
  const pipesim::cli::Command merge = pipesim::cli::register_merge(app);
  const pipesim::cli::Command shrink = pipesim::cli::register_shrink(app);
  const pipesim::cli::Command report = pipesim::cli::register_report(app);
  // A sentinel is no default to show: --seed -1 (none given), --seeds 0 (run.seeds),
  // --threads 0 (one per core), an empty list; their descriptions say what applies.
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    for (CLI::Option* o : sub->get_options()) {
      const std::string d = o->get_default_str();
      const std::string name = o->get_name();
      const bool sentinel =
          (name == "--seed" || name == "--seeds" || name == "--threads") && (d == "-1" || d == "0");
      // A required option has no default either (trace --seed showed "=1 REQUIRED").
      if (sentinel || d == "[]" || o->get_required()) o->default_str("");
    }
  }
  // CLI11 reports a misspelt subcommand, and an unknown option before any
  // subcommand, as "A subcommand is required": name what was given instead.
  if (argc > 1) {
    const std::string first = argv[1];
    const auto known = app.get_subcommands([](CLI::App*) { return true; });  // registration order
    std::string expected;
    for (std::size_t i = 0; i < known.size(); ++i) {
      expected += (i == 0 ? "" : i + 1 == known.size() ? " or " : ", ") + known[i]->get_name();
    }
    // `pipesim help [SUBCOMMAND]`: the help of the program or of one subcommand.
    if (first == "help") {
      if (argc == 2) {
        std::cout << app.help();
        return 0;
      }
      const auto it = std::find_if(known.begin(), known.end(),
                                   [&](const CLI::App* s) { return s->get_name() == argv[2]; });
      if (argc == 3 && it != known.end()) {
        std::cout << (*it)->help();
        return 0;
      }
      std::cerr << "pipesim: help expects at most one subcommand (" << expected << "), found \""
                << argv[2] << (argc > 3 ? " ..." : "") << "\"\n";
      return 2;
    }
    const bool is_option = first[0] == '-';
    const bool global = first == "-h" || first == "--help" || first == "--version";
    if (!global &&
        std::none_of(known.begin(), known.end(), [&](const CLI::App* s) { return s->get_name() == first; })) {
      std::cerr << "pipesim: " << (is_option ? "unknown option \"" : "unknown subcommand \"") << first
                << "\" (expected " << (is_option ? "a subcommand: " : "") << expected
                << ")\n(run 'pipesim --help' for usage)\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "pipesim: " << e.what() << "\n(run 'pipesim --help' for usage)\n";
    return 2;
  }
  pipesim::cli::handle_interrupts();
  const auto command = [&]() -> const pipesim::cli::Command* {
    for (const auto* sub : app.get_subcommands()) {
      const std::string name = sub->get_name();
      if (name == "run") return &run;
      if (name == "validate") return &validate;
      if (name == "decide") return &decide;
      if (name == "compare") return &compare;
      if (name == "check") return &check;
      if (name == "lint") return &lint;
      if (name == "explain") return &explain;
      if (name == "trace") return &trace;
      if (name == "sweep") return &sweep;
      if (name == "merge") return &merge;
      if (name == "shrink") return &shrink;
      if (name == "report") return &report;
    }
    return nullptr;
  }();
  if (command == nullptr) return 2;
  try {
    return (*command)();
  } catch (const pipesim::sim::Interrupted& e) {
    // Every subcommand writes its result only at the end (atomically): an
    // interrupt that reaches here has written nothing.
    return pipesim::cli::interrupted(e.signal());
  }
}
