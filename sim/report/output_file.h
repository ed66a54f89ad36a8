// Result files are written whole or not at all: to a temporary file in the
// same directory, then renamed over the target (rename is atomic on POSIX),
// so an interrupted run never leaves a partial result.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace pipesim::sim {

// Writes `content` to `path` atomically. Throws std::runtime_error naming the
// path when the file cannot be written, and sim::Interrupted (removing the
// temporary file, leaving `path` as it was) when the user interrupted the
// program before the rename. A target that exists and is not a regular file
// (/dev/stdout, a FIFO) is written to directly: it cannot be replaced.
void write_file_atomically(const std::string& path, const std::string& content);

// Checks, before any work, that write_file_atomically(path, ...) can succeed:
// the path is not a directory, its directory exists, and a file can be
// created there (a probe file is created and removed at once). Throws
// std::runtime_error "cannot write PATH: reason" otherwise.
void check_output_path(const std::string& path);

// Throws std::runtime_error when `out` names the same file as one of
// `inputs` ((what, path) pairs, e.g. {"config", "x.json"}; empty paths are
// skipped): a command never overwrites what it reads. Same file means the
// same device and inode, so another spelling or a link of it counts.
void check_not_an_input(const std::string& out,
                        const std::vector<std::pair<std::string, std::string>>& inputs);

// For a signal handler that ends the program at once: removes the temporary
// file of a write in progress, if any. Async-signal-safe.
void remove_temporary_output() noexcept;

}  // namespace pipesim::sim
