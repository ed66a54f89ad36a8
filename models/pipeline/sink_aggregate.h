// Healthy sink stretches advanced in aggregate: a declared shortcut (off with
// run.exact=true), tested against the exact path on the same seeds.
//
// A caught-up task puts tens of times a second per partition (one put per
// fetch-plus-put cycle, connect::SteadyCycle), 25-40 million inserts a day for
// the production baseline: too many to simulate one by one within the speed
// target. While nothing unfolds (no fault's window open or near, the producer
// on its direct feed, every replica and Keeper healthy, the task caught up
// and far from its poll and fetch limits), a task's puts are counted instead:
//   - its put position follows the visible records at the steady state's
//     mean distance (Little's law on the visible-but-not-put records), and
//     what it passes is inserted once (the ledger gets the rows as ranges);
//   - its inserts come at the steady rate of connect::steady_cycle() for its
//     partitions and the hour's rate, corrected for Keeper's current request
//     time; each commits a new part: the table counts it, its block id enters
//     the dedup window anonymously (nobody redelivers it: no redelivery comes
//     without a fault), the cleanup threads see its blocks and parts;
//   - their Keeper requests (inserts, replication, KeeperMap) load Keeper as a
//     steady stream, and their latencies enter the histograms as the steady
//     state spreads them;
//   - commits happen every offset.flush.interval.ms (plus half a cycle: the
//     next poll after it is due), at the put position then.
// Counting happens when someone looks (a cleanup thread, the background
// scheduler's wake-up check, the end of an hour, the task leaving): between
// those, nothing of the stretch costs anything.
// Leaving (anything touches the task): the task resumes as right after a put
// that returned, its fetch buffer empty, its stored state the last batch.
// A lagging task (every poll full) is counted the same way at its full-poll
// cycle's rate until its predicted catch-up (sink_aggregate_lagging.cpp).
// Why answers do not change: duplicates and losses come from faults; every
// fault's window opens offset.flush.interval.ms + 2 s ahead, so the commit a
// crash replays from, the batches in flight and the dedup window's recent
// ids are all the exact path's when the fault comes.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "models/broker/kafka_cluster.h"
#include "models/clickhouse/table.h"
#include "models/connect/connect_cluster.h"
#include "models/connect/steady_cycle.h"
#include "models/keeper/keeper.h"
#include "models/ledger/ledger.h"
#include "models/pipeline/config.h"
#include "models/producer/direct_feed.h"
#include "models/sink/sink_counters.h"
#include "models/workload/workload.h"
#include "sim/engine/simulation.h"

