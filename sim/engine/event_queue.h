// The pending-event set: a 4-ary min-heap keyed by (time, sequence number).
// The sequence number is taken when an event is scheduled, so events at equal
// time run first-in-first-out, never by address (FoundationDB, ns-3).
//
// Invariants: every parent's key <= its children's keys; sequence numbers are
// unique, so the order of any two events is total and machine-independent.
//
// Speed (bench/engine_bench.cpp, bench/RESULTS.md): the four children of a
// node sit in one 128-byte, cache-line-aligned block (the storage is 64-byte
// aligned and slot 0 is padding); the smallest child is picked with a
// branch-free (time, seq) comparison; removing the root walks the hole down to
// a leaf along the smallest children and sifts the incoming event up from
// there (the incoming event is usually late, so it belongs near the bottom);
// deep in a large heap the next level is prefetched; and replace_top() fuses
// "pop the root, push an event" into that one walk, which is what the run
// loop does when a handler schedules its successor.
// The heap's shape may differ from a plain top-down heap's, but the order in
// which events come out cannot: keys are unique and totally ordered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
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

namespace detail {

// Storage aligned to a cache line, so that each 4-child block of the heap
// (128 bytes) spans exactly two lines.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, kAlign); }
  friend bool operator==(const CacheLineAllocator&, const CacheLineAllocator&) { return true; }
};

}  // namespace detail

class EventQueue {
 public:
  // slots_[0] is padding, the root is slots_[1]. (A moved-from queue has no
  // padding slot; it is empty, and push() restores the slot.)
  EventQueue() : slots_(1) {}

  [[nodiscard]] bool empty() const { return slots_.size() <= 1; }
  [[nodiscard]] std::size_t size() const { return slots_.empty() ? 0 : slots_.size() - 1; }
  [[nodiscard]] const Event& top() const { return slots_[1]; }
  void reserve(std::size_t n) { slots_.reserve(n + 1); }

  void push(const Event& e) {
    const Event copy = e;  // `e` may live in the heap, which push_back can move
    if (slots_.empty()) [[unlikely]] slots_.emplace_back();
    slots_.push_back(copy);
    sift_up(size() - 1, copy);
  }

  // REQUIRES: !empty().
  Event pop() {
    const Event result = top();
    discard_top();
    return result;
  }

  // Removes the earliest event without returning it. REQUIRES: !empty().
  void discard_top() {
    const Event last = slots_.back();
    slots_.pop_back();
    if (!empty()) replace_top(last);
  }

  // Removes the earliest event and inserts `e`: the same as pop() then
  // push(e), in one pass. REQUIRES: !empty().
  void replace_top(const Event& e) {
    const Event incoming = e;  // `e` may live in the heap, which the walk overwrites
    Event* const h = heap();
    const std::size_t n = size();
    std::size_t hole = 0;
    // Walk the hole down along the smallest children to a leaf.
    for (;;) {
      const std::size_t first = hole * kArity + 1;
      if (first + kArity <= n) {
        prefetch_grandchildren(h, first, n);
        const std::size_t best = first + smallest_of_4(h + first);
        h[hole] = h[best];
        hole = best;
        continue;
      }
      if (first < n) {  // a partial last block: its nodes are leaves
        std::size_t best = first;
        for (std::size_t c = first + 1; c < n; ++c) {
          if (before(h[c], h[best])) best = c;
        }
        h[hole] = h[best];
        hole = best;
      }
      break;
    }
    sift_up(hole, incoming);
  }

 private:
  static constexpr std::size_t kArity = 4;

  // The heap proper: heap()[0] is the root, the children of i are
  // heap()[4i+1 .. 4i+4] (a 64-byte-aligned block, thanks to the padding slot).
  Event* heap() { return slots_.data() + 1; }

  // (time, seq) as one signed 128-bit number, time * 2^64 + seq: comparing
  // two is one cmp/sbb pair, no branch.
  static __int128 key(const Event& e) {
    return static_cast<__int128>(e.at.us) << 64 | static_cast<__int128>(e.seq);
  }
  static bool before(const Event& a, const Event& b) { return key(a) < key(b); }

  // Below the first kPrefetchFrom nodes (which stay in L1/L2), a level's loads
  // would wait on memory one after the other: start loading the 16 children
  // of this block (the next level's candidates, 512 contiguous bytes) while
  // this block is compared.
  static constexpr std::size_t kPrefetchFrom = 1024;
  static void prefetch_grandchildren(const Event* h, std::size_t first, std::size_t n) {
    const std::size_t g = first * kArity + 1;
    if (g >= kPrefetchFrom && g < n) {
      const char* p = reinterpret_cast<const char*>(h + g);
      for (int line = 0; line < 8; ++line) __builtin_prefetch(p + 64 * line);
    }
  }

  // Index (0..3) of the smallest of c[0..3], without data-dependent branches
  // (masks rather than ?:, which g++ 12 turns back into jumps).
  static std::size_t smallest_of_4(const Event* c) {
    const auto a = static_cast<std::size_t>(before(c[1], c[0]));      // 0 or 1
    const auto b = 2 + static_cast<std::size_t>(before(c[3], c[2]));  // 2 or 3
    const std::size_t take_b = 0 - static_cast<std::size_t>(before(c[b], c[a]));
    return a ^ ((a ^ b) & take_b);
  }

  // Stores `e` at the hole `i` or above it.
  void sift_up(std::size_t i, const Event& e) {
    Event* const h = heap();
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!before(e, h[parent])) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = e;
  }

  std::vector<Event, detail::CacheLineAllocator<Event>> slots_;
};

}  // namespace pipesim::sim
