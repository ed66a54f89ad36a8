// Atomic result files (sim/report/output_file.h): whole or not at all.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "sim/engine/interrupt.h"
#include "sim/report/output_file.h"

namespace pipesim::sim {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "pipesim_output_file_test.XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(dir_); }
  [[nodiscard]] std::string path(const std::string& name) const { return dir_ + "/" + name; }
  // The names in the directory, sorted.
  [[nodiscard]] std::string listing() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.insert(e.path().filename().string());
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : " ") + n;
    return s;
  }

 private:
  std::string dir_;
};

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(OutputFile, WritesTheWholeContentAndLeavesNoTemporaryFile) {
  TempDir dir;
  write_file_atomically(dir.path("result.json"), "{\"a\": 1}\n");
  EXPECT_EQ(contents(dir.path("result.json")), "{\"a\": 1}\n");
  EXPECT_EQ(dir.listing(), "result.json");
}

TEST(OutputFile, ReplacesAnExistingFile) {
  TempDir dir;
  std::ofstream(dir.path("result.json")) << "stale, and longer than the new content";
  write_file_atomically(dir.path("result.json"), "new");
  EXPECT_EQ(contents(dir.path("result.json")), "new");
  EXPECT_EQ(dir.listing(), "result.json");
}

// Checked before any simulation: the same failures as the write, and a
// writable path is left as it was (the probe file is gone again).
TEST(OutputFile, CheckOutputPathBeforeSimulating) {
  TempDir dir;
  const auto error = [](const std::string& path) {
    try {
      check_output_path(path);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  EXPECT_EQ(error(dir.path("no-such-dir/result.json")),
            "cannot write " + dir.path("no-such-dir/result.json") + ": No such file or directory");
  fs::create_directory(dir.path("sub"));
  EXPECT_EQ(error(dir.path("sub")), "cannot write " + dir.path("sub") + ": Is a directory");
  EXPECT_EQ(error(dir.path("result.json")), "<no error>");
  std::ofstream(dir.path("kept.json")) << "old";
  EXPECT_EQ(error(dir.path("kept.json")), "<no error>");
  EXPECT_EQ(contents(dir.path("kept.json")), "old");
  EXPECT_EQ(dir.listing(), "kept.json sub");
  EXPECT_EQ(error("/dev/null"), "<no error>");  // written directly, not replaced
}

TEST(OutputFile, MissingDirectoryNamesThePath) {
  TempDir dir;
  const std::string path = dir.path("no-such-dir/result.json");
  try {
    write_file_atomically(path, "x");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write " + path + ": No such file or directory");
  }
}

TEST(OutputFile, DirectoryAsTargetIsAnErrorAndLeavesNothing) {
  TempDir dir;
  fs::create_directory(dir.path("out"));
  EXPECT_THROW(write_file_atomically(dir.path("out"), "x"), std::runtime_error);
  EXPECT_EQ(dir.listing(), "out");
  EXPECT_TRUE(fs::is_directory(dir.path("out")));
}

// An interrupt that arrives while the result is being written: the rename
// never happens, the old file stays as it was, the temporary file is gone.
TEST(OutputFile, InterruptBeforeTheRenameKeepsTheOldFileAndRemovesTheTemporary) {
  TempDir dir;
  std::ofstream(dir.path("result.json")) << "old";
  request_interrupt(SIGTERM);
  try {
    write_file_atomically(dir.path("result.json"), "new");
    ADD_FAILURE() << "no Interrupted";
  } catch (const Interrupted& e) {
    EXPECT_EQ(e.signal(), SIGTERM);
  }
  clear_interrupt();
  EXPECT_EQ(contents(dir.path("result.json")), "old");
  EXPECT_EQ(dir.listing(), "result.json");
}

// A FIFO (like /dev/stdout) cannot be replaced by a rename: it is written to.
TEST(OutputFile, FifoIsWrittenToNotReplaced) {
  TempDir dir;
  const std::string fifo = dir.path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A reader first (non-blocking), so that the writer's open does not block.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  write_file_atomically(fifo, "through the pipe");
  char buffer[64] = {};
  const auto n = ::read(reader, buffer, sizeof buffer - 1);
  ::close(reader);
  EXPECT_EQ(std::string(buffer, n > 0 ? static_cast<std::size_t>(n) : 0), "through the pipe");
  struct stat st {};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(dir.listing(), "pipe");
}

}  // namespace
}  // namespace pipesim::sim
