// When the pipeline runs event by event and when a healthy stretch may be
// advanced in aggregate (declared shortcuts, docs/model.md §2: off with
// run.exact=true, tested against the exact path on the same seeds).
//
// The producer: exact (kafka-clients' requests, producer.h) from a pre-roll
// before every fault that touches the producer or the brokers, and before
// every leadership change the controller plans, until the fault is over and
// the producer is quiescent again (no retry, error or timeout pending, the
// metadata right, every partition led with its full ISR); otherwise the
// direct feed (direct_feed.h) writes the records as they arrive.
//
// The pre-roll (1 s, or 4 acks=all round trips if longer) is many round
// trips: by the time the fault comes, the exact producer's batches, requests
// and in-flight windows are those of steady traffic. Every pre-roll is also
// longer by a uniform 0..1 s (stream "regime/preroll"), so that the phase of
// any periodic pattern the switch starts (requests one round trip apart, puts
// one cycle apart) is random against the fault, as it is in a real pipeline,
// not fixed by the pre-roll's length.
//
// The sink tasks: exact from offset.flush.interval.ms + 2 s before every
// fault and every change the Connect cluster plans by itself (an eviction, a
// worker's return, tasks moved, an operator's restart), so that the commit a
// crash replays from, and every insert a redelivery could meet in the dedup
// window, are the exact path's; exact whenever the producer is; and after
// that until all has settled: the cluster with no rebalance, dead member or
// absent worker, the producer on its direct feed, the replicas and Keeper
// healthy, and nothing planned within kMinStretch. Only then may a caught-up
// (or a lagging) task go on in aggregate (sink_aggregate.h).
//
// The direct feed also needs a producer with headroom: a broker reads a
// connection's next request only once it has answered the previous one (an
// acks=all answer waits for the ISR), and a request carries at most one
// batch per partition, so a partition takes at most records_per_batch per
// max(broker hold, round trip / max.in.flight) (producer_capacity()). Where
// an hour's arrivals need more than kMaxProducerLoad of that, records wait
// in the accumulator, which the direct feed does not model: that hour runs
// exactly, and an overloaded producer's backlog, expiries and failures are
// the exact path's.
//
// Both shortcuts are taken only for a stretch worth it until the next window
// (or the workload's end): the sink's at least kMinStretch and kMinRecords
// records, the producer's (each record costs the exact producer a round of
// its Sender, more than a put costs) kProducerMinStretch and
// kProducerMinRecords. A thinner stretch costs little event by event (10^5
// records: at most ~2 x 10^5 events, ~0.2 s), and a shorter one saves little
// beyond what entering (kSteadyPuts caught-up puts) and leaving cost: both are
// worth-it thresholds, not resolutions (the agreement tests hold the answers
// either way). Between faults minutes
// apart (one every 6 minutes: issue 37's fault-dense day) the sink goes on in
// aggregate; so does a lab's tail after its fault when it is long enough:
// the lab's outcome is then identical both ways, its load figures (inserts,
// Keeper's requests and dashboards) the aggregate's
// (tests/shortcut_agreement_test.cpp).
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "models/broker/kafka_cluster.h"
#include "models/clickhouse/table.h"
#include "models/keeper/keeper.h"
#include "models/connect/connect_cluster.h"
#include "models/producer/direct_feed.h"
#include "models/producer/producer.h"
#include "models/workload/workload.h"
#include "sim/engine/random.h"
#include "sim/engine/fault_schedule.h"
#include "sim/engine/simulation.h"

