// The progress line of long commands on stderr, only when stderr is a
// terminal: "pipesim sweep: 12/36 points  96/288 runs  1m04s elapsed  ETA 2m08s".
// Wall-clock time is used here only, never inside a run.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace pipesim::sim {

// "1m04s", "2h05m", "9s": a duration for people.
std::string format_wall_seconds(double seconds);

// "<counts>  <elapsed> elapsed  ETA <eta>". The ETA assumes the work left
// goes at the pace of the work done (work in any unit: runs, weighted runs,
// simulated seconds); it is left out before any work is done and at the end.
std::string progress_text(const std::string& counts, double work_done, double work,
                          double elapsed_seconds);

// True when stderr is a terminal: only then is a progress line drawn.
bool progress_wanted();

// Ends the progress line on stderr, if one is drawn and not ended, so that a
// message written next (an error, an interrupt) starts on its own line.
void end_progress_line();

// Redraws "<label>: <text>" on stderr ("\r"), at most every 0.2 s, and ends
// the line when all the work is done. Thread-safe.
class ProgressLine {
 public:
  ProgressLine(std::string label, double work);
  void update(const std::string& counts, double work_done);

 private:
  std::mutex mutex_;
  std::string label_;
  double work_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
  bool drawn_ = false;
};

}  // namespace pipesim::sim
