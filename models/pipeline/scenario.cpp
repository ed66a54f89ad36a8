#include "models/pipeline/scenario.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "models/broker/kafka_cluster.h"
#include "models/broker/partition_log.h"
#include "models/clickhouse/keeper_map_table.h"
#include "models/clickhouse/table.h"
#include "models/connect/connect_cluster.h"
#include "models/keeper/keeper.h"
#include "models/ledger/ledger.h"
#include "models/pipeline/consumer_view.h"
#include "models/pipeline/disruption_episodes.h"
#include "models/pipeline/fault_timeline.h"
#include "models/pipeline/metrics.h"
#include "models/pipeline/regime.h"
#include "models/pipeline/sink_aggregate.h"
#include "models/pipeline/topology.h"
#include "models/producer/application.h"
#include "models/producer/direct_feed.h"
#include "models/producer/producer.h"
#include "models/sink/sink_counters.h"
#include "models/workload/workload.h"
#include "sim/config/duration.h"
#include "sim/engine/fault_schedule.h"
#include "sim/engine/simulation.h"

namespace pipesim::pipeline {
namespace {

// The table's parts are sized by the workload's records.
clickhouse::ClickHouseOptions with_row_bytes(clickhouse::ClickHouseOptions options,
                                             std::int64_t record_bytes) {
  options.row_bytes = record_bytes;
  return options;
}

// Everything of one run; lives on the stack of run_scenario.
class Run final : public sim::Component, public broker::ClusterListener {
 public:
  Run(const Config& c, std::uint64_t seed)
      : config_(c),
        seed_(seed),
        partitions_(static_cast<int>(c.kafka.num_partitions)),
        topology_(c),
        logs_(static_cast<std::size_t>(partitions_),
              broker::PartitionLog(c.kafka.log_segment_bytes / c.workload.record_bytes)),
        ledger_(partitions_),
        keeper_(c.keeper, seed),
        table_(sim_, with_row_bytes(c.clickhouse, c.workload.record_bytes), logs_, ledger_, keeper_,
               seed),
        keeper_map_(sim_, c.clickhouse, table_, keeper_, seed),
        workload_(c.workload, partitions_, seed,
                  static_cast<int>(c.run.start.us / sim::Time::hours(1).us)),
        deps_{&c.connector, &table_, &keeper_map_, &ledger_, &logs_, &sink_counters_},
        kafka_(sim_, c.kafka, logs_, ledger_),
        producer_(sim_, c.producer, c.producer.enable_idempotence, partitions_,
                  c.workload.record_bytes, kafka_, topology_.round_trip("producer", "broker-0"),
                  seed),
        app_(c.app, workload_, ledger_, producer_),
        feed_(workload_, ledger_, kafka_, logs_, producer_,
              sim::Time{topology_.round_trip("producer", "broker-0").us / 2}),
        view_(sim_, kafka_, logs_, feed_),
        cluster_(sim_, c.connect, c.operator_options, c.connector.name, partitions_,
                 fetch_settings(c), view_, deps_, c.connector.exactly_once, seed),
        regime_(sim_, c.run.exact,
                (c.kafka.replication_latency + topology_.round_trip("producer", "broker-0")) * 4,
                c.connect.offset_flush_interval + sim::Time::seconds(2),
                Regime::producer_capacity(
                    producer_.records_per_batch(), topology_.round_trip("producer", "broker-0"),
                    (c.producer.acks == "all" || c.producer.acks == "-1") &&
                            c.kafka.replication_factor > 1
                        ? c.kafka.replication_latency
                        : sim::Time{},
                    c.producer.max_in_flight_requests_per_connection, c.producer.acks == "0"),
                seed,
                Regime::Parts{producer_, feed_, kafka_, cluster_, table_, keeper_, workload_}),
        aggregate_(sim_,
                   SinkAggregate::Parts{c, cluster_, table_, keeper_, ledger_, logs_, workload_,
                                        feed_, kafka_, sink_counters_, fetch_settings(c)}),
        id_(sim_.add_component(this)) {
    kafka_.set_listener(this);
    cluster_.set_group_coordinator(
        &view_, connect::ConsumerGroup::offsets_partition_for(
                    "connect-" + c.connector.name, c.kafka.offsets_topic_num_partitions));
    regime_.set_sink_aggregate(&aggregate_);
    aggregate_.set_regime(&regime_);
  }

