#include "models/workload/workload.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sim/engine/invariant.h"

namespace pipesim::workload {

namespace {
constexpr std::int64_t kHourUs = 3'600'000'000LL;
constexpr std::int64_t kDayUs = 24 * kHourUs;
}  // namespace

const std::array<double, 24>& Workload::production_profile() {
  // Flat nights, a slightly busier working day, an evening peak at 20:00.
  static const std::array<double, 24> profile = {
      0.58, 0.58, 0.58, 0.58, 0.58, 0.58, 0.58, 0.58,                  // 00-07
      0.66222, 0.66222, 0.66222, 0.66222, 0.66222, 0.66222, 0.66222,   // 08-14
      0.66222, 0.66222, 0.88, 1.38, 2.38, 4.32, 2.38, 1.28, 0.78};     // 15-23
  return profile;
}

std::string check_profile(const nlohmann::json& profile) {
  if (profile == "production" || profile == "constant") return "";
  if (profile.is_array() && profile.size() == 24) {
    double sum = 0;
    for (const auto& m : profile) {
      if (!m.is_number() || m.get<double>() < 0) return "24 non-negative hourly multipliers";
      sum += m.get<double>();
    }
    if (sum > 0) return "";
  }
  return "\"production\", \"constant\" or a list of 24 non-negative hourly multipliers (not all 0)";
}

Workload::Workload(const WorkloadOptions& options, int partitions, std::uint64_t seed,
                   int first_hour)
    : options_(options),
      partitions_(partitions),
      fixed_(options.arrivals == "fixed"),
      counts_(seed, "workload/arrivals"),
      instants_key_(sim::RandomStream(seed, "workload/arrival-instants").next_u64()),
      next_first_(static_cast<std::size_t>(partitions), 0),
      arrival_hint_(static_cast<std::size_t>(partitions), 0),
      memo_(static_cast<std::size_t>(partitions)) {
  if (options.profile == "constant") {
    multipliers_.fill(1.0);
  } else if (options.profile.is_array()) {
    for (std::size_t h = 0; h < 24; ++h) multipliers_[h] = options.profile[h].get<double>();
  } else {
    multipliers_ = production_profile();
  }
  // Normalised to mean 1, so records_per_day stays the day's total.
  const double mean = std::accumulate(multipliers_.begin(), multipliers_.end(), 0.0) / 24.0;
  for (auto& m : multipliers_) m /= mean;
  // Time 0 is the profile's hour first_hour: the day seen from the run's start.
  std::rotate(multipliers_.begin(), multipliers_.begin() + ((first_hour % 24) + 24) % 24,
              multipliers_.end());
  const double per_second = static_cast<double>(options_.records_per_day) / 86400.0 / partitions_;
  for (std::size_t h = 0; h < 24; ++h) {
    hour_rate_[h] = per_second * multipliers_[h];
    hour_start_[h + 1] = hour_start_[h] + hour_rate_[h] * 3600.0;
  }
  per_day_ = hour_start_[24];
}

double Workload::peak_multiplier() const {
  double peak = 0;
  for (const double m : multipliers_) peak = std::max(peak, m);
  return peak;
}

double Workload::rate_at(sim::Time t) const {
  const auto hour = static_cast<std::size_t>((t.us / kHourUs) % 24);
  return static_cast<double>(options_.records_per_day) / 86400.0 * multipliers_[hour];
}

// ------------------------------------------------------------------ fixed

double Workload::cumulative(sim::Time t) const {
  // Records per partition arrived by t: whole days, whole hours, then the
  // part of the current hour.
  const std::int64_t days = t.us / kDayUs;
  const std::int64_t rest = t.us - days * kDayUs;
  const auto h = static_cast<std::size_t>(rest / kHourUs);
  const auto in_hour = static_cast<double>(rest - static_cast<std::int64_t>(h) * kHourUs);
  return static_cast<double>(days) * per_day_ + hour_start_[h] + hour_rate_[h] * in_hour / 1e6;
}

std::int64_t Workload::fixed_time_us(std::int64_t k) const {
  // The instant at which cumulative() reaches k.
  if (per_day_ <= 0) return sim::Time::max().us;
  const auto x = static_cast<double>(k);
  const double days = std::floor(x / per_day_);
  const double rem = x - days * per_day_;
  // The hour in which the day's count passes rem: the first whose end lies
  // beyond it (an hour of rate 0 ends where it starts and is passed over).
  const auto it = std::upper_bound(hour_start_.begin() + 1, hour_start_.end() - 1, rem);
  auto h = static_cast<std::size_t>(it - (hour_start_.begin() + 1));
  while (h > 0 && hour_rate_[h] <= 0) --h;  // past the day's last record: the last busy hour
  const double t_us = days * static_cast<double>(kDayUs) + static_cast<double>(h) * kHourUs +
                      (rem - hour_start_[h]) / hour_rate_[h] * 1e6;
  // t_us >= 0: rounding half up is llround's rounding here.
  return static_cast<std::int64_t>(t_us + 0.5);
}

std::int64_t Workload::fixed_count_before(sim::Time t) const {
  if (t.us <= 0) return 0;
  auto k = static_cast<std::int64_t>(std::ceil(cumulative(t) - 1e-9));
  if (k < 0) k = 0;
  // The instants are rounded: settle the boundary on them, not on the rates.
  while (fixed_time_us(k) < t.us) ++k;
  while (k > 0 && fixed_time_us(k - 1) >= t.us) --k;
  return k;
}

// ----------------------------------------------------------------- blocks

sim::Time Workload::block_end(std::int64_t b) const {
  return std::min(kBlock * (b + 1), stop_);
}

std::int64_t Workload::last_block() const {
  if (stop_ == sim::Time::max()) return std::numeric_limits<std::int64_t>::max();
  return stop_.us <= 0 ? -1 : (stop_.us - 1) / kBlock.us;
}

void Workload::generate_through(std::int64_t b) {
  b = std::min(b, last_block());
  while (base_ + static_cast<std::int64_t>(rows_.size()) <= b) {
    const std::int64_t index = base_ + static_cast<std::int64_t>(rows_.size());
    const sim::Time start = block_start(index);
    const sim::Time end = block_end(index);
    std::vector<Block> row(static_cast<std::size_t>(partitions_));
    const double mean =
        partition_rate_at(start) * static_cast<double>((end - start).us) / 1e6;
    for (int p = 0; p < partitions_; ++p) {
      Block& k = row[static_cast<std::size_t>(p)];
      k.first = next_first_[static_cast<std::size_t>(p)];
      if (fixed_) {
        k.count = fixed_count_before(end) - k.first;
      } else {
        k.count = counts_.poisson(mean);
      }
      next_first_[static_cast<std::size_t>(p)] += k.count;
    }
    rows_.push_back(std::move(row));
  }
}

Workload::Block& Workload::block(std::int64_t b, int partition) {
  generate_through(b);
  PIPESIM_INVARIANT(b >= base_, "arrivals asked about a block already forgotten");
  return rows_[static_cast<std::size_t>(b - base_)][static_cast<std::size_t>(partition)];
}

std::uint64_t Workload::block_key(std::int64_t b, int partition) const {
  std::uint64_t key = instants_key_ ^ (static_cast<std::uint64_t>(partition) * 0x9E3779B97F4A7C15ULL);
  return key ^ (static_cast<std::uint64_t>(b) * 0xD1B54A32D192ED03ULL);
}

void Workload::draw_last(std::int64_t b, int partition, Block& k) {
  if (k.last >= 0 || k.count == 0) return;
  PIPESIM_INVARIANT(!fixed_, "\"fixed\" arrivals are a closed form: no instants are drawn");
  // The largest of `count` uniforms on the block is U^(1/count): drawn on
  // its own, so that the instant of a block's last record (what a log
  // segment's newest timestamp needs) costs one draw, not the block's.
  sim::RandomStream stream = sim::RandomStream::from_key(block_key(b, partition) ^ 0x5851F42D4C957F2DULL);
  const double frac = std::pow(stream.uniform01(), 1.0 / static_cast<double>(k.count));
  const sim::Time start = block_start(b);
  const std::int64_t length = (block_end(b) - start).us;
  k.last = start.us + std::min(length - 1, static_cast<std::int64_t>(frac * static_cast<double>(length)));
}

void Workload::draw_instants(std::int64_t b, int partition, Block& k) {
  if (k.drawn) return;
  draw_last(b, partition, k);
  k.drawn = true;
  k.times.resize(static_cast<std::size_t>(k.count));
  if (k.count == 0) return;
  // Given the largest, the other count - 1 instants are the order statistics
  // of as many uniforms on [start, last]: normalised partial sums of count
  // exponential spacings.
  sim::RandomStream stream = sim::RandomStream::from_key(block_key(b, partition));
  const auto others = static_cast<std::size_t>(k.count - 1);
  partial_.resize(others);
  double sum = 0;
  for (std::size_t i = 0; i < others; ++i) {
    sum += stream.exponential(1.0);
    partial_[i] = sum;
  }
  sum += stream.exponential(1.0);
  const std::int64_t start = block_start(b).us;
  const auto span = static_cast<double>(k.last - start);
  for (std::size_t i = 0; i < others; ++i) {
    k.times[i] = start + static_cast<std::int64_t>(partial_[i] / sum * span);
  }
  k.times[others] = k.last;
}

std::int64_t Workload::count_before(int partition, sim::Time t) {
  t = std::min(t, stop_);
  if (t.us <= 0) return 0;
  // "fixed" instants are a closed form: nothing to draw or keep.
  if (fixed_) return fixed_count_before(t);
  const std::int64_t b = t.us / kBlock.us;
  if (b > last_block()) {
    generate_through(last_block());
    return next_first_[static_cast<std::size_t>(partition)];
  }
  Block& k = block(b, partition);
  if (t == block_start(b) || k.count == 0) return k.first;
  draw_last(b, partition, k);
  if (t.us > k.last) return k.first + k.count;
  draw_instants(b, partition, k);
  const auto it = std::lower_bound(k.times.begin(), k.times.end(), t.us);
  return k.first + (it - k.times.begin());
}

sim::Time Workload::arrival_time(int partition, std::int64_t k) {
  if (fixed_) {
    if (stop_ != sim::Time::max() && k >= fixed_count_before(stop_)) return sim::Time::max();
    return sim::Time{fixed_time_us(k)};
  }
  const auto p = static_cast<std::size_t>(partition);
  // The producer asks about each partition's next record on every wake-up (next_wake):
  // with thousands of partitions most of them ask again about the same record, and a
  // record's instant never changes once drawn.
  Memo& memo = memo_[p];
  if (memo.k == k) return memo.at;
  memo.k = k;
  memo.at = locate(p, k);
  return memo.at;
}

sim::Time Workload::locate(std::size_t p, std::int64_t k) {
  const int partition = static_cast<int>(p);
  // Draw blocks until one holds record k, or the stop is reached.
  while (next_first_[p] <= k) {
    const std::int64_t next = base_ + static_cast<std::int64_t>(rows_.size());
    if (next > last_block()) return sim::Time::max();
    generate_through(next);
  }
  // The block holding k: the producer asks about increasing indices, so the
  // block of the last answer (or the next one) usually holds it; otherwise a
  // binary search on the blocks' first indices.
  const auto holds = [&](std::int64_t b) {
    if (b < base_ || b >= base_ + static_cast<std::int64_t>(rows_.size())) return false;
    const Block& blk = rows_[static_cast<std::size_t>(b - base_)][p];
    return blk.first <= k && k < blk.first + blk.count;
  };
  std::size_t lo = 0;
  if (holds(arrival_hint_[p])) {
    lo = static_cast<std::size_t>(arrival_hint_[p] - base_);
  } else if (holds(arrival_hint_[p] + 1)) {
    lo = static_cast<std::size_t>(arrival_hint_[p] + 1 - base_);
  } else {
    std::size_t hi = rows_.size();
    while (hi - lo > 1) {
      const std::size_t mid = (lo + hi) / 2;
      if (rows_[mid][p].first <= k) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
  }
  arrival_hint_[p] = base_ + static_cast<std::int64_t>(lo);
  Block& blk = rows_[lo][p];
  PIPESIM_INVARIANT(blk.first <= k && k < blk.first + blk.count,
                    "arrivals asked about a record of a forgotten block");
  if (!blk.drawn && k == blk.first + blk.count - 1) {
    // A block's last record: its instant is drawn on its own (draw_last).
    draw_last(base_ + static_cast<std::int64_t>(lo), partition, blk);
    return sim::Time{blk.last};
  }
  draw_instants(base_ + static_cast<std::int64_t>(lo), partition, blk);
  return sim::Time{blk.times[static_cast<std::size_t>(k - blk.first)]};
}

double Workload::expected_count_before(int partition, sim::Time t) {
  t = std::min(t, stop_);
  if (t.us <= 0) return 0;
  const std::int64_t b = t.us / kBlock.us;
  if (b > last_block()) {
    generate_through(last_block());
    return static_cast<double>(next_first_[static_cast<std::size_t>(partition)]);
  }
  Block& k = block(b, partition);
  if (k.drawn || fixed_) return static_cast<double>(count_before(partition, t));
  const sim::Time start = block_start(b);
  const double share = static_cast<double>((t - start).us) / static_cast<double>((block_end(b) - start).us);
  return static_cast<double>(k.first) + static_cast<double>(k.count) * share;
}

double Workload::expected_records(sim::Time from, sim::Time to) const {
  to = std::min(to, stop_);
  if (to <= from) return 0;
  return (cumulative(to) - cumulative(from)) * partitions_;
}

std::int64_t Workload::forgotten(int partition) const {
  if (fixed_) return 0;  // a closed form forgets nothing
  const auto p = static_cast<std::size_t>(partition);
  return rows_.empty() ? next_first_[p] : rows_.front()[p].first;
}

sim::Time Workload::remembered_from() const { return block_start(base_); }

void Workload::forget_before(sim::Time t) {
  while (!rows_.empty() && block_end(base_) <= t) {
    rows_.pop_front();
    ++base_;
  }
}

}  // namespace pipesim::workload
