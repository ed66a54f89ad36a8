// `pipesim merge`: joins the output directories of all shards of a sweep
// (`pipesim sweep --shard K/N`) into exactly the directory one unsharded
// sweep writes.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "sim/report/sweep_directory.h"

namespace pipesim::cli {

Command register_merge(CLI::App& app) {
  struct Args {
    std::vector<std::string> shards;
    std::string out;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd =
      app.add_subcommand("merge", "join the output directories of all shards of a sweep");
  cmd->add_option("shards", args->shards, "the shard directories (any order)")->required();
  cmd->add_option("--out", args->out,
                  "directory for the joined sweep (as one unsharded run writes it)")
      ->required();
  return [args] {
    try {
      sim::merge_sweep_shards(args->shards, args->out);
    } catch (const sim::SweepFileError& e) {
      std::cerr << "pipesim: " << e.what() << "\n";
      return 2;
    }
    return 0;
  };
}

}  // namespace pipesim::cli
