#include "models/pipeline/scenario.h"

#include <algorithm>
#include <map>
#include <memory>

#include "models/broker/partition_log.h"
#include "models/clickhouse/table.h"
#include "models/connect/connect_cluster.h"
#include "models/keeper/keeper.h"
#include "models/ledger/ledger.h"
#include "models/pipeline/metrics.h"
#include "models/pipeline/topology.h"
#include "models/producer/producer.h"
#include "models/sink/sink_counters.h"
#include "models/workload/workload.h"
#include "sim/engine/fault_schedule.h"
#include "sim/engine/simulation.h"

namespace pipesim::pipeline {
namespace {

int target_index(const std::string& target) {
  const auto dash = target.rfind('-');
  return dash == std::string::npos ? 0 : std::stoi(target.substr(dash + 1));
}

// Everything of one run; lives on the stack of run_scenario.
class Run final : public sim::Component {
 public:
  Run(const Config& c, std::uint64_t seed)
      : config_(c),
        seed_(seed),
        partitions_(static_cast<int>(c.kafka.num_partitions)),
        topology_(c),
        logs_(static_cast<std::size_t>(partitions_)),
        ledger_(partitions_),
        keeper_(c.keeper, seed),
        table_(sim_, c.clickhouse, logs_, ledger_, keeper_, seed),
        workload_(c.workload, partitions_, seed),
        deps_{&c.connector, &table_, &ledger_, &logs_, &sink_counters_},
        cluster_(sim_, c.connect, c.operator_options, c.connector.name, partitions_, logs_, deps_,
                 c.connector.exactly_once, seed),
        producer_(sim_, c.producer, workload_, logs_, ledger_,
                  topology_.round_trip("producer", "broker-0"),
                  [this](int p) { on_append(p); }),
        id_(sim_.add_component(this)) {}

  sim::Metrics execute() {
    const sim::Time end_of_faults = config_.run.duration;
    schedule_ = sim::build_fault_schedule(config_.faults, seed_, end_of_faults,
                                          [this](const std::string& kind) { return targets(kind); });
    for (std::size_t i = 0; i < schedule_.size(); ++i) {
      sim_.schedule(schedule_[i].at, id_, kFaultStart, static_cast<std::uint32_t>(i));
    }
    table_.start();
    cluster_.start();
    producer_.start(end_of_faults);
    sim_.run_until(end_of_faults + config_.run.drain);
    return collect();
  }

  void handle(const sim::Event& e) override {
    const sim::FaultOccurrence& f = schedule_[e.arg];
    const sim::FaultSpec& spec = config_.faults[f.spec];
    if (e.type == kFaultEnd) {
      end_fault(spec);
      return;
    }
    ++faults_fired_[spec.kind];
    start_fault(spec, f);
    if (f.duration.us > 0) sim_.schedule_in(f.duration, id_, kFaultEnd, e.arg);
  }

 private:
  enum EventType : std::uint32_t { kFaultStart = 1, kFaultEnd = 2 };

  std::vector<std::string> targets(const std::string& kind) const {
    std::vector<std::string> t;
    const auto add = [&t](const std::string& prefix, std::int64_t n) {
      for (std::int64_t i = 0; i < n; ++i) t.push_back(prefix + std::to_string(i));
    };
    if (kind == "worker_crash") add("worker-", config_.connect.workers);
    if (kind == "task_restart") add("task-", config_.connect.tasks_max);
    if (kind == "broker_crash") add("broker-", config_.kafka.brokers);
    if (kind == "replica_crash" || kind == "keeper_session_loss") add("replica-", config_.clickhouse.replicas);
    return t;
  }

