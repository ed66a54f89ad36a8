// The classic hold model (the targets in bench/RESULTS.md): N pending events;
// each step pops the earliest event and pushes one successor at
// now + Exp(mean 1 ms), in integer microseconds drawn from sim::RandomStream.
//
// Two contenders, same binary, same flags, same draws, same stopping rule:
//   baseline: a bare std::priority_queue of a 24-byte POD {time, seq, payload}
//             ordered by (time, seq) -- the cheapest honest pending-event set;
//   engine:   a sim::Simulation dispatching to a real typed sim::Component
//             whose handle() schedules the successor through
//             Simulation::schedule, so the virtual dispatch, the incarnation
//             check, the FIFO sequence number and the 32-byte Event are paid.
//
// Draws: "table" (the headline figure) precomputes 2^16 Exp(1 ms) draws from
// one RandomStream and both contenders walk the same table in the same order,
// so the ratio measures the pending-event set and dispatch only. "live" draws
// each delay from a RandomStream in the loop (log() and all), as a simulation
// would; it is reported as a secondary figure.
//
// Each benchmark iteration advances simulated time by a slice worth about
// 1,000 events (run_until(now + slice) for the engine, the same loop by hand
// for the baseline); items_processed is the exact number of events handled,
// and events/s are per second of this thread's CPU time (Google Benchmark's
// default), which time slices given to other programs do not inflate.
// Before timing, the model is warmed up for 10 simulated ms (~10 N events) so
// the queue is in its steady state.
//
// main() checks that both contenders handle exactly the same events, runs the
// benchmarks, then prints "hold N=...: engine/baseline = ...x" per N from the
// best (max events/s) and the median repetition of each.

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <queue>
#include <string>
#include <vector>

#include "sim/engine/random.h"
#include "sim/engine/simulation.h"
#include "sim/engine/time.h"

namespace {

using pipesim::sim::Component;
using pipesim::sim::ComponentId;
using pipesim::sim::Event;
using pipesim::sim::RandomStream;
using pipesim::sim::Simulation;
using pipesim::sim::Time;

constexpr std::uint64_t kSeed = 20240601;
constexpr Time kMean = Time::millis(1);
constexpr Time kWarmup = Time::millis(10);
constexpr std::int64_t kEventsPerIteration = 1000;

// --- the draws ------------------------------------------------------------

constexpr std::size_t kTableSize = std::size_t{1} << 16;

const std::vector<std::int64_t>& draw_table() {
  static const std::vector<std::int64_t> table = [] {
    RandomStream rs(kSeed, "hold.table");
    std::vector<std::int64_t> t(kTableSize);
    for (auto& d : t) d = rs.exponential_time(kMean).us;
    return t;
  }();
  return table;
}

class TableDraws {
 public:
  TableDraws() : table_(draw_table().data()) {}
  std::int64_t next() {
    const std::int64_t d = table_[i_];
    i_ = (i_ + 1) & (kTableSize - 1);
    return d;
  }

 private:
  const std::int64_t* table_;
  std::size_t i_ = 0;
};

class LiveDraws {
 public:
  LiveDraws() : rs_(kSeed, "hold.live") {}
  std::int64_t next() { return rs_.exponential_time(kMean).us; }

 private:
  RandomStream rs_;
};

// Simulated time per iteration so that about kEventsPerIteration events fall
// in it: N pending events of mean delay 1 ms complete N per ms.
Time slice_for(std::int64_t n) {
  return Time{std::max<std::int64_t>(1, kEventsPerIteration * kMean.us / n)};
}

// --- baseline: bare std::priority_queue of 24-byte PODs ---------------------

struct PodEvent {
  std::int64_t time;
  std::uint64_t seq;
  std::uint64_t payload;
};
static_assert(sizeof(PodEvent) == 24);

struct Later {  // std::greater on (time, seq): the top is the earliest
  bool operator()(const PodEvent& a, const PodEvent& b) const {
    return a.time > b.time || (a.time == b.time && a.seq > b.seq);
  }
};

// Trace: hashes the (time, payload) of every handled event, to check that the
// contenders handle the same events in the same order; off when timing.
template <class Draws, bool Trace = false>
class BaselineHold {
 public:
  explicit BaselineHold(std::int64_t n) {
    std::vector<PodEvent> storage;
    storage.reserve(static_cast<std::size_t>(n) + 1);
    queue_ = std::priority_queue<PodEvent, std::vector<PodEvent>, Later>(Later{}, std::move(storage));
    for (std::int64_t i = 0; i < n; ++i) {
      queue_.push(PodEvent{draws_.next(), seq_++, static_cast<std::uint64_t>(i)});
    }
  }

  // Handles every event with time <= end (the engine's run_until rule).
  void run_until(std::int64_t end) {
    while (!queue_.empty() && queue_.top().time <= end) {
      const PodEvent e = queue_.top();
      queue_.pop();
      now_ = e.time;
      ++processed_;
      if constexpr (Trace) trace_ = trace_ * 1000003 + static_cast<std::uint64_t>(now_) * 31 + e.payload;
      queue_.push(PodEvent{now_ + draws_.next(), seq_++, e.payload});
    }
    if (end > now_) now_ = end;
  }

  [[nodiscard]] std::int64_t now() const { return now_; }
  [[nodiscard]] std::uint64_t processed() const { return processed_; }
  [[nodiscard]] std::uint64_t trace() const { return trace_; }

