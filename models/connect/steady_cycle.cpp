#include "models/connect/steady_cycle.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <tuple>

#include "sim/engine/random.h"

namespace pipesim::connect {

double inverse_normal(double p) {
  // P. J. Acklam's algorithm: a rational approximation in three regions.
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01,  -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  constexpr double low = 0.02425;
  if (p < low) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - low) {
    const double q = std::sqrt(-2 * std::log(1 - p));
    return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double q = p - 0.5;
  const double r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

namespace {

// The chain's own fixed seed: the steady state is a property of the config.
constexpr std::uint64_t kChainSeed = 0x5EEDC7C1E5ULL;

// Poisson arrivals at `rate` on each of the task's partitions, visible as
// they arrive (a constant visibility delay shifts every record alike and
// does not change the chain). Drawn lazily and exactly: the count up to a
// later instant is a Poisson draw; the instant of the next record, when a
// waiting fetch asks for it, an exponential one (memoryless). The fetcher
// only asks about instants at or after the last one it asked about, or at a
// next record's instant it asked for.
class PoissonView final : public LogView {
 public:
  PoissonView(const std::vector<int>& leaders, double rate, bool evenly_spaced)
      : leaders_(leaders), rate_(rate), evenly_spaced_(evenly_spaced), parts_(leaders.size()) {
    for (std::size_t p = 0; p < leaders.size(); ++p) {
      streams_.push_back(sim::RandomStream::from_key(kChainSeed + 0x9E3779B97F4A7C15ULL * (p + 1)));
    }
  }
  void set_now(sim::Time t) { now_ = t; }

  [[nodiscard]] std::int64_t high_watermark(int p) const override { return count_by(p, now_); }
  [[nodiscard]] std::int64_t log_start(int) const override { return 0; }
  [[nodiscard]] int leader(int p) const override { return leaders_[static_cast<std::size_t>(p)]; }
  [[nodiscard]] sim::Time visible_at(int p, std::int64_t offset) const override {
    // Evenly spaced (workload.arrivals "fixed"): record k at k / rate, on
    // every partition alike.
    if (evenly_spaced_) return sim::Time{std::llround(static_cast<double>(offset) * 1e6 / rate_)};
    Part& s = parts_[static_cast<std::size_t>(p)];
    if (offset < s.count) return sim::Time{s.known};  // already arrived (by the last instant asked)
    if (offset > s.count) return sim::Time::max();    // only the next one is ever asked for
    if (s.next < 0) {
      s.next = s.known + std::max<std::int64_t>(
                             1, static_cast<std::int64_t>(streams_[static_cast<std::size_t>(p)].exponential(1e6 / rate_)));
    }
    return sim::Time{s.next};
  }
  [[nodiscard]] std::int64_t high_watermark_at(int p, sim::Time t) const override { return count_by(p, t); }

 private:
  struct Part {
    std::int64_t known = 0;  // arrivals are drawn up to this instant
    std::int64_t count = 0;  // ... and there are this many
    std::int64_t next = -1;  // the next one's instant, when drawn
  };
  [[nodiscard]] std::int64_t count_by(int p, sim::Time t) const {
    if (evenly_spaced_) {
      // Records k with k / rate <= t.
      auto n = static_cast<std::int64_t>(std::floor(static_cast<double>(t.us) * rate_ / 1e6)) + 1;
      while (n > 0 && visible_at(p, n - 1) > t) --n;
      while (visible_at(p, n) <= t) ++n;
      return std::max<std::int64_t>(0, n);
    }
    Part& s = parts_[static_cast<std::size_t>(p)];
    if (t.us <= s.known) return s.count;
    if (s.next >= 0) {
      if (s.next > t.us) {
        s.known = t.us;  // none before the drawn next one
        return s.count;
      }
      ++s.count;
      s.known = s.next;
      s.next = -1;
    }
    s.count += streams_[static_cast<std::size_t>(p)].poisson(rate_ * static_cast<double>(t.us - s.known) / 1e6);
    s.known = t.us;
    return s.count;
  }

  std::vector<int> leaders_;
  double rate_;
  bool evenly_spaced_;
  sim::Time now_{};
  mutable std::vector<Part> parts_;
  mutable std::vector<sim::RandomStream> streams_;
};

}  // namespace

namespace {
SteadyCycle run_chain(const SteadyInputs& in);
}  // namespace

SteadyCycle steady_cycle(const SteadyInputs& in) {
  SteadyCycle out = run_chain(in);
  // How the rate moves with Keeper's request time: the same chain (same
  // draws) with every request 25 us longer. A busy task slows down; one that
  // waits for its records does not.
  SteadyInputs slower = in;
  slower.keeper_request = in.keeper_request + sim::Time::micros(25);
  if (!in.leaders.empty() && in.rate_per_partition > 0) {
    out.inserts_per_s_per_keeper_us = (run_chain(slower).inserts_per_s - out.inserts_per_s) / 25.0;
  }
  return out;
}

namespace {

SteadyCycle run_chain(const SteadyInputs& in) {
  SteadyCycle out;
  const int k = static_cast<int>(in.leaders.size());
  if (k == 0 || in.rate_per_partition <= 0) return out;
  constexpr int kWarmup = 500;
  // Cycles are run in blocks until the block means give the insert rate to
  // 0.05% (standard error), or kMaxCycles.
  constexpr int kBlockCycles = 5000;
  constexpr int kMinCycles = 20000;
  constexpr int kMaxCycles = 100000;
  constexpr int kStrata = 4096;

  PoissonView view(in.leaders, in.rate_per_partition, in.evenly_spaced);
  Fetcher fetcher(in.fetch);
  std::vector<int> partitions;
  for (int p = 0; p < k; ++p) partitions.push_back(p);
  fetcher.assign(partitions, std::vector<std::int64_t>(static_cast<std::size_t>(k), 0));

  const double base_us = static_cast<double>(in.insert_base.us);
  const double per_row_us = static_cast<double>(in.insert_per_row.us);
  const auto keeper_us = static_cast<double>(in.keeper_request.us);
  const auto commit_us = static_cast<double>(in.keeper_commit.us);
  std::vector<sink::PartitionBatch> batch;
  std::vector<std::int64_t> latencies;
  latencies.reserve(static_cast<std::size_t>(kMinCycles) * static_cast<std::size_t>(k));
  sim::Time t{};
  sim::Time measure_from{};
  std::int64_t inserts = 0;
  std::int64_t rows = 0;
  std::int64_t puts = 0;
  std::int64_t full_polls = 0;
  std::uint64_t stratum = 0;
  std::vector<double> block_rates;
  sim::Time block_start{};
  std::int64_t block_inserts = 0;
  int cycles_target = kWarmup + kMinCycles;
  bool blocked = false;
  // Records visible but not yet put, integrated over time (Little's law
  // turns its mean into the put position's age): per interval, the backlog
  // at its start times its length, plus the arrivals during it: free
  // Poisson ones during a put (kλd²/2); during a wait, none until the record
  // that ends it, `latency` before the wake, and free ones after it.
  std::vector<std::int64_t> put_end(static_cast<std::size_t>(k), 0);
  std::vector<std::int64_t> rows_by_partition(static_cast<std::size_t>(k), 0);
  double backlog_integral = 0;
  const double total_rate = k * in.rate_per_partition;
  const auto backlog_now = [&]() {
    std::int64_t backlog = 0;
    for (int p = 0; p < k; ++p) backlog += view.high_watermark(p) - put_end[static_cast<std::size_t>(p)];
    return static_cast<double>(backlog);
  };
  // A wait's end is only known at the next poll (the view is asked about
  // instants in order): whether a record ended it is settled there.
  bool waited = false;
  double backlog_before_wait = 0;
  double wait_latency_s = 0;
  for (int cycle = 0; cycle < cycles_target;) {
    view.set_now(t);
    batch.clear();
    const Fetcher::PollResult r = fetcher.poll(t, view, in.max_poll_records, batch, blocked);
    if (waited) {
      waited = false;
      if (!batch.empty() || backlog_now() > backlog_before_wait) {
        backlog_integral += wait_latency_s + total_rate * wait_latency_s * wait_latency_s / 2.0;
      }
    }
    if (!r.records) {
      const sim::Time wake = r.wake_at == sim::Time::max() ? t + in.fetch.max_wait : std::max(r.wake_at, t);
      if (cycle >= kWarmup) {
        backlog_before_wait = backlog_now();
        backlog_integral += backlog_before_wait * (wake - t).as_seconds();
        wait_latency_s = std::min(in.fetch.latency, wake - t).as_seconds();
        waited = true;
      }
      t = wake;
      blocked = true;
      continue;
    }
    blocked = false;
    const bool measuring = cycle >= kWarmup;
    if (cycle == kWarmup) measure_from = block_start = t;
    double put_us = 0;
    std::int64_t polled = 0;
    bool capped = false;
    for (const auto& pb : batch) {
      const std::int64_t n = pb.offsets.max - pb.offsets.min + 1;
      polled += n;
      capped = capped || n >= in.fetch.max_partition_records;
      // The lognormal factor, stratified over kStrata quantiles visited in a
      // scrambled order (an odd multiplier permutes a power of two).
      const std::uint64_t s = (stratum++ * 2654435761ULL) % kStrata;
      const double z = inverse_normal((static_cast<double>(s) + 0.5) / kStrata);
      const double local = (base_us + per_row_us * static_cast<double>(n)) *
                           std::exp(in.insert_sigma * z);
      const double quorum_us = in.quorum_keeper_requests > 0
                                   ? static_cast<double>(in.quorum_fetch.us) +
                                         keeper_us * in.quorum_keeper_requests +
                                         commit_us * in.quorum_keeper_writes
                                   : 0.0;
      const double insert_us = static_cast<double>(in.insert_overhead.us) + local +
                               keeper_us * in.keeper_requests_per_insert +
                               commit_us * in.keeper_writes_per_insert + quorum_us;
      put_us += static_cast<double>(in.insert_path.us) + insert_us +
                static_cast<double>(in.keeper_map_fixed.us) + keeper_us * in.keeper_map_requests +
                commit_us * in.keeper_map_writes;
      if (measuring) {
        if (latencies.size() < 400000) latencies.push_back(static_cast<std::int64_t>(insert_us));
        ++inserts;
        ++block_inserts;
        rows += n;
        rows_by_partition[static_cast<std::size_t>(pb.partition)] += n;
      }
    }
    capped = capped || polled >= in.max_poll_records;
    if (measuring) {
      ++puts;
      if (capped) ++full_polls;
    }
    const sim::Time put{std::max<std::int64_t>(1, static_cast<std::int64_t>(put_us))};
    if (measuring) {
      const double d = put.as_seconds();
      backlog_integral += backlog_now() * d + total_rate * d * d / 2.0;
    }
    for (const auto& pb : batch) {
      auto& end = put_end[static_cast<std::size_t>(pb.partition)];
      end = std::max(end, pb.offsets.max + 1);
    }
    t += put;
    ++cycle;
    if (measuring && (cycle - kWarmup) % kBlockCycles == 0) {
      block_rates.push_back(static_cast<double>(block_inserts) / (t - block_start).as_seconds());
      block_inserts = 0;
      block_start = t;
      if (cycle == cycles_target && cycles_target < kWarmup + kMaxCycles) {
        // Standard error of the mean of the blocks' rates.
        double mean = 0;
        for (const double r : block_rates) mean += r;
        mean /= static_cast<double>(block_rates.size());
        double var = 0;
        for (const double r : block_rates) var += (r - mean) * (r - mean);
        var /= static_cast<double>(block_rates.size() - 1);
        const double se = std::sqrt(var / static_cast<double>(block_rates.size()));
        if (se > 5e-4 * mean) cycles_target += kBlockCycles;
      }
    }
  }
  const double seconds = static_cast<double>((t - measure_from).us) / 1e6;
  out.inserts_per_s = static_cast<double>(inserts) / seconds;
  out.cycle_s = seconds / static_cast<double>(puts);
  out.rows_per_insert = static_cast<double>(rows) / static_cast<double>(inserts);
  for (const std::int64_t n : rows_by_partition)
    out.rows_per_s.push_back(static_cast<double>(n) / seconds);
  out.position_age_s = backlog_integral / seconds / total_rate;
  const double keeper_requests = static_cast<double>(inserts) * in.keeper_requests_per_insert +
                                 static_cast<double>(inserts) * in.keeper_map_requests;
  out.keeper_requests_per_s = keeper_requests / seconds;
  out.keeper_map_queries_per_s = in.keeper_map_requests > 0 ? 3.0 * out.inserts_per_s : 0.0;
  out.caught_up = static_cast<double>(full_polls) <= 1e-3 * static_cast<double>(puts);
  std::sort(latencies.begin(), latencies.end());
  for (std::size_t q = 0; q < out.insert_latency_us.size(); ++q) {
    const std::size_t i = (2 * q + 1) * latencies.size() / (2 * out.insert_latency_us.size());
    out.insert_latency_us[q] = latencies[std::min(i, latencies.size() - 1)];
  }
  return out;
}

}  // namespace

const SteadyCycle& steady_cycle_cached(const SteadyInputs& in) {
  using Key = std::tuple<std::vector<int>, double, std::int64_t, std::int64_t, std::int64_t,
                         std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                         double, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                         std::int64_t, std::int64_t, std::int64_t, std::int64_t>;
  const Key key{
      in.leaders,
      in.rate_per_partition * (in.evenly_spaced ? -1.0 : 1.0),
      in.fetch.latency.us,
      in.fetch.max_wait.us,
      in.fetch.min_records,
      in.fetch.max_partition_records,
      in.fetch.max_response_records,
      in.max_poll_records,
      in.insert_base.us,
      in.insert_per_row.us,
      in.insert_sigma,
      in.keeper_request.us,
      in.keeper_commit.us,
      in.keeper_requests_per_insert * 1000 + in.keeper_writes_per_insert,
      (in.quorum_fetch.us * 1000 + in.quorum_keeper_requests) * 1000 + in.quorum_keeper_writes,
      in.keeper_map_requests * 1000 + in.keeper_map_writes,
      in.insert_overhead.us,
      in.insert_path.us,
      in.keeper_map_fixed.us};
  static std::mutex mutex;
  static std::map<Key, SteadyCycle> cache;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    const auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  SteadyCycle computed = steady_cycle(in);
  const std::lock_guard<std::mutex> lock(mutex);
  // std::map never moves its nodes: the reference stays valid.
  return cache.emplace(key, computed).first->second;
}

const SteadyCycle& lagging_cycle_cached(const SteadyInputs& in) {
  SteadyInputs saturated = in;
  saturated.rate_per_partition = kSaturatedRate;
  saturated.evenly_spaced = false;
  return steady_cycle_cached(saturated);
}

}  // namespace pipesim::connect
