// The single-threaded run loop of one simulated run. Components talk only
// through scheduled events; a crash bumps a component's incarnation so that
// every event it had pending is dropped when it comes due (the way a killed
// process loses its timers and in-flight work).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/engine/event_queue.h"
#include "sim/engine/interrupt.h"
#include "sim/engine/invariant.h"
#include "sim/engine/time.h"

namespace pipesim::sim {

using ComponentId = std::uint32_t;

class Component {
 public:
  virtual ~Component() = default;
  virtual void handle(const Event& event) = 0;
};

class Simulation {
 public:
  ComponentId add_component(Component* component) {
    components_.push_back(component);
    incarnations_.push_back(0);
    return static_cast<ComponentId>(components_.size() - 1);
  }

  [[nodiscard]] Time now() const { return now_; }

  // REQUIRES: at >= now() (time never goes backwards).
  void schedule(Time at, ComponentId target, std::uint32_t type, std::uint32_t arg = 0) {
    PIPESIM_INVARIANT(at >= now_, "event scheduled in the past");
    queue_.push(Event{at, next_seq_++, target, incarnations_[target], type, arg});
  }
  void schedule_in(Time delay, ComponentId target, std::uint32_t type, std::uint32_t arg = 0) {
    schedule(now_ + delay, target, type, arg);
  }

  // Drops every event the component has pending; the component itself resets
  // its volatile state.
  void crash(ComponentId id) { ++incarnations_[id]; }
  [[nodiscard]] std::uint32_t incarnation(ComponentId id) const { return incarnations_[id]; }

  // Runs every event with time <= end, in (time, sequence) order; leaves now() at end.
  // Throws Interrupted when the user interrupts the program (checked every 2^16 events).
  void run_until(Time end) {
    while (!queue_.empty() && queue_.top().at <= end) {
      if ((next_check_++ & 0xFFFF) == 0) throw_if_interrupted();
      const Event e = queue_.pop();
      now_ = e.at;
      if (e.incarnation != incarnations_[e.target]) {
        ++events_dropped_;
        continue;
      }
      ++events_processed_;
      components_[e.target]->handle(e);
    }
    if (end > now_) now_ = end;
  }

  [[nodiscard]] std::uint64_t events_processed() const { return events_processed_; }
  [[nodiscard]] std::uint64_t events_dropped() const { return events_dropped_; }
  [[nodiscard]] std::size_t pending() const { return queue_.size(); }

 private:
  Time now_{};
  std::uint64_t next_seq_ = 0;
  std::uint64_t events_processed_ = 0;
  std::uint64_t events_dropped_ = 0;
  std::uint64_t next_check_ = 1;
  EventQueue queue_;
  std::vector<Component*> components_;
  std::vector<std::uint32_t> incarnations_;
};

}  // namespace pipesim::sim
