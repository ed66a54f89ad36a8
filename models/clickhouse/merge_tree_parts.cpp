#include "models/clickhouse/merge_tree_parts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <tuple>

#include "sim/engine/random.h"

namespace pipesim::clickhouse {

MergeTreeParts::Gate MergeTreeParts::gate() const {
  Gate g;
  if (settings_.parts_to_throw_insert > 0 && active_ >= settings_.parts_to_throw_insert) {
    g.refuse = true;
    return g;
  }
  if (settings_.parts_to_delay_insert <= 0 || active_ < settings_.parts_to_delay_insert) return g;
  // Linear in the parts over the threshold, as 25.3 computes it (the older
  // exponential form is gone); at least min_delay_to_insert_ms.
  const std::int64_t over = active_ - settings_.parts_to_delay_insert + 1;
  const std::int64_t allowed =
      std::max<std::int64_t>(1, settings_.parts_to_throw_insert - settings_.parts_to_delay_insert);
  const sim::Time linear{settings_.max_delay_to_insert.us * over / allowed};
  g.delay = std::max(settings_.min_delay_to_insert, linear);
  return g;
}

void MergeTreeParts::advance(sim::Time now, sim::Time merge_keeper) {
  while (!running_.empty() && running_.top().end <= now) {
    const Merge m = running_.top();
    running_.pop();
    finish(m);
    select(m.end, merge_keeper);
  }
}

void MergeTreeParts::finish(const Merge& m) {
  // The merged part replaces its sources.
  active_ -= m.parts - 1;
  const std::size_t next = m.generation + 1;
  if (generations_.size() <= next) generations_.resize(next + 1);
  generations_[next].free += 1;
  generations_[next].free_bytes += m.bytes;
}

void MergeTreeParts::add_part(sim::Time now, double bytes, sim::Time merge_keeper) {
  advance(now, merge_keeper);
  if (generations_.empty()) generations_.resize(1);
  generations_[0].free += 1;
  generations_[0].free_bytes += bytes;
  ++active_;
  peak_ = std::max(peak_, active_);
  select(now, merge_keeper);
}

void MergeTreeParts::select(sim::Time now, sim::Time merge_keeper) {
  const std::int64_t base = std::max<std::int64_t>(2, settings_.base);
  while (static_cast<std::int64_t>(running_.size()) < settings_.slots) {
    std::size_t g = 0;
    while (g < generations_.size() && generations_[g].free < base) ++g;
    if (g == generations_.size()) return;
    Generation& gen = generations_[g];
    const std::int64_t parts = std::min(gen.free, std::max(base, settings_.max_parts));
    // The merge takes an even share of the generation's free bytes.
    const double bytes = gen.free_bytes * static_cast<double>(parts) / static_cast<double>(gen.free);
    gen.free -= parts;
    gen.free_bytes = gen.free > 0 ? gen.free_bytes - bytes : 0.0;
    const double seconds = static_cast<double>(settings_.merge_base_time.us + settings_.merge_time_per_part.us * parts) / 1e6 +
                           (settings_.merge_bytes_per_s > 0 ? bytes / settings_.merge_bytes_per_s : 0.0);
    const sim::Time took = sim::Time{static_cast<std::int64_t>(std::llround(seconds * 1e6))} + merge_keeper;
    running_.push(Merge{now + std::max(took, sim::Time{1}), seq_++, g, parts, bytes});
    ++merges_;
  }
}

void MergeTreeParts::new_partition() {
  generations_.clear();
  running_ = {};
  active_ = 0;
}

void MergeTreeParts::shift(sim::Time from, sim::Time to) {
  std::vector<Merge> merges;
  while (!running_.empty()) {
    Merge m = running_.top();
    running_.pop();
    m.end = m.end - from + to;
    merges.push_back(m);
  }
  for (const Merge& m : merges) running_.push(m);
}

SteadyParts steady_parts(const MergeSettings& settings, double inserts_per_s, double bytes,
                         sim::Time merge_keeper, std::int64_t horizon) {
  SteadyParts s{MergeTreeParts(settings)};
  if (inserts_per_s <= 0) return s;
  // The sink's tasks insert independently of each other: Poisson arrivals,
  // from a fixed internal seed (the same rate gives the same state).
  sim::RandomStream gaps(0x5eed, "clickhouse/steady-parts");
  double t_us = 0;
  for (std::int64_t i = 0; i < horizon; ++i) {
    if (i > 0) t_us += gaps.exponential(1e6 / inserts_per_s);
    const sim::Time at{static_cast<std::int64_t>(std::llround(t_us))};
    s.end_state.add_part(at, bytes, merge_keeper);
    s.end_time = at;
  }
  s.peak = s.end_state.peak();
  s.merges_per_insert = horizon > 0 ? static_cast<double>(s.end_state.merges()) / static_cast<double>(horizon) : 0.0;
  return s;
}

namespace {
// x on a grid of powers of 1.01 (0 stays 0).
std::int64_t grid_step(double x) { return x > 0 ? std::llround(std::log(x) / std::log(1.01)) : INT64_MIN; }
double grid_value(std::int64_t k) { return k == INT64_MIN ? 0.0 : std::pow(1.01, static_cast<double>(k)); }
}  // namespace

const SteadyParts& steady_parts_cached(const MergeSettings& settings, double inserts_per_s, double bytes,
                                       sim::Time merge_keeper) {
  // Everything steady_parts reads: the grid steps and the merge settings.
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                         std::int64_t, std::int64_t, double>;
  const Key key{grid_step(inserts_per_s),
                grid_step(bytes),
                grid_step(static_cast<double>(merge_keeper.us)),
                settings.slots,
                settings.base,
                settings.max_parts,
                settings.merge_base_time.us,
                settings.merge_time_per_part.us,
                settings.merge_bytes_per_s};
  static std::mutex mutex;
  static std::map<Key, SteadyParts> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it == cache.end()) {
    const sim::Time keeper{std::llround(grid_value(std::get<2>(key)))};
    it = cache.emplace(key, steady_parts(settings, grid_value(std::get<0>(key)), grid_value(std::get<1>(key)), keeper))
             .first;
  }
  return it->second;
}

}  // namespace pipesim::clickhouse
