#include "sim/report/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "sim/engine/interrupt.h"

namespace pipesim::sim {
namespace {

// The temporary file of the write in progress, for remove_temporary_output().
char g_temporary[4096];
std::atomic<bool> g_temporary_exists{false};

void write_all(std::FILE* f, const std::string& path, const std::string& content, bool sync) {
  const bool written = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  const bool flushed = std::fflush(f) == 0 && (!sync || ::fsync(::fileno(f)) == 0);
  const int error = errno;
  const bool closed = std::fclose(f) == 0;
  if (!written || !flushed || !closed) {
    throw std::runtime_error("cannot write " + path + ": " +
                             std::strerror(written && flushed ? errno : error));
  }
}

}  // namespace

void check_output_path(const std::string& path) {
  const auto fail = [&path](const std::string& reason) {
    throw std::runtime_error("cannot write " + path + ": " + reason);
  };
  if (path.empty()) fail("empty path");
  struct stat target {};
  if (::stat(path.c_str(), &target) == 0) {
    if (S_ISDIR(target.st_mode)) fail("Is a directory");
    if (!S_ISREG(target.st_mode)) {  // /dev/stdout, a FIFO: written directly
      if (::access(path.c_str(), W_OK) != 0) fail(std::strerror(errno));
      return;
    }
  }
  // The same temporary name the write will use, created and removed.
  const std::string probe = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT, 0644);
  if (fd < 0) fail(std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

void check_not_an_input(const std::string& out,
                        const std::vector<std::pair<std::string, std::string>>& inputs) {
  struct stat target {};
  if (out.empty() || ::stat(out.c_str(), &target) != 0 || !S_ISREG(target.st_mode)) return;
  for (const auto& [what, path] : inputs) {
    struct stat input {};
    if (path.empty() || ::stat(path.c_str(), &input) != 0) continue;
    if (input.st_dev == target.st_dev && input.st_ino == target.st_ino) {
      throw std::runtime_error("--out " + out + " is the " + what + " " + path +
                               ": pipesim never overwrites one of its inputs; write elsewhere");
    }
  }
}

void write_file_atomically(const std::string& path, const std::string& content) {
  struct stat target {};
  if (::stat(path.c_str(), &target) == 0 && !S_ISREG(target.st_mode) && !S_ISDIR(target.st_mode)) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
    write_all(f, path, content, false);
    return;
  }
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  const bool tracked = temporary.size() < sizeof g_temporary;
  if (tracked) {
    std::memcpy(g_temporary, temporary.c_str(), temporary.size() + 1);
    g_temporary_exists.store(true);
  }
  const auto forget = [&] {
    std::remove(temporary.c_str());
    g_temporary_exists.store(false);
  };
  std::FILE* f = std::fopen(temporary.c_str(), "wb");
  if (!f) {
    const std::string reason = std::strerror(errno);
    g_temporary_exists.store(false);
    throw std::runtime_error("cannot write " + path + ": " + reason);
  }
  try {
    write_all(f, path, content, true);
  } catch (...) {
    forget();
    throw;
  }
  if (interrupt_signal() != 0) {
    forget();
    throw_if_interrupted();
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    forget();
    throw std::runtime_error("cannot write " + path + ": " + reason);
  }
  g_temporary_exists.store(false);
}

void remove_temporary_output() noexcept {
  if (g_temporary_exists.load()) ::unlink(g_temporary);
}

}  // namespace pipesim::sim
