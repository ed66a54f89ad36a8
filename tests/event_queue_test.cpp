// The event queue and run loop: order by (time, sequence), FIFO among equal
// times, incarnation-based dropping of a crashed component's events.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sim/engine/event_queue.h"
#include "sim/engine/random.h"
#include "sim/engine/simulation.h"
#include "tests/under_sanitizer.h"

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

// replace_top and discard_top against the same reference: replace_top(e)
// must leave the queue as pop() then push(e) would, including when the new
// event is the earliest, the latest, or ties the root's time; payloads must
// follow their keys (slots are reused).
TEST(EventQueue, ReplaceTopAndDiscardTopAgainstSortedReference) {
  EventQueue q;
  std::vector<std::pair<std::pair<std::int64_t, std::uint64_t>, std::uint32_t>>
      reference;  // ((time, seq), arg)
  RandomStream rng(11, "test/event-queue/replace");
  std::uint64_t seq = 0;
  std::int64_t now = 0;
  const auto take_min = [&] {
    const auto it = std::min_element(reference.begin(), reference.end());
    const auto expected = *it;
    reference.erase(it);
    return expected;
  };
  for (int round = 0; round < 20000; ++round) {
    const std::uint64_t op = rng.below(4);
    const auto t = now + static_cast<std::int64_t>(rng.below(40));
    const auto arg = static_cast<std::uint32_t>(rng.below(1u << 20));
    if (reference.empty() || op == 0) {
      q.push(Event{Time{t}, seq, 0, 0, 0, arg});
      reference.push_back({{t, seq++}, arg});
    } else if (op == 1) {  // replace_top
      const auto expected = take_min();
      ASSERT_EQ(q.top().at.us, expected.first.first);
      ASSERT_EQ(q.top().seq, expected.first.second);
      ASSERT_EQ(q.top().arg, expected.second);
      now = expected.first.first;
      const std::int64_t at = now + static_cast<std::int64_t>(rng.below(3));  // often ties
      q.replace_top(Event{Time{at}, seq, 0, 0, 0, arg});
      reference.push_back({{at, seq++}, arg});
    } else if (op == 2) {  // discard_top
      const auto expected = take_min();
      ASSERT_EQ(q.top().seq, expected.first.second);
      now = expected.first.first;
      q.discard_top();
    } else {
      const auto expected = take_min();
      const Event e = q.pop();
      ASSERT_EQ(e.at.us, expected.first.first);
      ASSERT_EQ(e.seq, expected.first.second);
      ASSERT_EQ(e.arg, expected.second);
      now = e.at.us;
    }
    ASSERT_EQ(q.size(), reference.size());
  }
  // Drain: the rest comes out in (time, seq) order with its payload.
  std::sort(reference.begin(), reference.end());
  for (const auto& expected : reference) {
    const Event e = q.pop();
    ASSERT_EQ(e.seq, expected.first.second);
    ASSERT_EQ(e.arg, expected.second);
  }
  EXPECT_TRUE(q.empty());
}

// replace_top with the root's own Event (a reference into the slab) works.
TEST(EventQueue, ReplaceTopWithItsOwnTop) {
  EventQueue q;
  q.push(Event{Time{5}, 0, 0, 0, 0, 1});
  q.push(Event{Time{7}, 1, 0, 0, 0, 2});
  Event again = q.top();
  again.seq = 2;
  again.at = Time{9};
  q.replace_top(again);
  EXPECT_EQ(q.pop().arg, 2u);
  const Event e = q.pop();
  EXPECT_EQ(e.arg, 1u);
  EXPECT_EQ(e.at.us, 9);
  EXPECT_TRUE(q.empty());
}

// The limits of the packed key: sequence numbers below 2^40 are accepted
// and still order correctly; 2^40 is refused rather than silently wrapping
// into the slot bits.
TEST(EventQueue, SequenceNumbersUpToTheLimitOrderAndBeyondAreRefused) {
  EventQueue q;
  const std::uint64_t last = EventQueue::kSeqLimit - 1;
  q.push(Event{Time{3}, last, 0, 0, 0, 1});
  q.push(Event{Time{3}, last - 1, 0, 0, 0, 2});
  EXPECT_EQ(q.pop().arg, 2u);
  EXPECT_EQ(q.pop().arg, 1u);
  EXPECT_THROW(q.push(Event{Time{3}, EventQueue::kSeqLimit, 0, 0, 0, 0}), InvariantViolation);
  q.push(Event{Time{1}, 0, 0, 0, 0, 0});
  EXPECT_THROW(q.replace_top(Event{Time{3}, EventQueue::kSeqLimit, 0, 0, 0, 0}),
               InvariantViolation);
}

// 2^24 pending events take ~800 MB here: not under the sanitizers, whose
// shadow memory would multiply that.
TEST(EventQueue, MoreThanTheSlotLimitPendingIsRefused) {
  if (pipesim::testing_support::kUnderSanitizer) GTEST_SKIP() << "2^24 events under AddressSanitizer";
  EventQueue q;
  q.reserve(EventQueue::kMaxPending);
  for (std::uint64_t i = 0; i < EventQueue::kMaxPending; ++i) q.push(Event{Time{0}, i, 0, 0, 0, 0});
  EXPECT_EQ(q.size(), EventQueue::kMaxPending);
  EXPECT_THROW(q.push(Event{Time{0}, EventQueue::kMaxPending, 0, 0, 0, 0}), InvariantViolation);
  // A slot freed by a pop is reused.
  EXPECT_EQ(q.pop().seq, 0u);
  q.push(Event{Time{0}, EventQueue::kMaxPending, 0, 0, 0, 7});
  EXPECT_EQ(q.size(), EventQueue::kMaxPending);
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
  const std::vector<std::pair<std::int64_t, std::uint32_t>> expected = {
      {5, 1}, {5, 2}, {10, 3}, {10, 4}};
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
