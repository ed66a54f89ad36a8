#include "sim/report/progress_line.h"

#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>

namespace pipesim::sim {
namespace {

// Whether a drawn line waits for its end (shared by every ProgressLine).
std::atomic<bool> g_line_open{false};

}  // namespace

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

std::string progress_text(const std::string& counts, double work_done, double work,
                          double elapsed_seconds) {
  std::string text = counts + "  " + format_wall_seconds(elapsed_seconds) + " elapsed";
  if (work_done > 0 && work_done < work) {
    text += "  ETA " + format_wall_seconds(elapsed_seconds / work_done * (work - work_done));
  }
  return text;
}

bool progress_wanted() { return ::isatty(2) != 0; }

void end_progress_line() {
  if (g_line_open.exchange(false)) {
    std::fputc('\n', stderr);
    std::fflush(stderr);
  }
}

ProgressLine::ProgressLine(std::string label, double work)
    : label_(std::move(label)), work_(work), start_(std::chrono::steady_clock::now()), last_(start_) {}

void ProgressLine::update(const std::string& counts, double work_done) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  const bool finished = work_done >= work_;
  if (!finished && drawn_ && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  drawn_ = true;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  // Pad with spaces so a shorter line fully covers the previous one.
  std::fprintf(stderr, "\r%s: %-70s", label_.c_str(),
               progress_text(counts, work_done, work_, elapsed).c_str());
  g_line_open.store(!finished);
  if (finished) std::fputc('\n', stderr);
  std::fflush(stderr);
}

}  // namespace pipesim::sim
