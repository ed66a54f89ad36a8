// The shortcuts (the direct feed, the sink's aggregate stretches) against
// the event-by-event path (run.exact=true) on the same seeds: a grid of
// configs with every fault kind, low and high rates, exactlyOnce off and
// on, small dedup windows. Every estimate of one path must lie within the
// 95% interval of the other (the wider of the two), and every lab config's
// outcome must be identical both ways.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "metric_lookup.h"
#include "lab_run.h"
#include "models/pipeline/config.h"
#include "models/pipeline/scenario.h"
#include "sim/experiment/statistics.h"

namespace pipesim::pipeline {
namespace {

using nlohmann::json;

// The estimates a user reads off a run (docs/model.md §9 names).
const std::vector<std::string>& compared() {
  static const std::vector<std::string> names = {
      "records_produced",       "clickhouse_rows",      "duplicate_rows",         "lost_records",
      "state_mismatch_throws",  "state_contains_throws", "error_state_throws",    "task_failures",
      "dedup_hits",             "redeliveries",          "kafka_truncated_records", "producer_retried_records",
      "producer_failed_records", "inserts",              "keeper_ops"};
  return names;
}

using test_support::metric;

// A Poisson fault of `kind`, `per_day` a day, with its parameters.
json fault(const std::string& kind, double per_day, json params = json::object()) {
  params["kind"] = kind;
  params["rate_per_day"] = per_day;
  return params;
}

json config(const std::string& group, double records_per_s, bool exactly_once) {
  json raw = json::object();
  raw["run"] = {{"duration", "30m"}, {"drain", "10m"}};
  raw["workload"] = {{"profile", "constant"},
                     {"records_per_day", static_cast<std::int64_t>(records_per_s * 86400)}};
  raw["kafka"] = {{"num.partitions", 4}};
  raw["connect"] = {{"tasks.max", 4}, {"offset.flush.interval.ms", 10000}};
  raw["connector"] = {{"exactlyOnce", exactly_once}};
  // A small window: redeliveries and replays find their blocks pushed out.
  raw["clickhouse"] = {{"replicated_deduplication_window", 20}};
  const double n = 24;  // of each kind a day: 2-3 faults in a run, quiet stretches between
  if (group == "kafka") {
    raw["producer"] = {{"acks", "1"}, {"enable.idempotence", false}};
    raw["app"] = {{"on_send_failure", "retry_table"}};
    raw["faults"] = json::array({fault("leader_change", n, {{"duration", "30s"}}),
                                 fault("leader_flapping", n, {{"duration", "2m"}}),
                                 fault("response_loss", n, {{"duration", "2s"}}),
                                 fault("broker_crash", n, {{"duration", "1m"}}),
                                 fault("producer_restart", n), fault("manual_resend", n)});
  } else if (group == "connect") {
    raw["faults"] = json::array({fault("worker_crash", n), fault("task_restart", n),
                                 fault("rebalance", n, {{"max.poll.records", 200}}), fault("state_wipe", n)});
  } else {
    raw["faults"] = json::array(
        {fault("insert_timeout", n, {{"duration", "40s"}, {"server_commits", 0.5}}),
         fault("replica_crash", n, {{"duration", "1m"}}),
         fault("keeper_backlog", n, {{"duration", "1m"}, {"capacity_factor", 0.3}}),
         fault("keeper_election", n, {{"duration", "3s"}}),
         fault("keeper_session_loss", n, {{"duration", "30s"}}),
         fault("keeper_stall", n, {{"duration", "15s"}})});
  }
  return raw;
}

std::vector<sim::Metrics> runs(json raw, bool exact, int seeds) {
  raw["run"]["exact"] = exact;
  const Config c = load_config(raw);
  std::vector<sim::Metrics> out;
  for (int s = 1; s <= seeds; ++s) out.push_back(run_scenario(c, static_cast<std::uint64_t>(s)));
  return out;
}

// What the shortcut path must have exercised.
enum class Aggregates { kMaybe, kYes, kLagging };

void expect_agreement(const json& raw, int seeds, Aggregates sink = Aggregates::kMaybe) {
  const auto shortcut = runs(raw, false, seeds);
  const auto exact = runs(raw, true, seeds);
  // run.exact=true turns the sink's aggregate off; at 1,000 records/s the
  // stretches between faults (minutes, 10^5 records) go in aggregate.
  double aggregated = 0;
  double lagging = 0;
  for (const auto& m : shortcut) {
    aggregated += metric(m, "aggregate_task_s");
    lagging += metric(m, "aggregate_lagging_task_s");
  }
  for (const auto& m : exact) {
    EXPECT_EQ(metric(m, "aggregate_task_s"), 0);
    EXPECT_EQ(metric(m, "aggregate_lagging_task_s"), 0);
  }
  if (sink != Aggregates::kMaybe) {
    EXPECT_GT(aggregated, 0) << "the grid must exercise the sink's aggregate";
  }
  if (sink == Aggregates::kLagging) {
    EXPECT_GT(lagging, 0) << "the grid must exercise the sink's lagging aggregate";
  }
  for (const auto& name : compared()) {
    std::vector<double> a, b;
    for (const auto& m : shortcut) a.push_back(metric(m, name));
    for (const auto& m : exact) b.push_back(metric(m, name));
    const sim::SummaryStats sa = sim::summarize(a), sb = sim::summarize(b);
    const double half = std::max(sa.ci_hi - sa.ci_lo, sb.ci_hi - sb.ci_lo) / 2;
    EXPECT_LE(std::abs(sa.mean - sb.mean), half + 1e-9 * std::abs(sb.mean))
        << name << ": shortcut " << sa.mean << " [" << sa.ci_lo << ", " << sa.ci_hi << "], exact " << sb.mean
        << " [" << sb.ci_lo << ", " << sb.ci_hi << "]";
  }
}

// Four seeds of each path (the exact path costs far more than the shortcut): each estimate must
// lie within the wider of the two intervals.
constexpr int kSeeds = 4;

TEST(ShortcutAgreement, CoversEveryFaultKind) {
  std::set<std::string> seen;
  for (const char* g : {"kafka", "connect", "clickhouse"}) {
    const json raw = config(g, 100, false);
    for (const auto& f : raw["faults"]) seen.insert(f["kind"].get<std::string>());
  }
  for (const auto& k : fault_kinds()) EXPECT_TRUE(seen.count(k)) << k;
}

TEST(ShortcutAgreement, KafkaFaultsLowRate) { expect_agreement(config("kafka", 100, false), kSeeds); }
TEST(ShortcutAgreement, KafkaFaultsHighRateExactlyOnce) {
  expect_agreement(config("kafka", 1000, true), kSeeds, Aggregates::kYes);
}
TEST(ShortcutAgreement, ConnectFaultsLowRateExactlyOnce) { expect_agreement(config("connect", 100, true), kSeeds); }
TEST(ShortcutAgreement, ConnectFaultsHighRate) {
  expect_agreement(config("connect", 1000, false), kSeeds, Aggregates::kYes);
}
TEST(ShortcutAgreement, ClickHouseFaultsLowRate) { expect_agreement(config("clickhouse", 100, false), kSeeds); }
TEST(ShortcutAgreement, ClickHouseFaultsHighRateExactlyOnce) {
  expect_agreement(config("clickhouse", 1000, true), kSeeds, Aggregates::kYes);
}

// Catch-ups: max.poll.records 20 and inserts of ~0.5 s make a task put ~40
// records/s, so at 45 records/s a partition the tasks lag throughout (their
// polls full, the lag growing) and a rebalance to max.poll.records 200 lets
// them catch up; at 36 a crash's backlog is read back over minutes. (Few
// records: the exact path costs a few events per record, the lagging
// aggregate almost none.)
json catch_up_config(const std::string& group, double records_per_s_per_partition,
                     bool exactly_once) {
  json raw = config(group, records_per_s_per_partition * 4, exactly_once);
  raw["connect"]["max.poll.records"] = 20;
  raw["clickhouse"]["insert_base_latency"] = "500ms";
  return raw;
}

TEST(ShortcutAgreement, CatchUpsConnectFaultsExactlyOnce) {
  expect_agreement(catch_up_config("connect", 45, true), kSeeds, Aggregates::kLagging);
}
TEST(ShortcutAgreement, CatchUpsNearCapacityConnectFaults) {
  // Crashes only (a rebalance to max.poll.records 200 would end the lag):
  // each leaves a backlog of ~5,000 a partition, read back at ~4 records/s net.
  json raw = catch_up_config("connect", 36, false);
  raw["connect"]["worker_restart_delay"] = "2m";
  raw["faults"] = json::array({fault("worker_crash", 72), fault("task_restart", 24)});
  expect_agreement(raw, kSeeds, Aggregates::kLagging);
}
TEST(ShortcutAgreement, CatchUpsKafkaFaults) {
  expect_agreement(catch_up_config("kafka", 45, false), kSeeds, Aggregates::kLagging);
}
TEST(ShortcutAgreement, CatchUpsClickHouseFaultsExactlyOnce) {
  expect_agreement(catch_up_config("clickhouse", 45, true), kSeeds, Aggregates::kLagging);
}

TEST(ShortcutAgreement, KeeperInFlightAndActivePartsOfACaughtUpSink) {
  // The production baseline's first hour, no faults: the shortcut counts
  // this pipeline's Keeper requests through the threads they ride with (the
  // folded away time, Little's law at the operating point), the exact path
  // each request for its time in Keeper; both hold the background's ~10.3.
  // The parts of an aggregate stretch are the steady state of Poisson
  // inserts at its rate, the exact path's come from the 8 tasks' real
  // inserts: the same merge model fed differently (a declared shortcut).
  // Most of the in flight is the cleanup threads' bursts (each replica's
  // ~12,000 outdated parts' removes, then its block ids', every ~30 s), and
  // how often two replicas' bursts meet depends on the phases the two paths
  // reach by different event orders: a few percent either way per seed.
  json raw = json::object();
  raw["run"] = {{"duration", "1h"}, {"drain", "1m"}};
  raw["faults"] = json::array();
  const auto shortcut = runs(raw, false, 2);
  const auto exact = runs(raw, true, 2);
  for (int s = 0; s < 2; ++s) {
    const double a = metric(shortcut[static_cast<std::size_t>(s)], "keeper_mean_in_flight");
    const double b = metric(exact[static_cast<std::size_t>(s)], "keeper_mean_in_flight");
    EXPECT_GT(b, 10.33 + 3) << "the exact path counts this pipeline's own requests too";
    EXPECT_NEAR(a, b, 0.05 * b) << "seed " << s + 1;
    const double pa = metric(shortcut[static_cast<std::size_t>(s)], "active_parts_peak");
    const double pb = metric(exact[static_cast<std::size_t>(s)], "active_parts_peak");
    EXPECT_NEAR(pa, pb, 0.2 * pb) << "seed " << s + 1;
    EXPECT_LT(pb, 1000) << "far from parts_to_delay_insert";
    // A part reaches the other replicas after the fetch's Keeper requests at
    // Keeper's usual pace: the shortcut prices a stretch's parts with the
    // regime's time, not with the instant it is counted at (often a cleanup
    // thread's burst: that gave a p99 of ~240 ms against the exact ~27 ms).
    const double la = metric(shortcut[static_cast<std::size_t>(s)], "replication_lag_p99_ms");
    const double lb = metric(exact[static_cast<std::size_t>(s)], "replication_lag_p99_ms");
    EXPECT_NEAR(la, lb, 0.2 * lb) << "seed " << s + 1;
  }
}

TEST(ShortcutAgreement, ADashboardsScrapesMeetTheAggregatesCleanupBurstsAtTheirShare) {
  // A scrape every 15 s at instants that know nothing of the bursts: the
  // mean of its readings estimates the time average of what is in flight.
  // The aggregate's wake-up checks wait for the commit that calls them, as
  // the exact path's do; on an exact cleanup_delay_period / 4 lattice the
  // bursts kept one phase against the scrapes for hours: these three seeds'
  // readings averaged 479, 180 and 163 against time averages of 267-269.
  // Six hours hold ~30 scrapes inside bursts each (+-20%).
  json raw = json::object();
  raw["run"] = {{"duration", "6h"}, {"drain", "1m"}};
  raw["faults"] = json::array();
  for (const auto& m : runs(raw, false, 3)) {
    const double sampled = metric(m, "keeper_in_flight_sampled_mean");
    const double mean = metric(m, "keeper_mean_in_flight");
    EXPECT_GT(mean, 100) << "the bursts hold most of what is in flight";
    EXPECT_NEAR(sampled, mean, 0.3 * mean);
  }
}

// The figures of a stretch in aggregate that are the steady state's, not the
// realized puts': its rates (inserts, parts, merges, Keeper's requests), the
// lag it keeps, Keeper's in flight and latencies, and the dashboards' 15 s
// readings (whether one meets a cleanup burst of milliseconds is a matter of
// phase at a lab's rates). The grid above holds them to the exact path's
// intervals; the dashboard tests hold the readings at production rates.
bool load_figure(const std::string& name) {
  static const std::vector<std::string> exact_names = {
      "inserts",          "inserts_per_s",         "parts_per_s",       "insert_answers.ok",
      "merges",           "block_ids_removed",     "active_parts_peak", "max_lag_records",
      "keeper_ops",       "keeper_ops_per_s",      "keeper_map_queries", "keeper_peak_in_flight",
      "keeper_mean_in_flight", "keeper_utilisation_peak", "insert_latency_p50_ms",
      "insert_latency_p99_ms", "replication_lag_p99_ms", "classifications.AFTER_PROCESSING.NEW",
      "classifications.BEFORE_PROCESSING.NEW"};
  static const std::vector<std::string> prefixes = {"keeper_ops_by_source.", "keeper_in_flight_sampled_",
                                                    "zookeeper_request_", "keeper_latency_"};
  if (std::find(exact_names.begin(), exact_names.end(), name) != exact_names.end()) return true;
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](const std::string& p) { return name.rfind(p, 0) == 0; });
}

