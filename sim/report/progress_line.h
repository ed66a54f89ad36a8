// The progress line of long commands on stderr (only when stderr is a
// terminal, SPEC §7): "12/36 points  96/288 runs  1m04s elapsed  ETA 2m08s".
// Wall-clock time is used here only, never inside a run.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace pipesim::sim {

// "1m04s", "2h05m", "9s": a duration for people.
std::string format_wall_seconds(double seconds);

// The text of one progress line. The ETA assumes the remaining runs take as
// long on average as the finished ones; it is left out before the first run.
std::string progress_text(std::uint64_t points_done, std::uint64_t points, std::uint64_t runs_done,
                          std::uint64_t runs, double elapsed_seconds);

// Redraws the line on stderr ("\r"), at most every 0.2 s, and ends it with a
// newline when everything is done.
class ProgressLine {
 public:
  ProgressLine(std::uint64_t points, std::uint64_t runs);
  void update(std::uint64_t points_done, std::uint64_t runs_done);

 private:
  std::uint64_t points_;
  std::uint64_t runs_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace pipesim::sim
