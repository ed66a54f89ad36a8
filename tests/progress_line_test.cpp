// The progress line's text (sim/report/progress_line.h): counts, elapsed
// time, and an ETA from the pace of the work done so far.
#include <gtest/gtest.h>

#include "sim/report/progress_line.h"

namespace pipesim::sim {
namespace {

TEST(ProgressLine, WallSecondsForPeople) {
  EXPECT_EQ(format_wall_seconds(9.4), "9s");
  EXPECT_EQ(format_wall_seconds(64), "1m04s");
  EXPECT_EQ(format_wall_seconds(7500), "2h05m");
  EXPECT_EQ(format_wall_seconds(-3), "0s");
}

TEST(ProgressLine, EtaFromThePaceOfTheWorkDone) {
  // 12 of 40 units in 30 s: 28 left at 2.5 s each, 70 s.
  EXPECT_EQ(progress_text("12/40 seeds", 12, 40, 30), "12/40 seeds  30s elapsed  ETA 1m10s");
  // Weighted work (a sweep's cost): 25% of the cost done in 1 min leaves 3 min.
  EXPECT_EQ(progress_text("1/4 points", 250, 1000, 60), "1/4 points  1m00s elapsed  ETA 3m00s");
  // No ETA before any work is done, nor at the end.
  EXPECT_EQ(progress_text("0/40 seeds", 0, 40, 5), "0/40 seeds  5s elapsed");
  EXPECT_EQ(progress_text("40/40 seeds", 40, 40, 95), "40/40 seeds  1m35s elapsed");
}

}  // namespace
}  // namespace pipesim::sim