// Every lab config, both ways: a lab that runs event by event throughout is
// identical metric by metric (only the count of events may differ); one
// whose tail after its fault is long enough goes on in aggregate there, and
// its outcome (every figure but the load figures above) is still identical,
// its inserts and Keeper requests within 10% (a wrong rate would be off by a
// factor; the steady cycle's error at a lab's rates is ~2%).
TEST(ShortcutAgreement, EveryLabIsIdenticalBothWays) {
  const char* root = std::getenv("PIPESIM_SOURCE_DIR");
  const std::filesystem::path dir = std::filesystem::path(root ? root : ".") / "configs" / "lab";
  std::vector<std::filesystem::path> labs;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".json") labs.push_back(e.path());
  }
  std::sort(labs.begin(), labs.end());
  ASSERT_GE(labs.size(), 40u);
  int aggregated = 0;
  for (const auto& path : labs) {
    json raw = read_config_file(path.string());
    const auto a = runs(raw, false, 1).front();
    const auto b = runs(raw, true, 1).front();
    ASSERT_EQ(a.size(), b.size()) << path;
    const bool in_aggregate = metric(a, "aggregate_task_s") > 0;
    aggregated += in_aggregate ? 1 : 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i].name == "events_processed" || a[i].name == "aggregate_task_s" ||
          a[i].name == "aggregate_lagging_task_s")
        continue;
      if (in_aggregate && load_figure(a[i].name)) continue;
      EXPECT_EQ(a[i].value, b[i].value) << path.filename() << " " << a[i].name;
    }
    if (in_aggregate) {
      for (const char* name : {"inserts", "keeper_ops"}) {
        EXPECT_NEAR(metric(a, name), metric(b, name), 0.1 * metric(b, name)) << path.filename() << " " << name;
      }
    }
  }
  // The labs with an hour after their fault (crash_*, runbook_*) reach the aggregate.
  EXPECT_GE(aggregated, 1);
}

}  // namespace
}  // namespace pipesim::pipeline
