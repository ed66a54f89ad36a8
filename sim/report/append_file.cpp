#include "sim/report/append_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace pipesim::sim {
namespace {

std::runtime_error file_error(const std::string& what, const std::string& path) {
  return std::runtime_error("cannot " + what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

void sync_parent_directory(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) throw file_error("open directory", dir);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw file_error("sync directory", dir);
}

AppendFile::AppendFile(const std::string& path) : path_(path) {
  struct stat st {};
  const bool existed = ::stat(path.c_str(), &st) == 0;
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw file_error("open", path);
  if (!existed) sync_parent_directory(path);
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

void AppendFile::append(std::string_view lines) {
  // One write() for the whole text: a kill can only cut it short, never
  // interleave it; the loop continues a write that the kernel split.
  std::size_t written = 0;
  while (written < lines.size()) {
    const ssize_t n = ::write(fd_, lines.data() + written, lines.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw file_error("append to", path_);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd_) != 0) throw file_error("sync", path_);
}

std::vector<std::string> read_lines(const std::string& path, bool* torn) {
  if (torn) *torn = false;
  std::vector<std::string> lines;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return lines;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw file_error("read", path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  std::size_t start = 0;
  for (;;) {
    const std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) break;
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  if (torn) *torn = start < text.size();
  return lines;
}

std::vector<std::string> recover_lines(const std::string& path, std::size_t keep) {
  bool torn = false;
  std::vector<std::string> lines = read_lines(path, &torn);
  if (lines.size() <= keep && !torn) return lines;
  if (lines.size() > keep) lines.resize(keep);
  std::size_t bytes = 0;
  for (const auto& l : lines) bytes += l.size() + 1;
  if (::truncate(path.c_str(), static_cast<off_t>(bytes)) != 0) throw file_error("truncate", path);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw file_error("open", path);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw file_error("sync", path);
  return lines;
}

}  // namespace pipesim::sim
