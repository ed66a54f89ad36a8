// The active parts of the table's current partition and the background
// merges that reduce them, as a ClickHouse 25.3 ReplicatedMergeTree keeps
// them (the replicas run the same merges, so one count stands for all):
//  - every committed insert adds one part (an insert here is one block of
//    one table partition);
//  - StorageReplicatedMergeTree::mergeSelectingTask assigns merges. It runs
//    when an insert commits (ReplicatedMergeTreeSink::commitPart schedules
//    it) and when a merge ends (the merge's finish callback), so with inserts
//    flowing it never sleeps; it assigns while the background pool has a free
//    slot (background_pool_size x background_merges_mutations_concurrency_ratio);
//  - SimpleMergeSelector merges a range of parts of similar size, allowed
//    when the range holds at least `base` (5) times the largest part (with
//    the 5 MiB fixed cost per part, so tiny parts count as equal), and
//    prefers the longest range (score (sum + count x 5 MiB) / (count - 1.9))
//    up to max_parts_to_merge_at_once (100). Here parts are grouped by
//    generation (an insert's part is generation 0; a merge of generation g
//    makes one of g+1) and the lowest generation with `base` free parts is
//    merged first, all its free parts up to the maximum;
//  - a merge takes merge_base_time + parts x merge_time_per_part +
//    bytes / merge_bytes_per_s + its Keeper requests; its source parts stay
//    active until it ends (the new part replaces them then);
//  - MergeTreeData::delayInsertOrThrowIfNeeded, called by the sink's onStart
//    before any part is written, looks at the partition with the most active
//    parts: at parts_to_throw_insert or more the insert fails with 252
//    TOO_MANY_PARTS; at parts_to_delay_insert or more it sleeps
//    max(min_delay_to_insert_ms, max_delay_to_insert x (parts -
//    parts_to_delay_insert + 1) / (parts_to_throw_insert - parts_to_delay_insert)).
// Not modelled: the selector's age rule (after ~10 s `base` lowers, so the
// last 1-4 parts of a generation would merge eventually: they stay here),
// merges of a previous partition (a new table partition starts at zero),
// the replicated queue's entries waiting for a pool slot (a merge is only
// assigned when a slot is free), and mutations.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "sim/engine/time.h"

namespace pipesim::clickhouse {

struct MergeSettings {
  std::int64_t slots = 32;       // background_pool_size 16 x concurrency ratio 2
  std::int64_t base = 5;         // SimpleMergeSelector base
  std::int64_t max_parts = 100;  // max_parts_to_merge_at_once
  sim::Time merge_base_time = sim::Time::millis(20);
  sim::Time merge_time_per_part = sim::Time::millis(2);
  double merge_bytes_per_s = 200e6;
  std::int64_t parts_to_delay_insert = 1000;
  std::int64_t parts_to_throw_insert = 3000;
  sim::Time max_delay_to_insert = sim::Time::seconds(1);
  sim::Time min_delay_to_insert = sim::Time::millis(10);
};

class MergeTreeParts {
 public:
  explicit MergeTreeParts(const MergeSettings& settings) : settings_(settings) {}

  // What an insert starting now meets (delayInsertOrThrowIfNeeded).
  struct Gate {
    bool refuse = false;  // 252 TOO_MANY_PARTS
    sim::Time delay{};    // sleep before writing (0: none)
  };
  [[nodiscard]] Gate gate() const;

  // Merges that end by `now`, in order; each end lets the selector assign
  // more. `merge_keeper` is the Keeper time of a merge assigned now.
  void advance(sim::Time now, sim::Time merge_keeper);
  // A committed insert's part of `bytes` (after advance(now)).
  void add_part(sim::Time now, double bytes, sim::Time merge_keeper);
  // A new table partition: the count starts again (the old one is out of scope).
  void new_partition();

  [[nodiscard]] std::int64_t active() const { return active_; }
  [[nodiscard]] std::int64_t peak() const { return peak_; }
  void note_peak(std::int64_t parts) { peak_ = parts > peak_ ? parts : peak_; }
  [[nodiscard]] std::int64_t merges() const { return merges_; }
  [[nodiscard]] const MergeSettings& settings() const { return settings_; }
  [[nodiscard]] std::int64_t running() const { return static_cast<std::int64_t>(running_.size()); }
  // The same parts and merges with the clock moved from `from` to `to`
  // (running merges end as much later).
  void shift(sim::Time from, sim::Time to);

 private:
  struct Generation {
    std::int64_t free = 0;
    double free_bytes = 0;
  };
  struct Merge {
    sim::Time end;
    std::uint64_t seq = 0;
    std::size_t generation = 0;
    std::int64_t parts = 0;
    double bytes = 0;
  };
  struct Later {
    bool operator()(const Merge& a, const Merge& b) const {
      return a.end != b.end ? a.end > b.end : a.seq > b.seq;
    }
  };
  void select(sim::Time now, sim::Time merge_keeper);
  void finish(const Merge& m);

  MergeSettings settings_;
  std::vector<Generation> generations_;
  std::priority_queue<Merge, std::vector<Merge>, Later> running_;
  std::uint64_t seq_ = 0;
  std::int64_t active_ = 0;
  std::int64_t peak_ = 0;
  std::int64_t merges_ = 0;
};

// The parts of a stretch of Poisson inserts at `inserts_per_s`, `bytes`
// each, run from an empty partition until `horizon` inserts: the model the
// aggregate stretches use (ReplicatedTable::set_aggregate_rate).
struct SteadyParts {
  MergeTreeParts end_state;
  sim::Time end_time{};
  std::int64_t peak = 0;
  double merges_per_insert = 0;
};
SteadyParts steady_parts(const MergeSettings& settings, double inserts_per_s, double bytes,
                         sim::Time merge_keeper, std::int64_t horizon = 100000);
// The same, once per process for inputs on a 1% grid (rate, bytes and the
// merge's Keeper time each rounded to a power of 1.01, and computed there):
// a stretch's rate moves with Keeper's latency, and 100,000 inserts cost a
// few ms. Thread-safe.
const SteadyParts& steady_parts_cached(const MergeSettings& settings, double inserts_per_s, double bytes,
                                       sim::Time merge_keeper);

}  // namespace pipesim::clickhouse