  void start_fault(const sim::FaultSpec& spec, const sim::FaultOccurrence& f) {
    const std::string& k = spec.kind;
    if (k == "worker_crash") {
      cluster_.kill_worker(target_index(f.target));
    } else if (k == "task_restart") {
      cluster_.restart_task(target_index(f.target));
    } else if (k == "rebalance") {
      cluster_.rebalance(spec.params.value("max.poll.records", std::int64_t{0}));
    } else if (k == "insert_timeout") {
      // The server hangs for the window (at least past the client timeout).
      const sim::Time window =
          f.duration.us > 0 ? f.duration
                            : sim::Time::seconds(config_.connector.timeout_seconds) + sim::Time::seconds(10);
      // Without a target the whole table hangs; with "replica-N" only the
      // inserts routed to that replica (the others go on).
      table_.stall(sim_.now() + window, spec.params.value("server_commits", 1.0),
                   f.target.empty() ? -1 : target_index(f.target));
    } else if (k == "keeper_backlog") {
      keeper_.set_degradation(sim_.now(), spec.params.value("capacity_factor", 0.25),
                              static_cast<double>(spec.params.value("extra_ops_per_s", std::int64_t{0})));
    } else if (k == "keeper_election") {
      // No leader for the window (Raft election timeout 1-2 s by default).
      const sim::Time window = f.duration.us > 0 ? f.duration : sim::Time::seconds(2);
      table_.keeper_election(sim_.now() + window, spec.params.value("commit_applied", 0.5));
    } else if (k == "replica_crash") {
      // The server process (or host, with "hang") is down for the window.
      const sim::Time window = f.duration.us > 0 ? f.duration : sim::Time::seconds(60);
      table_.crash_replica(target_index(f.target), sim_.now() + window, spec.params.value("hang", false));
    } else if (k == "keeper_session_loss") {
      // The replica's Keeper session expired: read-only for the window (by
      // default one zookeeper_session_expiration_check_period).
      const sim::Time window = f.duration.us > 0
                                   ? f.duration
                                   : sim::Time::seconds(config_.clickhouse.zookeeper_session_expiration_check_period);
      table_.lose_session(target_index(f.target), sim_.now() + window);
    } else if (k == "state_wipe") {
      cluster_.wipe_keeper_map_state();
    }
    // Other kinds are counted in faults_fired but not modelled yet
    // (faults_not_modelled()): reports say so.
  }

  void end_fault(const sim::FaultSpec& spec) {
    if (spec.kind == "keeper_backlog") keeper_.set_degradation(sim_.now(), 1.0, 0.0);
  }

  // Capacity figures (metrics.h): rates per second of simulated time.
  void collect_capacity(std::map<std::string, double>& v) {
    const double seconds = sim_.now().as_seconds();
    const auto& t = table_.counters();
    v["inserts_per_s"] = static_cast<double>(t.inserts) / seconds;
    v["parts_per_s"] = static_cast<double>(t.parts) / seconds;
    v["keeper_ops_per_s"] = static_cast<double>(keeper_.ops()) / seconds;
    const char* sources[] = {"inserts", "replication", "keeper_map", "cleanup"};
    for (int c = 0; c < static_cast<int>(keeper::KeeperClient::COUNT); ++c) {
      v[std::string("keeper_ops_by_source.") + sources[c]] =
          static_cast<double>(keeper_.ops(static_cast<keeper::KeeperClient>(c)));
    }
    v["keeper_mean_in_flight"] = keeper_.mean_in_flight(sim_.now());
    v["keeper_utilisation_peak"] = keeper_.peak_utilisation();
    v["keeper_latency_p50_ms"] = keeper_.latency_histogram().percentile(0.50) / 1000.0;
    v["keeper_latency_p99_ms"] = keeper_.latency_histogram().percentile(0.99) / 1000.0;
    v["insert_latency_p50_ms"] = table_.insert_latency_histogram().percentile(0.50) / 1000.0;
    v["insert_latency_p99_ms"] = table_.insert_latency_histogram().percentile(0.99) / 1000.0;
    v["replication_lag_p99_ms"] = table_.replication_lag_histogram().percentile(0.99) / 1000.0;
    for (int a = 0; a < static_cast<int>(clickhouse::QueryStatus::COUNT); ++a) {
      v["insert_answers." + std::string(clickhouse::to_string(static_cast<clickhouse::QueryStatus>(a)))] =
          static_cast<double>(t.answers[a]);
    }
    v["keeper_map_queries"] = static_cast<double>(t.keeper_map_queries);
    v["keeper_map_failures"] = static_cast<double>(t.keeper_map_failures);
    v["redeliveries"] = static_cast<double>(cluster_.counters().redeliveries);
    v["insert_keeper_retries"] = static_cast<double>(t.keeper_retries);
    v["block_ids_removed"] = static_cast<double>(t.block_ids_removed);
  }

  void on_append(int p) {
    const auto& log = logs_[static_cast<std::size_t>(p)];
    max_lag_ = std::max(max_lag_, log.log_end_offset() - cluster_.group().committed(p));
    cluster_.on_data(p);
  }

