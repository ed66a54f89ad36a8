#include "sim/report/progress_line.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace pipesim::sim {

std::string format_wall_seconds(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  char buf[48];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%llds", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, (s % 3600) / 60);
  }
  return buf;
}

std::string progress_text(std::uint64_t points_done, std::uint64_t points, std::uint64_t runs_done,
                          std::uint64_t runs, double elapsed_seconds) {
  std::string text = std::to_string(points_done) + "/" + std::to_string(points) + " points  " +
                     std::to_string(runs_done) + "/" + std::to_string(runs) + " runs  " +
                     format_wall_seconds(elapsed_seconds) + " elapsed";
  if (runs_done > 0 && runs_done < runs) {
    const double eta =
        elapsed_seconds / static_cast<double>(runs_done) * static_cast<double>(runs - runs_done);
    text += "  ETA " + format_wall_seconds(eta);
  }
  return text;
}

ProgressLine::ProgressLine(std::uint64_t points, std::uint64_t runs)
    : points_(points), runs_(runs), start_(std::chrono::steady_clock::now()), last_(start_) {}

void ProgressLine::update(std::uint64_t points_done, std::uint64_t runs_done) {
  const auto now = std::chrono::steady_clock::now();
  const bool finished = points_done == points_;
  if (!finished && runs_done > 1 && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  // Pad with spaces so a shorter line fully covers the previous one.
  std::fprintf(stderr, "\rpipesim sweep: %-70s",
               progress_text(points_done, points_, runs_done, runs_, elapsed).c_str());
  if (finished) std::fputc('\n', stderr);
  std::fflush(stderr);
}

}  // namespace pipesim::sim
