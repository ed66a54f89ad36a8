// The event queue and run loop: order by (time, sequence), FIFO among equal
// times, incarnation-based dropping of a crashed component's events.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sim/engine/event_queue.h"
#include "sim/engine/random.h"
#include "sim/engine/simulation.h"

namespace pipesim::sim {
namespace {

struct Recorder final : Component {
  std::vector<std::pair<std::int64_t, std::uint32_t>> seen;  // (time, arg)
  Simulation* sim = nullptr;
  void handle(const Event& e) override { seen.emplace_back(sim->now().us, e.arg); }
};

TEST(EventQueue, PopsInTimeOrderAgainstSortedReference) {
  // Reference model: a sorted vector of (time, seq). Seeded random times with
  // many duplicates exercise the tie-breaking.
  EventQueue q;
  std::vector<std::pair<std::int64_t, std::uint64_t>> reference;
  RandomStream rng(7, "test/event-queue");
  std::uint64_t seq = 0;
  for (int round = 0; round < 2000; ++round) {
    const int pushes = static_cast<int>(rng.below(4));
    for (int i = 0; i < pushes; ++i) {
      const auto t = static_cast<std::int64_t>(rng.below(50));
      q.push(Event{Time{t}, seq, 0, 0, 0, 0});
      reference.emplace_back(t, seq);
      ++seq;
    }
    if (!reference.empty() && rng.bernoulli(0.5)) {
      const auto it = std::min_element(reference.begin(), reference.end());
      const Event e = q.pop();
      EXPECT_EQ(e.at.us, it->first);
      EXPECT_EQ(e.seq, it->second);
      reference.erase(it);
    }
  }
  EXPECT_EQ(q.size(), reference.size());
}

TEST(Simulation, EqualTimesRunInSchedulingOrder) {
  Simulation sim;
  Recorder r;
  r.sim = &sim;
  const ComponentId id = sim.add_component(&r);
  sim.schedule(Time{10}, id, 1, 3);
  sim.schedule(Time{5}, id, 1, 1);
  sim.schedule(Time{10}, id, 1, 4);
  sim.schedule(Time{5}, id, 1, 2);
  sim.run_until(Time{100});
  const std::vector<std::pair<std::int64_t, std::uint32_t>> expected = {{5, 1}, {5, 2}, {10, 3}, {10, 4}};
  EXPECT_EQ(r.seen, expected);
  EXPECT_EQ(sim.now(), Time{100});
  EXPECT_EQ(sim.events_processed(), 4u);
}

TEST(Simulation, CrashDropsOnlyEventsScheduledBeforeIt) {
  Simulation sim;
  Recorder a, b;
  a.sim = b.sim = &sim;
  const ComponentId ida = sim.add_component(&a);
  const ComponentId idb = sim.add_component(&b);
  sim.schedule(Time{10}, ida, 1, 1);
  sim.schedule(Time{10}, idb, 1, 2);
  sim.crash(ida);                     // a's pending event dies
  sim.schedule(Time{20}, ida, 1, 3);  // the new incarnation's event lives
  sim.run_until(Time{30});
  EXPECT_EQ(a.seen, (std::vector<std::pair<std::int64_t, std::uint32_t>>{{20, 3}}));
  EXPECT_EQ(b.seen, (std::vector<std::pair<std::int64_t, std::uint32_t>>{{10, 2}}));
  EXPECT_EQ(sim.events_dropped(), 1u);
}

TEST(Simulation, RunUntilStopsAtTheBoundaryInclusive) {
  Simulation sim;
  Recorder r;
  r.sim = &sim;
  const ComponentId id = sim.add_component(&r);
  sim.schedule(Time{10}, id, 1, 1);
  sim.schedule(Time{11}, id, 1, 2);
  sim.run_until(Time{10});
  EXPECT_EQ(r.seen.size(), 1u);
  EXPECT_EQ(sim.pending(), 1u);
}

TEST(Simulation, SchedulingInThePastIsAnInvariantViolation) {
  Simulation sim;
  Recorder r;
  r.sim = &sim;
  const ComponentId id = sim.add_component(&r);
  sim.run_until(Time{50});
  EXPECT_THROW(sim.schedule(Time{49}, id, 1), InvariantViolation);
}

}  // namespace
}  // namespace pipesim::sim