  void set_trace(sim::Trace* trace) { sim_.set_trace(trace); }
  [[nodiscard]] std::vector<ledger::FateGroup>& groups() { return groups_; }

  sim::Metrics execute() {
    const sim::Time end_of_faults = config_.run.duration;
    schedule_ = fault_schedule(config_, seed_);
    for (std::size_t i = 0; i < schedule_.size(); ++i) {
      sim_.schedule(schedule_[i].at, id_, kFaultStart, static_cast<std::uint32_t>(i));
    }
    table_.start();
    cluster_.start();
    kafka_.start(end_of_faults + config_.run.drain);
    app_.start(end_of_faults);
    regime_.plan(schedule_, config_.faults);
    regime_.start();
    sim_.schedule(kHousekeeping, id_, kTidy);
    sim_.run_until(end_of_faults + config_.run.drain);
    feed_.materialize(sim_.now());
    aggregate_.finish(sim_.now());
    return collect();
  }

  void handle(const sim::Event& e) override {
    if (e.type == kTidy) {
      // The direct feed is written at least this often, so that no arrival
      // instant older than two minutes is ever asked for again.
      for (int p = 0; p < partitions_; ++p) feed_.materialize_coarse(p, sim_.now());
      // So do the producer's accumulator and the consumers' pending fetches
      // (answers due by now are settled: the same answers, only earlier).
      producer_.take_arrivals(sim_.now());
      cluster_.before_view_change();
      aggregate_.count_before_forgetting(sim_.now() - kHousekeeping * 2, sim_.now());
      workload_.forget_before(sim_.now() - kHousekeeping * 2);
      sim_.schedule_in(kHousekeeping, id_, kTidy);
      return;
    }
    const sim::FaultOccurrence& f = schedule_[e.arg];
    const sim::FaultSpec& spec = config_.faults[f.spec];
    if (e.type == kFlap) {
      flap(spec, f, e.arg);
      return;
    }
    if (e.type == kFaultEnd) {
      end_fault(spec);
      return;
    }
    ++faults_fired_[spec.kind];
    if (auto* t = sim_.trace()) trace_fault(*t, spec, f);
    if (spec.kind == "worker_crash") {
      episodes_.begin(DisruptionEpisodes::CRASH, sink_counters_, cluster_.counters().failures,
                      cluster_.healthy());
      count_crash_states();
    }
    if (spec.kind == "rebalance" || spec.kind == "task_restart") {
      episodes_.begin(DisruptionEpisodes::REBALANCE, sink_counters_, cluster_.counters().failures,
                      cluster_.healthy());
    }
    start_fault(spec, f, e.arg);
    if (f.duration.us > 0) sim_.schedule_in(f.duration, id_, kFaultEnd, e.arg);
  }

  // exactlyOnce: what a worker crash leaves in the KeeperMap state of each
  // partition that has one: the stored row, or the row a write already sent
  // will store (the server applies it whatever becomes of the task).
  // AFTER_PROCESSING is what a replay meets as State MISMATCH (VALIDATION.md).
  void count_crash_states() {
    if (!config_.connector.exactly_once) return;
    const sink::SinkStateStore& state = cluster_.keeper_map_state();
    for (int p = 0; p < partitions_; ++p) {
      sink::ProcessingState s = state.get(p).state;
      if (const auto* row = keeper_map_.pending_write(p))
        s = static_cast<sink::ProcessingState>(row->state);
      if (s == sink::ProcessingState::NONE) continue;
      ++crash_states_;
      if (s == sink::ProcessingState::AFTER_PROCESSING) ++crash_states_after_;
    }
  }

  // broker::ClusterListener
  void before_change() override {
    feed_.materialize(sim_.now());
    producer_.run_sender();
  }
  void leader_elected(int partition) override { cluster_.on_leader(partition); }
  void change_planned(sim::Time at) override {
    regime_.producer_window(at - regime_.producer_preroll(), at);
  }
  void leadership_moved(int partition, int old_leader) override {
    producer_.leadership_moved(partition, old_leader);
  }
  void broker_died(int broker) override { producer_.broker_died(broker); }
  void isr_shrunk(int partition) override { producer_.isr_shrunk(partition); }
  void records_visible(int partition) override { on_append(partition); }
  void log_truncated(int partition, std::int64_t new_end,
                     const std::vector<broker::IdPiece>& removed) override {
    // Acknowledged records the new leader lacks are lost (acks=1, unclean
    // election); the producer still owns the others and retries them.
    for (const auto& piece : removed) {
      rest_.clear();
      producer_.unowned_ids(partition, piece.ids, rest_);
      for (const auto& ids : rest_)
        ledger_.record_mark(partition, ids, ledger::LossCause::KAFKA_TRUNCATED);
    }
    cluster_.on_log_truncated(partition, new_end);
  }

