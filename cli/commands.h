// The subcommands of the `pipesim` binary. Each registers itself on the
// CLI11 app and returns the exit code when run: 0 ok, 1 a check failed,
// 2 bad usage or bad config, 3 an internal error (a simulator bug).
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace pipesim::cli {

using Command = std::function<int()>;

Command register_run(CLI::App& app);
Command register_validate(CLI::App& app);
Command register_decide(CLI::App& app);
Command register_compare(CLI::App& app);
Command register_check(CLI::App& app);
Command register_lint(CLI::App& app);
Command register_explain(CLI::App& app);
Command register_trace(CLI::App& app);
Command register_sweep(CLI::App& app);
Command register_merge(CLI::App& app);
Command register_shrink(CLI::App& app);
Command register_report(CLI::App& app);

}  // namespace pipesim::cli
