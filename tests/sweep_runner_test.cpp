// The sweep runner: every (point, seed) runs once, points are handed on in
// order with their seeds in order, whatever the thread count; a failing run
// stops the sweep after the points before it.
#include <gtest/gtest.h>

#include <csignal>
#include <mutex>
#include <set>
#include <stdexcept>

#include "sim/engine/interrupt.h"
#include "sim/experiment/sweep_runner.h"

namespace pipesim::sim {
namespace {

// A fake run whose value names its point and seed, and whose cost varies so
// that with several threads runs finish out of order.
Metrics fake_run(std::size_t position, std::uint64_t seed) {
  volatile std::uint64_t spin = 0;
  for (std::uint64_t i = 0; i < ((position * 7 + seed * 13) % 5) * 20000; ++i) spin = spin + i;
  return {{"value", static_cast<double>(position * 1000 + seed)},
          {"seed", static_cast<double>(seed)}};
}

class SweepRunnerThreads : public ::testing::TestWithParam<unsigned> {};

TEST_P(SweepRunnerThreads, HandsOnEveryPointInOrderWithSeedsInOrder) {
  SweepRunOptions o;
  o.first_seed = 5;
  o.seeds = 3;
  o.threads = GetParam();
  std::vector<std::size_t> order;
  std::vector<std::size_t> runs(7, 0);
  run_sweep(
      7, o, fake_run,
      [&](std::size_t position, const std::vector<Metrics>& r) {
        order.push_back(position);
        ASSERT_EQ(r.size(), 3u);
        for (std::uint64_t s = 0; s < 3; ++s) {
          // Seeds 5, 6, 7 in that order: value = position * 1000 + seed.
          EXPECT_EQ(r[s][0].value, static_cast<double>(position * 1000 + 5 + s));
        }
      },
      [&](std::size_t position) { ++runs[position]; });
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(runs, std::vector<std::size_t>(7, 3));  // 3 seeds of each of the 7 points
}

INSTANTIATE_TEST_SUITE_P(Threads, SweepRunnerThreads, ::testing::Values(1u, 2u, 4u, 16u));

// A user's interrupt is not a failing run: the points finished before it are
// handed on (for --resume) and Interrupted, not SweepRunFailure, comes out.
TEST(SweepRunner, AnInterruptHandsOnTheFinishedPointsAndThrowsInterrupted) {
  SweepRunOptions o;
  o.seeds = 2;
  o.threads = 1;
  std::vector<std::size_t> order;
  const auto run = [](std::size_t position, std::uint64_t seed) {
    if (position == 2) {
      request_interrupt(SIGINT);
      throw_if_interrupted();
    }
    return fake_run(position, seed);
  };
  try {
    run_sweep(5, o, run, [&](std::size_t position, const std::vector<Metrics>&) { order.push_back(position); });
    ADD_FAILURE() << "no exception";
  } catch (const Interrupted& e) {
    EXPECT_EQ(e.signal(), SIGINT);
  }
  clear_interrupt();
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1}));
}

TEST(SweepRunner, AFailingRunStopsTheSweepAfterTheEarlierPoints) {
  SweepRunOptions o;
  o.first_seed = 1;
  o.seeds = 2;
  o.threads = 3;
  std::vector<std::size_t> handed;
  try {
    run_sweep(
        10, o,
        [](std::size_t position, std::uint64_t seed) {
          if (position == 4 && seed == 2) throw std::runtime_error("invariant broke");
          return fake_run(position, seed);
        },
        [&](std::size_t position, const std::vector<Metrics>&) { handed.push_back(position); });
    FAIL() << "no failure reported";
  } catch (const SweepRunFailure& e) {
    EXPECT_EQ(e.position(), 4u);
    EXPECT_EQ(e.seed(), 2u);
    EXPECT_STREQ(e.what(), "invariant broke");
  }
  // Points 0..3 were all taken before the failing run, so they finish and are handed on; 4 is not.
  EXPECT_EQ(handed, (std::vector<std::size_t>{0, 1, 2, 3}));
}

TEST(SweepRunner, AnErrorWhileHandingOnStopsTheSweep) {
  for (const unsigned threads : {1u, 2u}) {
    SweepRunOptions o;
    o.seeds = 1;
    o.threads = threads;
    std::set<std::size_t> ran;
    std::mutex m;
    try {
      run_sweep(
          50, o,
          [&](std::size_t position, std::uint64_t seed) {
            const std::lock_guard<std::mutex> lock(m);
            ran.insert(position);
            return fake_run(position, seed);
          },
          [](std::size_t position, const std::vector<Metrics>&) {
            if (position == 1) throw std::runtime_error("disk full");
          });
      FAIL() << "no error with " << threads << " threads";
    } catch (const SweepRunFailure&) {
      FAIL() << "a file error is not a run failure";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "disk full");
    }
    // One thread runs point 0, then 1, whose handing-on fails: nothing more starts.
    if (threads == 1) {
      EXPECT_EQ(ran, (std::set<std::size_t>{0, 1}));
    }
  }
}

TEST(SweepRunner, NothingToRun) {
  bool called = false;
  run_sweep(0, {}, fake_run, [&](std::size_t, const std::vector<Metrics>&) { called = true; });
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace pipesim::sim