namespace pipesim::pipeline {

class Regime;

class SinkAggregate final : public sim::Component,
                            public connect::AggregateHost,
                            public clickhouse::AggregateInserts {
 public:
  struct Parts {
    const Config& config;
    connect::ConnectCluster& connect;
    clickhouse::ReplicatedTable& table;
    keeper::Keeper& keeper;
    ledger::Ledger& ledger;
    std::vector<broker::PartitionLog>& logs;
    workload::Workload& workload;
    producer::DirectFeed& feed;
    broker::KafkaCluster& kafka;
    sink::SinkCounters& sink_counters;
    connect::FetchSettings fetch;
  };
  SinkAggregate(sim::Simulation& sim, const Parts& parts);
  void set_regime(const Regime* regime) { regime_ = regime; }

  // connect::AggregateHost
  [[nodiscard]] bool may_aggregate(const connect::WorkerSinkTask& task) override;
  void entered(connect::WorkerSinkTask& task) override;
  void leaving(connect::WorkerSinkTask& task) override;
  // clickhouse::AggregateInserts
  void materialize(sim::Time now) override;

  // Every task in aggregate resumes event by event (a window opens).
  void leave_all();
  // The run ends: everything counted exactly up to `now`.
  void finish(sim::Time now);
  // The workload is about to forget the arrivals before `horizon`: a member
  // whose next commit falls before it (nobody looked for minutes, e.g. with
  // the cleanup thread's wake-up check off) is counted to `now` first, since
  // its commits read the arrival counts at their own instants.
  void count_before_forgetting(sim::Time horizon, sim::Time now);
  [[nodiscard]] bool any() const { return !members_.empty(); }

  void handle(const sim::Event& event) override;

  struct Counters {
    std::int64_t entries = 0;
    double task_seconds = 0;  // task-time spent in aggregate
    double lagging_task_seconds = 0;  // ... of it lagging (catching up)
  };
  [[nodiscard]] const Counters& counters() const { return counters_; }

 private:
  enum EventType : std::uint32_t { kHour = 1, kCatchUp = 2 };
  // Rates are looked up hour by hour (the workload's rate is constant within one).
  static constexpr sim::Time kHourLength = sim::Time::hours(1);
  struct Member {
    connect::WorkerSinkTask* task = nullptr;
    sim::Time since{};
    sim::Time done_to{};
    double inserts = 0;  // counted, not yet handed to the table (fractions)
    double map_queries = 0;
    bool leaving = false;  // counted exactly, to the instant
    // Lagging (every poll full): the put positions, by the task's
    // partitions, advanced at the lagging cycle's rates
    // (sink_aggregate_lagging.cpp).
    bool lagging = false;
    std::vector<double> position;
  };
  // The steady state of a task's partitions at the rate of time t, for
  // Keeper's current request time.
  const connect::SteadyCycle& steady(const connect::WorkerSinkTask& task, sim::Time t);
  // The same task lagging: every poll full (connect::lagging_cycle_cached).
  const connect::SteadyCycle& lagging(const connect::WorkerSinkTask& task, sim::Time t);
  [[nodiscard]] connect::SteadyInputs cycle_inputs(const connect::WorkerSinkTask& task,
                                                   sim::Time t) const;
  [[nodiscard]] double inserts_per_s(const connect::SteadyCycle& s) const;
  // Keeper's request time for the stretch: now's, without a hold under way
  // (the bursts' holds are priced in inserts_per_s).
  [[nodiscard]] sim::Time keeper_request_time() const;
  void advance(Member& m, sim::Time now);
  // What a member's put position of `p` passed on its way to `target` goes
  // to the ledger once, inserted normally, and the task's position moves.
  void put_through(connect::WorkerSinkTask& task, int p, std::int64_t target, sim::Time now,
                   std::vector<broker::IdPiece>& pieces);
  // A stretch's counted inserts and KeeperMap queries, to the table and the sink's counters.
  void hand_over(std::int64_t inserts, const connect::SteadyCycle& s, std::int64_t map_queries);
  // Lagging members (sink_aggregate_lagging.cpp): is the backlog worth a
  // stretch, counting one, when the first partition comes within
  // kCatchUpPolls of its high watermark, and letting those go.
  [[nodiscard]] bool lag_worth_aggregating(const connect::WorkerSinkTask& task, sim::Time now);
  void advance_lagging(Member& m, sim::Time now);
  [[nodiscard]] sim::Time catch_up_at(const Member& m, sim::Time now);
  // Seconds until the first of the task's partitions, at `position`, comes
  // within kCatchUpPolls batches of the records visible, at the hour's
  // arrival rate and `scale` x the lagging cycle's put rate (0: it is
  // within them already; infinity: none catches up).
  [[nodiscard]] double catch_up_seconds(const connect::WorkerSinkTask& task,
                                        const std::vector<double>& position,
                                        const connect::SteadyCycle& s, double scale,
                                        sim::Time now) const;
  void schedule_catch_up();
  void leave_caught_up();
  void update_rates();
  void schedule_hour();

  sim::Simulation& sim_;
  Parts parts_;
  const Regime* regime_ = nullptr;
  sim::ComponentId id_;
  std::vector<Member> members_;
  bool hour_pending_ = false;
  bool catch_up_pending_ = false;
  std::uint32_t catch_up_generation_ = 0;
  sim::Time keeper_request_{};  // the request time the rates were last set for
  Counters counters_;
};

}  // namespace pipesim::pipeline