namespace pipesim::pipeline {

class SinkAggregate;

class Regime final : public sim::Component,
                     public producer::SenderObserver,
                     public connect::ClusterPlans {
 public:
  // The producer's pre-roll: at least a second, and always several of its
  // round trips to an acks=all answer.
  static constexpr sim::Time kProducerPreroll = sim::Time::seconds(1);
  [[nodiscard]] sim::Time producer_preroll() const { return producer_preroll_; }
  // How often a producer that may go back to the direct feed is looked at.
  static constexpr sim::Time kQuiescenceCheck = sim::Time::seconds(1);
  static constexpr sim::Time kMinStretch = sim::Time::minutes(2);
  static constexpr double kMinRecords = 1e5;
  static constexpr sim::Time kProducerMinStretch = sim::Time::minutes(1);
  static constexpr double kProducerMinRecords = 1e5;
  // A lagging task's cost event by event is per put (a full poll each, ~14
  // events), not per record: its stretch must hold kMinLaggingPuts puts
  // before its predicted catch-up (at the defaults 5 x 10^5 records, ~0.01 s
  // of events; fewer save little beyond what entering and leaving cost).
  static constexpr double kMinLaggingPuts = 1000;
  // The share of producer_capacity() up to which the direct feed may stand in
  // for the producer: at half of it, a round trip's arrivals overflow a batch
  // with Poisson probability < 0.3 % (7.5 on average for a batch of 15).
  static constexpr double kMaxProducerLoad = 0.5;

  // Records/s one partition can take from the producer (see above): acks=0
  // requests hold nothing; acks=all ones hold the connection for the
  // replication (`broker_hold`).
  static double producer_capacity(std::int64_t records_per_batch, sim::Time round_trip,
                                  sim::Time broker_hold, std::int64_t max_in_flight, bool acks_none);

  struct Parts {
    producer::Producer& producer;
    producer::DirectFeed& feed;
    broker::KafkaCluster& kafka;
    connect::ConnectCluster& connect;
    clickhouse::ReplicatedTable& table;
    keeper::Keeper& keeper;
    const workload::Workload& workload;
  };
  Regime(sim::Simulation& sim, bool exact, sim::Time producer_preroll, sim::Time sink_preroll,
         double producer_capacity, std::uint64_t seed, const Parts& parts);
  void set_sink_aggregate(SinkAggregate* aggregate) { aggregate_ = aggregate; }

  // Fault kinds that make the producer run exactly.
  static bool touches_producer(const std::string& kind);
  // Plans the exact windows of the run's fault timeline.
  void plan(const std::vector<sim::FaultOccurrence>& schedule, const std::vector<sim::FaultSpec>& specs);
  // The producer starts taking the arrivals (time 0).
  void start();
  // The producer runs exactly over [from, to) (and until it is quiescent);
  // so do the sink tasks.
  void producer_window(sim::Time from, sim::Time to);
  // The sink tasks run exactly over [from, to).
  void sink_window(sim::Time from, sim::Time to);
  [[nodiscard]] bool direct() const { return feed_.active(); }
  // May a caught-up task go on in aggregate now?
  [[nodiscard]] bool sink_may_aggregate(sim::Time now) const;
  // May a lagging one, with `backlog` records to put besides the arrivals,
  // `rows_per_put` a put?
  [[nodiscard]] bool sink_may_aggregate_lagging(sim::Time now, double backlog,
                                                double rows_per_put) const;

  void handle(const sim::Event& event) override;
  void sender_ran() override;
  void connect_change_planned(sim::Time at) override { sink_window(at - sink_preroll_, at); }

  struct Counters {
    std::int64_t producer_exact_switches = 0;
    std::int64_t producer_direct_switches = 0;
    sim::Time producer_direct_time{};  // time spent with the direct feed (closed stretches)
  };
  [[nodiscard]] const Counters& counters() const { return counters_; }

 private:
  enum EventType : std::uint32_t {
    kOpen = 1, kClose = 2, kCheck = 3, kSinkOpen = 4, kSinkClose = 5, kSinkCheck = 6, kOverload = 7
  };

  void to_exact();
  void try_direct();
  // Does the producer have headroom for the arrivals at t (kMaxProducerLoad)?
  [[nodiscard]] bool keeps_up(sim::Time t) const;
  // The first hour boundary in (now, until) from which it has not (until if none).
  [[nodiscard]] sim::Time overload_from(sim::Time now, sim::Time until) const;
  // Is the stretch from now to the next window start (of `starts`) worth a shortcut?
  [[nodiscard]] bool worth_it(const std::multiset<sim::Time>& starts, sim::Time now,
                              sim::Time min_stretch, double min_records, double backlog = 0) const;
  void add_start(std::multiset<sim::Time>& starts, sim::Time at);
  // No sink window open, all settled, the producer on its direct feed.
  [[nodiscard]] bool sink_open() const;
  void schedule_check();
  // The sink's windows are closed: has everything settled?
  void try_settle();
  void schedule_sink_check();

  sim::Simulation& sim_;
  bool exact_;
  sim::Time producer_preroll_;
  sim::Time sink_preroll_;
  double producer_capacity_;  // records/s per partition
  std::uint32_t overload_generation_ = 0;
  sim::RandomStream jitter_;  // "regime/preroll"
  clickhouse::ReplicatedTable& table_;
  keeper::Keeper& keeper_;
  const workload::Workload& workload_;
  std::multiset<sim::Time> producer_starts_;  // planned producer windows' starts
  SinkAggregate* aggregate_ = nullptr;
  int open_sink_windows_ = 0;
  bool sink_settled_ = false;
  bool sink_check_pending_ = false;
  std::multiset<sim::Time> sink_starts_;  // planned sink windows' starts
  producer::Producer& producer_;
  producer::DirectFeed& feed_;
  broker::KafkaCluster& kafka_;
  connect::ConnectCluster& connect_;
  sim::ComponentId id_;
  int open_windows_ = 0;
  bool check_pending_ = false;
  sim::Time direct_since_{};
  Counters counters_;
};

}  // namespace pipesim::pipeline
