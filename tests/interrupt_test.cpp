// A user's interrupt stops the event loop and the Monte Carlo workers
// (sim/engine/interrupt.h); without one nothing changes.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdint>
#include <vector>

#include "sim/engine/interrupt.h"
#include "sim/engine/simulation.h"
#include "sim/experiment/monte_carlo.h"

namespace pipesim::sim {
namespace {

// Reschedules itself every microsecond, forever.
class Ticker final : public Component {
 public:
  explicit Ticker(Simulation& sim) : sim_(sim), id_(sim.add_component(this)) {}
  void start() { sim_.schedule_in(Time{1}, id_, 1); }
  void handle(const Event&) override {
    ++ticks_;
    if (ticks_ == interrupt_at_) request_interrupt(SIGINT);
    sim_.schedule_in(Time{1}, id_, 1);
  }
  std::int64_t ticks_ = 0;
  std::int64_t interrupt_at_ = -1;

 private:
  Simulation& sim_;
  ComponentId id_;
};

TEST(Interrupt, FirstSignalIsKept) {
  request_interrupt(SIGTERM);
  request_interrupt(SIGINT);
  EXPECT_EQ(interrupt_signal(), SIGTERM);
  clear_interrupt();
  EXPECT_EQ(interrupt_signal(), 0);
  EXPECT_NO_THROW(throw_if_interrupted());
}

TEST(Interrupt, EventLoopStopsWithinTwoToTheTenEvents) {
  Simulation sim;
  Ticker ticker(sim);
  ticker.interrupt_at_ = 1000;
  ticker.start();
  EXPECT_THROW(sim.run_until(Time::seconds(10)), Interrupted);  // 10 million events otherwise
  clear_interrupt();
  EXPECT_GE(ticker.ticks_, 1000);
  EXPECT_LE(ticker.ticks_, 1024 + 1024);  // the loop looks every 2^10 events
}

TEST(Interrupt, WithoutOneTheEventLoopRunsToTheEnd) {
  Simulation sim;
  Ticker ticker(sim);
  ticker.start();
  sim.run_until(Time{200000});
  EXPECT_EQ(ticker.ticks_, 200000);  // one tick per microsecond, 1..200000
}

TEST(Interrupt, MonteCarloStartsNoNewSeedAndThrows) {
  MonteCarloOptions options;
  options.seeds = 10;
  options.threads = 1;
  std::uint64_t last = 0;
  EXPECT_THROW(run_monte_carlo(options,
                               [&](std::uint64_t seed) {
                                 last = seed;
                                 if (seed == 3) request_interrupt(SIGINT);
                                 return Metrics{};
                               }),
               Interrupted);
  clear_interrupt();
  EXPECT_EQ(last, 3u);  // seeds 4..10 never started
}

// The event loop tells this thread's progress observer the simulated time
// every 2^10 events (one-run commands draw their progress line from it), and
// an observed run is the same run.
TEST(Interrupt, ProgressObserverHearsSimulatedTimeEvery1024Events) {
  std::vector<Time> heard;
  observe_progress([&heard](Time now) { heard.push_back(now); });
  Simulation sim;
  Ticker ticker(sim);
  ticker.start();
  sim.run_until(Time{200000});  // 200,000 events, one per microsecond
  observe_progress({});
  // The loop counts events from 1 and looks every 2^10: before the 1,024th, 2,048th, ...
  // event, at their times (one event per microsecond): 195 times up to 199,680.
  std::vector<Time> every;
  for (std::int64_t k = 1024; k <= 200000; k += 1024) every.push_back(Time{k});
  EXPECT_EQ(heard, every);
  EXPECT_EQ(ticker.ticks_, 200000);
  Simulation again;
  Ticker quiet(again);
  quiet.start();
  again.run_until(Time{200000});
  EXPECT_EQ(quiet.ticks_, ticker.ticks_);
  EXPECT_EQ(heard.size(), every.size());  // cleared: the second run was not heard
}

}  // namespace
}  // namespace pipesim::sim