 private:
  enum EventType : std::uint32_t { kFaultStart = 1, kFaultEnd = 2, kTidy = 3, kFlap = 4 };
  static constexpr sim::Time kHousekeeping = sim::Time::minutes(1);

  void flap(const sim::FaultSpec& spec, const sim::FaultOccurrence& f, std::uint32_t index) {
    // leader_flapping: every `period` of the window the leaders move again.
    if (sim_.now() >= f.at + f.duration) return;
    const bool controlled = spec.params.value("controlled", true);
    for (const int p : fault_partitions(spec.params, partitions_))
      kafka_.change_leader(p, controlled, sim::Time{});
    producer_.run_sender();
    const auto period = sim::parse_duration(spec.params.value("period", std::string("20s")));
    sim_.schedule_in(period ? *period : sim::Time::seconds(20), id_, kFlap, index);
  }

  void start_fault(const sim::FaultSpec& spec, const sim::FaultOccurrence& f, std::uint32_t index) {
    const std::string& k = spec.kind;
    if (k == "leader_change") {
      const bool controlled = spec.params.value("controlled", true);
      for (const int p : fault_partitions(spec.params, partitions_))
        kafka_.change_leader(p, controlled, f.duration);
      producer_.run_sender();
    } else if (k == "leader_flapping") {
      flap(spec, f, index);
    } else if (k == "response_loss") {
      producer_.add_response_loss(response_loss_window(spec, sim_.now(), sim_.now() + f.duration));
    } else if (k == "broker_crash") {
      kafka_.crash_broker(fault_target_index(f.target), f.duration);
      producer_.run_sender();
    } else if (k == "producer_restart") {
      producer_.run_sender();
      producer_.restart();
      producer_.run_sender();
    } else if (k == "manual_resend") {
      producer_.run_sender();
      app_.manual_resend(spec.params.value("resend_policy", config_.app.resend_policy));
    } else if (k == "worker_crash") {
      cluster_.kill_worker(fault_target_index(f.target));
    } else if (k == "task_restart") {
      cluster_.restart_task(fault_target_index(f.target));
    } else if (k == "rebalance") {
      cluster_.rebalance(spec.params.value("max.poll.records", std::int64_t{0}));
    } else if (k == "insert_timeout") {
      // The server hangs for the window (at least past the client timeout).
      const sim::Time window = f.duration.us > 0
                                   ? f.duration
                                   : config_.connector.socket_timeout + sim::Time::seconds(10);
      // Without a target the whole table hangs; with "replica-N" only the
      // inserts routed to that replica (the others go on).
      table_.stall(sim_.now() + window, spec.params.value("server_commits", 1.0),
                   f.target.empty() ? -1 : fault_target_index(f.target));
    } else if (k == "keeper_backlog") {
      // A drop of capacity and/or a named client of its own threads.
      keeper::ExtraClient extra{spec.params.value("extra_client", std::string("extra")),
                                spec.params.value("extra_clients", std::int64_t{0}), sim::Time{0}};
      if (spec.params.contains("extra_client_think"))
        extra.think = sim::parse_duration(spec.params["extra_client_think"].get<std::string>())
                          .value_or(sim::Time{0});
      keeper_.set_degradation(sim_.now(), spec.params.value("capacity_factor", 0.25), extra);
      table_.watch_keeper();  // a deep enough backlog ends every session
    } else if (k == "keeper_election") {
      // No leader for the window (Raft election timeout 1-2 s by default).
      const sim::Time window = f.duration.us > 0 ? f.duration : sim::Time::seconds(2);
      table_.keeper_election(sim_.now() + window, spec.params.value("commit_applied", 0.5));
    } else if (k == "keeper_stall") {
      // Keeper answers nothing for the window (a long fsync, a GC pause).
      table_.keeper_stall(sim_.now() + f.duration);
    } else if (k == "replica_crash") {
      // The server process (or host, with "hang") is down for the window.
      const sim::Time window = f.duration.us > 0 ? f.duration : sim::Time::seconds(60);
      table_.crash_replica(fault_target_index(f.target), sim_.now() + window,
                           spec.params.value("hang", false));
    } else if (k == "keeper_session_loss") {
      // The replica's Keeper session expired: read-only for the window (by
      // default one zookeeper_session_expiration_check_period).
      const sim::Time window =
          f.duration.us > 0
              ? f.duration
              : sim::Time::seconds(config_.clickhouse.zookeeper_session_expiration_check_period);
      table_.lose_session(fault_target_index(f.target), sim_.now() + window);
    } else if (k == "state_wipe") {
      cluster_.wipe_keeper_map_state();
    }
    // Other kinds are counted in faults_fired but not modelled yet
    // (faults_not_modelled()): reports say so.
  }

