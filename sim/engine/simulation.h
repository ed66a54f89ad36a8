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
#include "sim/engine/trace.h"

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
    const Event e{at, next_seq_++, target, incarnations_[target], type, arg};
    if (top_pending_) {
      // The first event a handler schedules takes the handled event's slot:
      // pop and push in one pass of the heap.
      top_pending_ = false;
      queue_.replace_top(e);
    } else {
      queue_.push(e);
    }
  }
  void schedule_in(Time delay, ComponentId target, std::uint32_t type, std::uint32_t arg = 0) {
    schedule(now_ + delay, target, type, arg);
  }

  // Drops every event the component has pending; the component itself resets
  // its volatile state.
  void crash(ComponentId id) { ++incarnations_[id]; }
  [[nodiscard]] std::uint32_t incarnation(ComponentId id) const { return incarnations_[id]; }

  // Runs every event with time <= end, in (time, sequence) order; leaves now() at end.
  // Throws Interrupted when the user interrupts the program (checked every
  // 2^10 events, where a progress observer hears the time: sim/engine/interrupt.h; an
  // event can cost O(partitions), and Ctrl-C must act within a second with thousands).
  void run_until(Time end) {
    finish_top();  // in case a handler calls run_until
    while (!queue_.empty()) {
      const Event& top = queue_.top();
      if (top.at > end) break;
      if ((next_check_++ & 0x3FF) == 0) [[unlikely]] checkpoint(top.at);
      now_ = top.at;
      if (top.incarnation != incarnations_[top.target]) [[unlikely]] {
        ++events_dropped_;
        queue_.discard_top();
        continue;
      }
      ++events_processed_;
      // The handled event stays at the top of the heap until the handler
      // schedules its first event (schedule() then reuses the slot) or returns.
      const Event e = top;
      top_pending_ = true;
      try {
        components_[e.target]->handle(e);
      } catch (...) {
        finish_top();
        throw;
      }
      finish_top();
    }
    if (end > now_) now_ = end;
  }

  [[nodiscard]] std::uint64_t events_processed() const { return events_processed_; }
  [[nodiscard]] std::uint64_t events_dropped() const { return events_dropped_; }
  [[nodiscard]] std::size_t pending() const { return queue_.size() - (top_pending_ ? 1 : 0); }

  // The run's trace, or null when none was asked for (explain, trace).
  [[nodiscard]] Trace* trace() const { return trace_; }
  void set_trace(Trace* trace) { trace_ = trace; }

 private:
  // Removes the handled event from the heap if its handler scheduled nothing.
  void finish_top() {
    if (top_pending_) {
      top_pending_ = false;
      queue_.discard_top();
    }
  }

  Time now_{};
  std::uint64_t next_seq_ = 0;
  std::uint64_t events_processed_ = 0;
  std::uint64_t events_dropped_ = 0;
  // True while a handler runs and its event still occupies the top of queue_.
  bool top_pending_ = false;
  std::uint64_t next_check_ = 1;
  EventQueue queue_;
  std::vector<Component*> components_;
  std::vector<std::uint32_t> incarnations_;
  Trace* trace_ = nullptr;
};

}  // namespace pipesim::sim
