// Result files are written whole or not at all: to a temporary file in the
// same directory, then renamed over the target (rename is atomic on POSIX),
// so an interrupted run never leaves a partial result.
#pragma once

#include <string>

namespace pipesim::sim {

// Throws std::runtime_error naming the path when the file cannot be written.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace pipesim::sim