  void trace_fault(sim::Trace& t, const sim::FaultSpec& spec, const sim::FaultOccurrence& f) {
    std::string text = "fault " + spec.kind;
    if (!f.target.empty()) text += " on " + f.target;
    if (f.duration.us > 0) text += " for " + sim::format_duration(f.duration);
    for (const auto& [k, v] : spec.params.items()) text += ", " + k + "=" + v.dump();
    nlohmann::json args = {{"target", f.target}};
    for (const auto& [k, v] : spec.params.items()) args[k] = v;
    t.story(sim_.now(), "faults", spec.kind, text, args);
    // A span on the target's own track while it is down or degraded (a
    // killed worker: until its process is back, connect.worker_restart_delay).
    const sim::Time down = spec.kind == "worker_crash" && f.duration.us == 0
                               ? config_.connect.worker_restart_delay
                               : f.duration;
    if (down.us > 0) {
      t.span(sim_.now(), down, f.target.empty() ? std::string("faults") : "faults on " + f.target,
             spec.kind, args);
    }
  }

  void end_fault(const sim::FaultSpec& spec) {
    if (spec.kind == "keeper_backlog") {
      keeper_.set_degradation(sim_.now(), 1.0, keeper::ExtraClient{});
      table_.watch_keeper();
    }
    if (spec.kind == "response_loss") producer_.run_sender();  // the window knew its end
  }

  // Keeper's in-flight requests as a dashboard scraping every
  // keeper.sample_interval shows them: the mean, p99 (nearest rank) and
  // largest of its readings; a reading falls between bursts as often as the
  // bursts' share of the time, so its max is far below the true peak.
  void collect_dashboard(std::map<std::string, double>& v) {
    const keeper::Keeper::Readings& r = keeper_.in_flight_readings(sim_.now());
    v["keeper_in_flight_sampled_mean"] = r.count > 0 ? r.sum / static_cast<double>(r.count) : 0.0;
    // Within the histogram's 3%, and between the smallest and largest reading.
    v["keeper_in_flight_sampled_p99"] = std::clamp(r.milli.percentile(0.99) / 1000.0, r.min, r.max);
    v["keeper_in_flight_sampled_max"] = r.max;
    // The same per ClickHouse server (its ZooKeeperRequest): the busiest
    // server's time-average, the highest any had, and every server's
    // readings pooled (one series per server on a dashboard).
    v["zookeeper_request_mean"] = keeper_.busiest_server_mean_in_flight(sim_.now());
    v["zookeeper_request_peak"] = keeper_.server_peak_in_flight();
    const keeper::Keeper::Readings& s = keeper_.server_readings(sim_.now());
    v["zookeeper_request_sampled_mean"] = s.count > 0 ? s.sum / static_cast<double>(s.count) : 0.0;
    v["zookeeper_request_sampled_p99"] =
        std::clamp(s.milli.percentile(0.99) / 1000.0, s.min, s.max);
    v["zookeeper_request_sampled_max"] = s.max;
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
    collect_dashboard(v);
    v["keeper_utilisation_peak"] = keeper_.peak_utilisation();
    v["keeper_latency_p50_ms"] = keeper_.latency_histogram().percentile(0.50) / 1000.0;
    v["keeper_latency_p99_ms"] = keeper_.latency_histogram().percentile(0.99) / 1000.0;
    v["insert_latency_p50_ms"] = table_.insert_latency_histogram().percentile(0.50) / 1000.0;
    v["insert_latency_p99_ms"] = table_.insert_latency_histogram().percentile(0.99) / 1000.0;
    v["replication_lag_p99_ms"] = table_.replication_lag_histogram().percentile(0.99) / 1000.0;
    for (int a = 0; a < static_cast<int>(clickhouse::QueryStatus::COUNT); ++a) {
      v["insert_answers." +
        std::string(clickhouse::to_string(static_cast<clickhouse::QueryStatus>(a)))] =
          static_cast<double>(t.answers[a]);
    }
    v["keeper_map_queries"] =
        static_cast<double>(t.keeper_map_queries + keeper_map_.counters().queries);
    v["keeper_map_failures"] = static_cast<double>(keeper_map_.counters().failures);
    v["redeliveries"] = static_cast<double>(cluster_.counters().redeliveries);
    v["poll_timeouts"] = static_cast<double>(cluster_.counters().poll_timeouts);
    v["abandoned_stops"] = static_cast<double>(cluster_.counters().abandoned_stops);
    v["commit_failures"] = static_cast<double>(cluster_.counters().commit_failures);
    v["insert_keeper_retries"] = static_cast<double>(t.keeper_retries);
    v["keeper_sessions_expired"] = static_cast<double>(t.session_losses);
    v["keeper_restart_attempts"] = static_cast<double>(t.restart_attempts);
    v["replica_read_only_s"] = table_.read_only_seconds(sim_.now());
    v["block_ids_removed"] = static_cast<double>(t.block_ids_removed);
    v["active_parts_peak"] = static_cast<double>(table_.active_parts_peak());
    v["inserts_delayed"] = static_cast<double>(t.inserts_delayed);
    v["too_many_parts_errors"] = static_cast<double>(t.too_many_parts);
    v["merges"] = static_cast<double>(table_.merges());
  }