  sim::Metrics collect() {
    const ledger::Settlement s = ledger_.settle();
    std::map<std::string, double> v;
    v["records_produced"] = static_cast<double>(s.produced);
    v["kafka_records"] = static_cast<double>(producer_.counters().kafka_records);
    v["clickhouse_rows"] = static_cast<double>(s.rows);
    v["duplicate_rows"] = static_cast<double>(s.duplicate_rows);
    for (int e = 0; e < static_cast<int>(ledger::EntryPoint::COUNT); ++e) {
      v["duplicate_rows_by_entry." + std::string(ledger::to_string(static_cast<ledger::EntryPoint>(e)))] =
          static_cast<double>(s.duplicates_by_entry[static_cast<std::size_t>(e)]);
    }
    v["lost_records"] = static_cast<double>(s.lost);
    for (int c = 0; c < static_cast<int>(ledger::LossCause::COUNT); ++c) {
      v["lost_records_by_cause." + std::string(ledger::to_string(static_cast<ledger::LossCause>(c)))] =
          static_cast<double>(s.lost_by_cause[static_cast<std::size_t>(c)]);
    }
    v["pending_records"] = static_cast<double>(s.pending);
    v["dlq_records_in_clickhouse"] = static_cast<double>(s.dlq_records_in_clickhouse);
    v["dlq_records_missing"] = static_cast<double>(s.dlq_records_missing);
    v["state_mismatch_throws"] = static_cast<double>(sink_counters_.state_mismatch_throws);
    v["state_contains_throws"] = static_cast<double>(sink_counters_.state_contains_throws);
    v["error_state_throws"] = static_cast<double>(sink_counters_.error_state_throws);
    const char* states[] = {"BEFORE_PROCESSING", "AFTER_PROCESSING"};
    for (std::size_t st = 0; st < 2; ++st) {
      for (std::size_t r = 0; r < 7; ++r) {
        v[std::string("classifications.") + states[st] + "." +
          std::string(sink::to_string(static_cast<sink::RangeState>(r)))] =
            static_cast<double>(sink_counters_.classifications[st][r]);
      }
    }
    v["task_failures"] = static_cast<double>(cluster_.counters().failures);
    v["task_downtime_s"] = cluster_.downtime(sim_.now()).as_seconds();
    v["max_lag_records"] = static_cast<double>(max_lag_);
    v["keeper_ops"] = static_cast<double>(keeper_.ops());
    v["keeper_peak_in_flight"] = keeper_.peak_in_flight();
    v["inserts"] = static_cast<double>(table_.counters().inserts);
    v["dedup_hits"] = static_cast<double>(table_.counters().dedup_hits);
    // SELECT ... FINAL on a ReplacingMergeTree folds rows with the same
    // sorting key (the business key) within a table partition; copies in
    // different partitions (clickhouse.partition_by = insert_day) stay. A
    // plain MergeTree folds nothing.
    v["final_duplicate_rows"] = static_cast<double>(
        config_.clickhouse.engine == "ReplacingMergeTree" ? s.final_duplicate_rows : s.duplicate_rows);
    for (const auto& kind : fault_kinds()) v["faults_fired." + kind] = static_cast<double>(faults_fired_[kind]);
    v["events_processed"] = static_cast<double>(sim_.events_processed());
    collect_capacity(v);

    sim::Metrics out;
    out.reserve(metric_names().size());
    for (const auto& name : metric_names()) {
      const auto it = v.find(name);
      PIPESIM_INVARIANT(it != v.end(), "metric not produced: " + name);
      out.push_back({name, it->second});
    }
    return out;
  }

  const Config& config_;
  std::uint64_t seed_;
  int partitions_;
  sim::Simulation sim_;
  Topology topology_;
  std::vector<broker::PartitionLog> logs_;
  ledger::Ledger ledger_;
  keeper::Keeper keeper_;
  clickhouse::ReplicatedTable table_;
  workload::Workload workload_;
  sink::SinkCounters sink_counters_;
  sink::SinkDependencies deps_;
  connect::ConnectCluster cluster_;
  producer::Producer producer_;
  sim::ComponentId id_;
  std::vector<sim::FaultOccurrence> schedule_;
  std::map<std::string, std::int64_t> faults_fired_;
  std::int64_t max_lag_ = 0;
};

}  // namespace

sim::Metrics run_scenario(const Config& config, std::uint64_t seed) {
  auto run = std::make_unique<Run>(config, seed);
  return run->execute();
}

}  // namespace pipesim::pipeline
