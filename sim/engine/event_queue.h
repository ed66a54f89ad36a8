// The pending-event set: a 4-ary min-heap keyed by (time, sequence number).
// The sequence number is taken when an event is scheduled, so events at equal
// time run first-in-first-out, never by address (FoundationDB, ns-3).
//
// Invariants: every parent's key <= its children's keys; sequence numbers are
// unique, so the order of any two events is total and machine-independent.
//
// Layout, for speed (bench/engine_bench.cpp, bench/RESULTS.md):
// - The heap holds 16-byte keys {time, seq << 24 | slot}; the 32-byte Events
//   live in a slab at `slot` (freed slots are reused, last freed first). The
//   four children of a node are one 64-byte cache line (the key array is
//   line-aligned and starts 3 keys in), so a level costs one line, not two.
//   Comparing tags compares sequence numbers (the slot bits are below them),
//   so the order is exactly (time, seq). Limits, checked: seq < 2^40 (about
//   10^12 events in one run) and at most 2^24 (16.7 M) pending events.
// - Keys compare as one 128-bit number (no branch) and the smallest of four
//   children is picked with masks, without data-dependent jumps.
// - Removing the root walks the hole down to a leaf along the smallest
//   children, then sifts the incoming key up from there (an incoming event is
//   usually late, so it belongs near the bottom); each level prefetches the
//   next level's candidates, and the new root's Event is prefetched as soon as
//   it is known, so the run loop finds it in cache.
// - replace_top() fuses "pop the root, push an event" into that one walk and
//   reuses the root's slot: what the run loop does when a handler schedules
//   its successor.
// The heap's shape may differ from a plain heap's, but the order in which
// events come out cannot: keys are unique and totally ordered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "sim/engine/invariant.h"
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

// Storage aligned to a cache line.
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
  static constexpr int kSlotBits = 24;
  static constexpr std::uint64_t kSeqLimit = std::uint64_t{1} << (64 - kSlotBits);
  static constexpr std::size_t kMaxPending = std::size_t{1} << kSlotBits;

  EventQueue() : keys_(kPad) {}

  [[nodiscard]] bool empty() const { return keys_.size() <= kPad; }
  [[nodiscard]] std::size_t size() const { return empty() ? 0 : keys_.size() - kPad; }
  // REQUIRES: !empty(). Valid until the queue is next changed.
  [[nodiscard]] const Event& top() const { return events_[slot_of(keys_[kPad])]; }
  void reserve(std::size_t n) {
    keys_.reserve(n + kPad);
    events_.reserve(n);
  }

  // Throws InvariantViolation if e.seq >= 2^40 or 2^24 events are pending.
  void push(const Event& e) {
    const Event copy = e;  // `e` may live in the slab, which can move
    check_seq(copy);
    if (keys_.size() < kPad) [[unlikely]] keys_.resize(kPad);  // a moved-from queue
    const std::uint32_t slot = store(copy);
    keys_.push_back(Key{});
    sift_up(size() - 1, key_of(copy, slot));
  }

  // REQUIRES: !empty().
  Event pop() {
    const Event result = top();
    discard_top();
    return result;
  }

  // Removes the earliest event without returning it. REQUIRES: !empty().
  void discard_top() {
    free_.push_back(slot_of(keys_[kPad]));
    const Key last = keys_.back();
    keys_.pop_back();
    if (!empty()) walk_down(last);
  }

  // Removes the earliest event and inserts `e`: the same as pop() then
  // push(e), in one pass. REQUIRES: !empty().
  void replace_top(const Event& e) {
    const Event copy = e;  // `e` may be top() itself
    check_seq(copy);
    const std::uint32_t slot = slot_of(keys_[kPad]);
    events_[slot] = copy;
    walk_down(key_of(copy, slot));
  }

 private:
  struct Key {
    std::int64_t time;
    std::uint64_t tag;  // seq << kSlotBits | slot
  };
  static_assert(sizeof(Key) == 16);

  static constexpr std::size_t kArity = 4;
  // Key index 0 is keys_[kPad]: the children of i, keys 4i+1..4i+4, are then
  // keys_[4i+4..4i+7], one 64-byte line.
  static constexpr std::size_t kPad = 3;

  static std::uint32_t slot_of(const Key& k) {
    return static_cast<std::uint32_t>(k.tag & (kMaxPending - 1));
  }
  static Key key_of(const Event& e, std::uint32_t slot) {
    return Key{e.at.us, e.seq << kSlotBits | slot};
  }
  static void check_seq(const Event& e) {
    PIPESIM_INVARIANT(e.seq < kSeqLimit, "event sequence number beyond 2^40");
  }

  // Puts `e` in a free slot (the last freed, which is likely in cache).
  std::uint32_t store(const Event& e) {
    if (!free_.empty()) {
      const std::uint32_t slot = free_.back();
      free_.pop_back();
      events_[slot] = e;
      return slot;
    }
    PIPESIM_INVARIANT(events_.size() < kMaxPending, "more than 2^24 pending events");
    events_.push_back(e);
    return static_cast<std::uint32_t>(events_.size() - 1);
  }

  Key* heap() { return keys_.data() + kPad; }

  // (time, tag) as one signed 128-bit number: one cmp/sbb pair, no branch.
  static __int128 rank(const Key& k) {
    return static_cast<__int128>(k.time) << 64 | static_cast<__int128>(k.tag);
  }
  static bool before(const Key& a, const Key& b) { return rank(a) < rank(b); }

  // Index (0..3) of the smallest of c[0..3], without data-dependent branches
  // (masks rather than ?:, which g++ 12 turns back into jumps).
  static std::size_t smallest_of_4(const Key* c) {
    const auto a = static_cast<std::size_t>(before(c[1], c[0]));      // 0 or 1
    const auto b = 2 + static_cast<std::size_t>(before(c[3], c[2]));  // 2 or 3
    const std::size_t take_b = 0 - static_cast<std::size_t>(before(c[b], c[a]));
    return a ^ ((a ^ b) & take_b);
  }

  // Removes the root's key and inserts `incoming`.
  void walk_down(const Key incoming) {
    Key* const h = heap();
    const std::size_t n = size();
    std::size_t hole = 0;
    // Walk the hole down along the smallest children to a leaf.
    for (;;) {
      const std::size_t first = hole * kArity + 1;
      if (first + kArity <= n) {
        // The next level's candidates (the 16 children of this block, four
        // lines) start loading while this block is compared.
        const std::size_t grandchildren = first * kArity + 1;
        if (grandchildren < n) {
          const char* p = reinterpret_cast<const char*>(h + grandchildren);
          for (int line = 0; line < 4; ++line) __builtin_prefetch(p + 64 * line);
        }
        const std::size_t best = first + smallest_of_4(h + first);
        h[hole] = h[best];
        if (hole == 0) __builtin_prefetch(&events_[slot_of(h[0])]);  // the next top()
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

  // Stores `k` at the hole `i` or above it.
  void sift_up(std::size_t i, const Key k) {
    Key* const h = heap();
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!before(k, h[parent])) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = k;
  }

  std::vector<Key, detail::CacheLineAllocator<Key>> keys_;  // kPad padding keys, then the heap
  std::vector<Event> events_;                               // the slab
  std::vector<std::uint32_t> free_;                         // free slots of events_
};

}  // namespace pipesim::sim