  void on_append(int p) {
    const auto& log = logs_[static_cast<std::size_t>(p)];
    if (auto* t = sim_.trace(); t && t->detail_at(sim_.now())) {
      const std::int64_t lag = log.high_watermark() - cluster_.group().committed(p);
      const std::string partition = "partition-" + std::to_string(p);
      t->instant(sim_.now(), "producer", "append",
                 {{"partition", p}, {"high_watermark", log.high_watermark()}});
      t->counter(sim_.now(), partition, "lag_records", static_cast<double>(lag));
    }
    cluster_.on_data(p);
  }

  sim::Metrics collect() {
    const ledger::Settlement s = ledger_.settle(sim_.trace() ? &groups_ : nullptr);
    std::map<std::string, double> v;
    v["records_produced"] = static_cast<double>(s.produced);
    v["kafka_records"] = static_cast<double>(kafka_.counters().appended_records -
                                             kafka_.counters().truncated_records);
    v["clickhouse_rows"] = static_cast<double>(s.rows);
    v["duplicate_rows"] = static_cast<double>(s.duplicate_rows);
    for (int e = 0; e < static_cast<int>(ledger::EntryPoint::COUNT); ++e) {
      v["duplicate_rows_by_entry." +
        std::string(ledger::to_string(static_cast<ledger::EntryPoint>(e)))] =
          static_cast<double>(s.duplicates_by_entry[static_cast<std::size_t>(e)]);
    }
    for (int path = 0; path < static_cast<int>(ledger::ProducerPath::COUNT); ++path) {
      const std::string name(ledger::to_string(static_cast<ledger::ProducerPath>(path)));
      v["producer_retry_by_path." + name] =
          static_cast<double>(s.producer_retry_by_path[static_cast<std::size_t>(path)]);
      v["producer_duplicates_also_failed." + name] =
          static_cast<double>(s.producer_duplicates_also_failed[static_cast<std::size_t>(path)]);
    }
    v["lost_records"] = static_cast<double>(s.lost);
    for (int c = 0; c < static_cast<int>(ledger::LossCause::COUNT); ++c) {
      v["lost_records_by_cause." +
        std::string(ledger::to_string(static_cast<ledger::LossCause>(c)))] =
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
    std::int64_t max_lag = cluster_.group().max_lag();
    for (int p = 0; p < partitions_; ++p) {
      max_lag = std::max(max_lag, logs_[static_cast<std::size_t>(p)].high_watermark() -
                                      cluster_.group().committed(p));
    }
    v["max_lag_records"] = static_cast<double>(max_lag);
    v["keeper_ops"] = static_cast<double>(keeper_.ops());
    // Keeper brought up to now first: the dashboard's readings since its
    // last request count towards its peak.
    (void)keeper_.in_flight(sim_.now());
    v["keeper_peak_in_flight"] = keeper_.peak_in_flight();
    v["inserts"] = static_cast<double>(table_.counters().inserts);
    v["dedup_hits"] = static_cast<double>(table_.counters().dedup_hits);
    // SELECT ... FINAL on a ReplacingMergeTree folds rows with the same
    // sorting key (the business key) within a table partition; copies in
    // different partitions (clickhouse.partition_by = insert_day) stay. A
    // plain MergeTree folds nothing.
    v["final_duplicate_rows"] = static_cast<double>(
        config_.clickhouse.engine == "ReplacingMergeTree" ? s.final_duplicate_rows
                                                          : s.duplicate_rows);
    v["producer_retried_records"] = static_cast<double>(producer_.counters().retried_records);
    v["producer_failed_records"] = static_cast<double>(producer_.counters().failed_records);
    v["producer_expired_records"] = static_cast<double>(producer_.counters().expired_records);
    v["producer_epoch_bumps"] = static_cast<double>(producer_.epoch_bumps());
    v["producer_not_enough_replicas_after_append"] =
        static_cast<double>(producer_.counters().not_enough_replicas_after_append);
    v["producer_late_failures"] = static_cast<double>(producer_.counters().late_failures);
    v["producer_late_answers"] = static_cast<double>(producer_.counters().late_answers);
    v["retry_table_records"] = static_cast<double>(app_.retry_table_records());
    v["leader_elections"] = static_cast<double>(kafka_.counters().leader_elections);
    v["kafka_truncated_records"] = static_cast<double>(kafka_.counters().truncated_records);
    for (const auto& kind : fault_kinds())
      v["faults_fired." + kind] = static_cast<double>(faults_fired_[kind]);
    v["events_processed"] = static_cast<double>(sim_.events_processed());
    v["aggregate_task_s"] = aggregate_.counters().task_seconds;
    v["aggregate_lagging_task_s"] = aggregate_.counters().lagging_task_seconds;
    episodes_.close(sink_counters_, cluster_.counters().failures);
    v["crash_states"] = static_cast<double>(crash_states_);
    v["crash_states_after_processing"] = static_cast<double>(crash_states_after_);
    const char* episode_kinds[] = {"crash", "rebalance"};
    const char* endings[] = {"", "_state_mismatch", "_state_contains", "_error_state", "_stopped"};
    for (int k = 0; k < 2; ++k) {
      const auto& c = episodes_.counts(static_cast<DisruptionEpisodes::Kind>(k));
      for (std::size_t i = 0; i < 5; ++i) {
        v[std::string(episode_kinds[k]) + "_episodes" + endings[i]] = static_cast<double>(c[i]);
      }
    }
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
  clickhouse::KeeperMapTable keeper_map_;
  workload::Workload workload_;
  sink::SinkCounters sink_counters_;
  sink::SinkDependencies deps_;
  broker::KafkaCluster kafka_;
  producer::Producer producer_;
  producer::Application app_;
  producer::DirectFeed feed_;
  ConsumerView view_;
  connect::ConnectCluster cluster_;
  Regime regime_;
  SinkAggregate aggregate_;
  sim::ComponentId id_;
  std::vector<sim::FaultOccurrence> schedule_;
  std::vector<ledger::IdRange> rest_;  // scratch
  std::map<std::string, std::int64_t> faults_fired_;
  DisruptionEpisodes episodes_;
  std::int64_t crash_states_ = 0;        // partitions with a state at worker crashes
  std::int64_t crash_states_after_ = 0;  // ... AFTER_PROCESSING
  std::vector<ledger::FateGroup> groups_;
};

}  // namespace

sim::Metrics run_scenario(const Config& config, std::uint64_t seed) {
  auto run = std::make_unique<Run>(config, seed);
  return run->execute();
}

TracedRun run_scenario_traced(const Config& config, std::uint64_t seed, sim::Trace& trace) {
  auto run = std::make_unique<Run>(config, seed);
  run->set_trace(&trace);
  TracedRun result;
  result.metrics = run->execute();
  result.groups = std::move(run->groups());
  return result;
}

}  // namespace pipesim::pipeline
