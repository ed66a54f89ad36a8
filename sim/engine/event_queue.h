// The pending-event set: a 4-ary min-heap keyed by (time, sequence number).
// The sequence number is taken when an event is scheduled, so events at equal
// time run first-in-first-out, never by address (FoundationDB, ns-3).
//
// Invariants: every parent's key <= its children's keys; sequence numbers are
// unique, so the order of any two events is total and machine-independent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/engine/time.h"

namespace pipesim::sim {

struct Event {
  Time at;
  std::uint64_t seq = 0;
  std::uint32_t target = 0;       // component id
  std::uint32_t incarnation = 0;  // the target's incarnation when scheduled
  std::uint32_t type = 0;         // component-defined event type
  std::uint32_t arg = 0;          // component-defined argument
};
static_assert(sizeof(Event) == 32);

inline bool earlier(const Event& a, const Event& b) {
  return a.at.us < b.at.us || (a.at.us == b.at.us && a.seq < b.seq);
}

class EventQueue {
 public:
  [[nodiscard]] bool empty() const { return heap_.empty(); }
  [[nodiscard]] std::size_t size() const { return heap_.size(); }
  [[nodiscard]] const Event& top() const { return heap_.front(); }
  void reserve(std::size_t n) { heap_.reserve(n); }

  void push(const Event& e) {
    heap_.push_back(e);
    sift_up(heap_.size() - 1);
  }

  // REQUIRES: !empty().
  Event pop() {
    Event result = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down_from_root(last);
    return result;
  }

 private:
  static constexpr std::size_t kArity = 4;

  void sift_up(std::size_t i) {
    const Event e = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!earlier(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  // Moves the hole at the root down to where `e` belongs (Floyd-style, one
  // comparison chain per level), then stores `e`.
  void sift_down_from_root(const Event& e) {
    const std::size_t n = heap_.size();
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = i * kArity + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = first + kArity < n ? first + kArity : n;
      for (std::size_t c = first + 1; c < end; ++c) {
        if (earlier(heap_[c], heap_[best])) best = c;
      }
      if (!earlier(heap_[best], e)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = e;
  }

  std::vector<Event> heap_;
};

}  // namespace pipesim::sim
