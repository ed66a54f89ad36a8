// Where a subcommand's result goes: standard output, or with --out a file
// written atomically (sim/report/output_file.h) that is none of the inputs.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace pipesim::cli {

// --out checked before any work: its directory writable, not one of the
// inputs (named (what, path) as config_input_files gives them). Prints the
// reason and returns false when it will not do; true for an empty --out.
bool result_out_usable(const std::string& out,
                       const std::vector<std::pair<std::string, std::string>>& inputs);

// Writes `text` to standard output (empty `out`) or to `out`: 0, 2 with a
// message when it could not be written, 128 + signal when interrupted.
int emit_result(const std::string& text, const std::string& out);

}  // namespace pipesim::cli