 private:
  std::priority_queue<PodEvent, std::vector<PodEvent>, Later> queue_;
  Draws draws_;
  std::int64_t now_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t processed_ = 0;
  std::uint64_t trace_ = 0;
};

// --- engine: sim::Simulation + a typed component ------------------------------

template <class Draws, bool Trace = false>
class HoldComponent final : public Component {
 public:
  enum EventType : std::uint32_t { kHold = 1 };

  explicit HoldComponent(Simulation& sim) : sim_(sim), id_(sim.add_component(this)) {}

  void seed_events(std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
      sim_.schedule(Time{draws_.next()}, id_, kHold, static_cast<std::uint32_t>(i));
    }
  }

  void handle(const Event& event) override {
    if constexpr (Trace) {
      trace_ = trace_ * 1000003 + static_cast<std::uint64_t>(sim_.now().us) * 31 + event.arg;
    }
    sim_.schedule(sim_.now() + Time{draws_.next()}, id_, event.type, event.arg);
  }

  [[nodiscard]] std::uint64_t trace() const { return trace_; }

 private:
  Simulation& sim_;
  ComponentId id_;
  Draws draws_;
  std::uint64_t trace_ = 0;
};

template <class Draws, bool Trace = false>
class EngineHold {
 public:
  explicit EngineHold(std::int64_t n) : component_(sim_) { component_.seed_events(n); }
  void run_until(std::int64_t end) { sim_.run_until(Time{end}); }
  [[nodiscard]] std::int64_t now() const { return sim_.now().us; }
  [[nodiscard]] std::uint64_t processed() const { return sim_.events_processed(); }
  [[nodiscard]] std::uint64_t trace() const { return component_.trace(); }

 private:
  Simulation sim_;
  HoldComponent<Draws, Trace> component_;
};

// --- benchmarks ------------------------------------------------------------

template <class Model>
void hold(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const Time slice = slice_for(n);
  Model model(n);
  model.run_until(model.now() + kWarmup.us);
  const std::uint64_t before = model.processed();
  for (auto _ : state) {
    model.run_until(model.now() + slice.us);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(model.processed() - before));
  state.counters["pending"] = static_cast<double>(n);
}

// Both contenders must handle exactly the same events in the same order.
template <class Draws>
bool same_events(std::int64_t n) {
  BaselineHold<Draws, true> base(n);
  EngineHold<Draws, true> engine(n);
  const Time slice = slice_for(n);
  for (int i = 0; i < 200; ++i) {
    base.run_until(base.now() + slice.us);
    engine.run_until(engine.now() + slice.us);
  }
  return base.processed() > 0 && base.processed() == engine.processed() &&
         base.now() == engine.now() && base.trace() == engine.trace();
}

// Captures every repetition's events/s while printing as the console does.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  RatioReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_ColorTabular : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
      const auto it = run.counters.find("items_per_second");
      if (it == run.counters.end()) continue;
      rates_[run.run_name.function_name][run.run_name.args].push_back(it->second.value);
    }
    ConsoleReporter::ReportRuns(runs);
  }

  void print_ratios() const {
    std::printf("\n");
    for (const char* draws : {"table", "live"}) {
      const std::string base_name = std::string("hold_") + draws + "/baseline_pq";
      const std::string engine_name = std::string("hold_") + draws + "/engine";
      const auto b = rates_.find(base_name);
      const auto e = rates_.find(engine_name);
      if (b == rates_.end() || e == rates_.end()) continue;
      for (const auto& [args, engine_rates] : e->second) {
        const auto bb = b->second.find(args);
        if (bb == b->second.end()) continue;
        const double best_e = best(engine_rates), best_b = best(bb->second);
        const double med_e = median(engine_rates), med_b = median(bb->second);
        std::printf(
            "hold N=%s (%s draws): engine/baseline = %.2fx  [best of %zu: engine %.1f M ev/s, "
            "baseline %.1f M ev/s; median ratio %.2fx]\n",
            args.c_str(), draws, best_e / best_b, engine_rates.size(), best_e / 1e6, best_b / 1e6,
            med_e / med_b);
      }
    }
  }

 private:
  static double best(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }
  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
  }

  // function name -> args -> events/s per repetition
  std::map<std::string, std::map<std::string, std::vector<double>>> rates_;
};

void register_all() {
  for (const std::int64_t n : {std::int64_t{1000}, std::int64_t{100000}}) {
    benchmark::RegisterBenchmark("hold_table/baseline_pq", hold<BaselineHold<TableDraws>>)->Arg(n);
    benchmark::RegisterBenchmark("hold_table/engine", hold<EngineHold<TableDraws>>)->Arg(n);
  }
  for (const std::int64_t n : {std::int64_t{1000}, std::int64_t{100000}}) {
    benchmark::RegisterBenchmark("hold_live/baseline_pq", hold<BaselineHold<LiveDraws>>)->Arg(n);
    benchmark::RegisterBenchmark("hold_live/engine", hold<EngineHold<LiveDraws>>)->Arg(n);
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (const std::int64_t n : {std::int64_t{1000}, std::int64_t{100000}}) {
    if (!same_events<TableDraws>(n) || !same_events<LiveDraws>(n)) {
      std::fprintf(stderr, "engine_bench: baseline and engine diverged at N=%lld\n",
                   static_cast<long long>(n));
      return 1;
    }
  }
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_ratios();
  benchmark::Shutdown();
  return 0;
}
