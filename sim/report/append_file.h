// Append-only files of lines that survive kill -9 and power loss. Each
// append is one write() of whole lines followed by fsync(), so after a crash
// the file holds every finished append, possibly followed by the start of
// one more (a torn last line, without its '\n'); recover_lines cuts that off.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pipesim::sim {

class AppendFile {
 public:
  // Opens `path` for appending, creating it (and syncing its directory, so
  // the new name survives a power loss) if it does not exist.
  explicit AppendFile(const std::string& path);
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  // REQUIRES: `lines` is empty or ends with '\n'. Returns once the bytes are
  // on disk (fsync). Throws std::runtime_error naming the file.
  void append(std::string_view lines);

 private:
  std::string path_;
  int fd_ = -1;
};

// The complete lines of `path` (without their '\n'); a missing file has none.
// `torn` (if given) tells whether the file ends with an incomplete line.
std::vector<std::string> read_lines(const std::string& path, bool* torn = nullptr);

// Keeps the first `keep` complete lines of `path` and cuts everything after
// them (a torn last line, or lines of an append whose companion file was not
// written yet), then returns those lines. Fewer lines than `keep` are all kept.
std::vector<std::string> recover_lines(const std::string& path,
                                       std::size_t keep = std::string::npos);

// fsync of the directory that holds `path`, so a new or renamed name in it is durable.
void sync_parent_directory(const std::string& path);

}  // namespace pipesim::sim
