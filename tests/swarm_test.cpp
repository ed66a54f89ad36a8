// Swarm testing (Groce et al., "Swarm Testing", ISSTA 2012; TigerBeetle's VOPR):
// many random but valid configs, each a random subset of features and fault
// kinds with extreme but legal values (1 or 64 partitions, max.poll.records 1,
// a dedup window of 0, commit intervals of 1 s and 10 min, several workers,
// exactlyOnce on and off, errors.tolerance all/none, a DLQ or not, ...), each
// run for a few simulated minutes on a small workload, checked against every
// invariant:
//   - the models' own always-on invariants (PIPESIM_INVARIANT: ledger
//     conservation in settle(), offsets never backwards, committed <= consumed,
//     events never in the past): a violation throws out of run_scenario;
//   - the metrics once more, from the outside: every value finite and >= 0,
//     distinct rows + lost + pending == produced, duplicates and losses fully
//     attributed, FINAL duplicates <= duplicates, dedup hits <= inserts, every
//     scheduled fault fired and no fault of an absent kind;
//   - determinism: the run again, from the config as `validate --print` writes
//     it and loaded back, gives the same metrics bit for bit.
// A failure prints the effective config (JSON) and seed that reproduce it:
// save the JSON as swarm.json and run `pipesim run swarm.json --seed S`.
//
// Environment: PIPESIM_SWARM_CONFIGS (default: the CMake option of the same
// name, 1000; the sanitizer build uses fewer) configs split over the shards below;
// PIPESIM_SWARM_SEED (default 1) picks another set of configs; PIPESIM_SWARM_CASE=N runs only
// config N; PIPESIM_SWARM_PRINT=1 prints each config run (as `validate --print`
// writes it) and its seed to stderr; PIPESIM_SWARM_TIMES=1 prints each case's CPU time;
// every config also sets a few documented keys at drawn values (every key of `validate
// --reference` across its range); PIPESIM_SWARM_KEYS=0 leaves them out.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <initializer_list>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/pipeline/config.h"
#include "models/pipeline/scenario.h"
#include "sim/config/duration.h"
#include "sim/engine/invariant.h"
#include "sim/engine/random.h"

namespace pipesim::pipeline {
namespace {

using nlohmann::json;

constexpr int kShards = 10;
#ifndef PIPESIM_SWARM_CONFIGS_DEFAULT
#define PIPESIM_SWARM_CONFIGS_DEFAULT 1000
#endif
constexpr std::int64_t kDefaultConfigs = PIPESIM_SWARM_CONFIGS_DEFAULT;

std::int64_t env_int(const char* name, std::int64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoll(v, nullptr, 10) : fallback;
}

// Draws for one config, from its own named stream.
class Draw {
 public:
  Draw(std::uint64_t seed, std::int64_t index)
      : r_(seed, "swarm/config/" + std::to_string(index)) {}
  bool coin(double p = 0.5) { return r_.bernoulli(p); }
  template <class T>
  T pick(std::initializer_list<T> options) {
    return options.begin()[r_.below(options.size())];
  }
  std::string pick_text(std::initializer_list<const char*> options) { return pick(options); }
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(r_.below(static_cast<std::uint64_t>(hi - lo + 1)));
  }
  double unit() { return r_.uniform01(); }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(r_.below(n)); }

 private:
  sim::RandomStream r_;
};

struct DrawnKey {
  std::string path;
  int end = 0;  // -1 drawn at its minimum, +1 at its maximum, 0 elsewhere
};

struct SwarmCase {
  json raw;
  std::vector<DrawnKey> drawn;  // documented keys set by draw_documented_keys
  std::uint64_t seed = 1;
  // Scheduled faults with at < run.duration, per kind: each must fire.
  std::map<std::string, std::int64_t> scheduled;
  std::vector<std::string> kinds;  // kinds with at least one spec
};

std::vector<DrawnKey> draw_documented_keys(Draw& d, SwarmCase& sc, std::int64_t index);

// A random valid config. Every section and most keys are left at their
// default half of the time (swarm: each run exercises a random subset).
SwarmCase draw_case(std::uint64_t swarm_seed, std::int64_t index) {
  Draw d(swarm_seed, index);
  SwarmCase sc;
  json& raw = sc.raw;
  raw = json::object();

  // Small workloads, minutes to a day of simulated time: every run stays cheap
  // (a day at most 86,400 records; draw_documented_keys keeps a bound).
  const std::string duration = d.pick_text({"1s", "10m", "30m", "1h", "6h", "1d"});
  sim::Time horizon = *sim::parse_duration(duration);
  raw["run"] = {{"duration", duration}, {"drain", d.pick_text({"0s", "1m", "10m", "30m"})}};
  raw["workload"] = {
      {"records_per_day", horizon > sim::Time::hours(1)
                              ? d.pick<std::int64_t>({0, 8640, 86400})
                              : d.pick<std::int64_t>({0, 86400, 864000, 8640000, 8640000})}};
  if (d.coin()) raw["workload"]["profile"] = d.pick_text({"constant", "production"});
  if (d.coin(0.2)) {
    json hourly = json::array();
    for (int h = 0; h < 24; ++h) hourly.push_back(h == 0 ? 1.0 : d.pick<double>({0.0, 0.5, 3.0}));
    raw["workload"]["profile"] = hourly;
  }
  if (d.coin()) raw["workload"]["arrivals"] = d.pick_text({"poisson", "fixed"});
  if (d.coin(0.2)) raw["workload"]["record_bytes"] = d.pick<std::int64_t>({1, 100000000});

  const std::int64_t partitions = d.pick<std::int64_t>({1, 1, 2, 3, 8, 64});
  // 64 partitions poll and wait per simulated second: an hour of them at most.
  if (partitions > 8 && horizon > sim::Time::hours(1)) {
    horizon = sim::Time::hours(1);
    raw["run"]["duration"] = "1h";
  }
  const std::int64_t brokers = d.pick<std::int64_t>({1, 3, 5});
  const std::int64_t rf = d.between(1, brokers);
  raw["kafka"] = {{"num.partitions", partitions},
                  {"brokers", brokers},
                  {"replication.factor", rf},
                  {"min.insync.replicas", d.between(1, rf)}};
  if (d.coin()) raw["kafka"]["produce_latency"] = d.pick_text({"2us", "2ms", "1s"});
  if (d.coin(0.2)) raw["kafka"]["retention.ms"] = d.pick<std::int64_t>({1, 60000, 9223372036854LL});

  if (d.coin()) {
    const std::string acks = d.pick_text({"all", "-1", "1", "0"});
    const auto retries = d.pick<std::int64_t>({0, 3, 2147483647});
    // kafka-clients refuses an explicit enable.idempotence=true with acks other
    // than all or with retries=0: draw only legal combinations.
    const bool idempotence = d.coin() && (acks == "all" || acks == "-1") && retries > 0;
    raw["producer"] = {{"acks", acks}, {"enable.idempotence", idempotence}, {"retries", retries}};
  }
  if (d.coin(0.3)) {
    raw["app"] = {{"on_send_failure", d.pick_text({"retry", "retry_table", "drop"})},
                  {"max_resends", d.pick<std::int64_t>({0, 3, 1000})},
                  {"resend_policy", d.pick_text({"blind", "check_by_key"})}};
  }

  const std::int64_t workers = d.pick<std::int64_t>({1, 1, 2, 3});
  const std::int64_t tasks = d.pick<std::int64_t>({1, 3, partitions, partitions + 2});
  json connect = {{"workers", workers}, {"tasks.max", tasks}};
  if (d.coin(0.7))
    connect["offset.flush.interval.ms"] = d.pick<std::int64_t>({1000, 5000, 60000, 600000});
  if (d.coin(0.7)) connect["max.poll.records"] = d.pick<std::int64_t>({1, 7, 500, 100000});
  if (d.coin()) connect["session.timeout.ms"] = d.pick<std::int64_t>({6000, 45000});
  if (d.coin()) connect["scheduled.rebalance.max.delay.ms"] = d.pick<std::int64_t>({0, 300000});
  if (d.coin()) connect["task.shutdown.graceful.timeout.ms"] = d.pick<std::int64_t>({0, 5000});
  if (d.coin()) connect["worker.session.timeout.ms"] = d.pick<std::int64_t>({1, 10000});
  if (d.coin()) connect["fetch.max.wait.ms"] = d.pick<std::int64_t>({0, 500});
  if (d.coin()) connect["rebalance_time"] = d.pick_text({"0s", "500ms", "10s"});
  if (d.coin()) connect["worker_restart_delay"] = d.pick_text({"0s", "30s", "10m"});
  if (d.coin()) connect["fetch_latency"] = d.pick_text({"1us", "2ms", "1s"});
  // Puts that outlive the poll timeout: the consumer leaves and re-reads.
  if (d.coin(0.15)) connect["max.poll.interval.ms"] = d.pick<std::int64_t>({20, 2000});
  raw["connect"] = connect;

  if (d.coin(0.7)) {
    raw["operator"] = {
        {"restart_delay", d.pick_text({"0s", "30s", "30m"})},
        {"restart_delay_distribution", d.pick_text({"exponential", "fixed"})},
        {"remediation", d.pick_text({"restart_only", "delete_state_row", "tolerate_then_revert"})},
        {"remediation_delay", d.pick_text({"0s", "5m"})}};
  }

  const bool exactly_once = d.coin();
  json connector = {{"exactlyOnce", exactly_once},
                    {"errors.tolerance", d.pick_text({"none", "all"})}};
  if (d.coin()) connector["errors.deadletterqueue.topic.name"] = "events-dlq";
  if (d.coin(0.3)) connector["errors.log.enable"] = true;
  if (d.coin(0.3)) connector["tolerateStateMismatch"] = true;
  if (d.coin()) {
    connector["jdbcConnectionProperties"] =
        "?socket_timeout=" + std::to_string(d.pick<std::int64_t>({1000, 30000}));
  }
  if (!exactly_once && d.coin(0.3)) connector["bufferCount"] = d.pick<std::int64_t>({1, 1000});
  if (d.coin(0.3)) connector["ignorePartitionsWhenBatching"] = true;
  if (d.coin(0.3)) connector["reportInsertedOffsets"] = true;
  raw["connector"] = connector;

  const std::int64_t replicas = d.pick<std::int64_t>({1, 3});
  json clickhouse = {{"replicas", replicas}, {"insert_quorum", d.between(0, replicas)}};
  if (d.coin()) {
    clickhouse["version"] =
        d.pick_text({"23.3", "23.8", "23.11", "24.3", "24.8", "25.3", "25.8", "25.9", "25.10"});
  }
  if (d.coin()) clickhouse["engine"] = d.pick_text({"ReplacingMergeTree", "MergeTree"});
  if (d.coin())
    clickhouse["replicated_deduplication_window"] = d.pick<std::int64_t>({-1, 0, 1, 100});
  if (d.coin())
    clickhouse["replicated_deduplication_window_seconds"] = d.pick<std::int64_t>({-1, 0, 1, 60});
  if (d.coin()) clickhouse["insert_base_latency"] = d.pick_text({"1us", "15ms", "2s"});
  if (d.coin()) clickhouse["insert_latency_per_row"] = d.pick_text({"0s", "20us", "1ms"});
  raw["clickhouse"] = clickhouse;

  // An overloaded Keeper (capacity 1/s, or background near capacity) leaves
  // most records pending: kept, but rarer, so most runs reach the sink's paths.
  // The background must stay below capacity, from threads enough to send it
  // (config.cpp refuses the rest).
  if (d.coin(0.3)) {
    std::string latency = d.pick_text({"1us", "1ms", "1s"});
    std::int64_t capacity = d.pick<std::int64_t>({1, 1000, 40000, 40000});
    // A Keeper of one request a second, or a second's round trip, keeps inserts timing out:
    // their records are redelivered again and again, and each redelivery's insert lists the
    // buffer's repeated ranges (over a day: 411,779 events at 14 us, 5.7 s a run). An hour of
    // it at most.
    if (*sim::parse_duration(raw["run"]["duration"].get<std::string>()) > sim::Time::hours(1)) {
      if (capacity == 1) capacity = 1000;
      if (latency == "1s") latency = "1ms";
    }
    const std::int64_t background =
        std::min(d.pick<std::int64_t>({0, 10000, 10000, 100000}), capacity * 9 / 10);
    // The threads' round trip: the read's, and the default commit_latency
    // (1.4 ms) for the default third of them that are writes.
    const double latency_s = (latency == "1us" ? 1e-6 : latency == "1ms" ? 1e-3 : 1.0) + 0.0014 / 3;
    const auto fewest = static_cast<std::int64_t>(static_cast<double>(background) * latency_s * 4) + 20;
    raw["keeper"] = {{"latency", latency},
                     {"capacity_ops_per_s", capacity},
                     {"background_ops_per_s", background},
                     {"background_clients", std::max(fewest, d.pick<std::int64_t>({1, 1728, 20000}))}};
  }

  // Faults: each kind with probability 0.4, scheduled inside the run or
  // Poisson with 0.5 to 5 expected occurrences in it.
  json faults = json::array();
  const double horizon_days =
      static_cast<double>(horizon.us) / static_cast<double>(sim::Time::days(1).us);
  const std::map<std::string, std::pair<std::string, std::int64_t>> targets = {
      {"worker_crash", {"worker-", workers}},
      {"task_restart", {"task-", tasks}},
      {"broker_crash", {"broker-", brokers}},
      {"replica_crash", {"replica-", replicas}}};
  for (const auto& kind : fault_kinds()) {
    if (!d.coin(0.4)) continue;
    const std::int64_t specs = d.pick<std::int64_t>({1, 1, 2});
    for (std::int64_t s = 0; s < specs; ++s) {
      json f = {{"kind", kind}};
      if (d.coin()) {
        const sim::Time at{static_cast<std::int64_t>(d.unit() * static_cast<double>(horizon.us))};
        f["at"] = sim::format_duration(at);
        ++sc.scheduled[kind];
      } else {
        f["rate_per_day"] = d.pick<double>({0.5, 2.0, 5.0}) / horizon_days;
      }
      if (d.coin(0.3)) {
        f["duration"] = d.pick_text({"0s", "1s", "40s", "5m"});
      } else if (d.coin(0.2)) {
        f["duration_mean"] = d.pick_text({"1s", "40s"});
      }
      if (const auto t = targets.find(kind); t != targets.end() && d.coin()) {
        f["target"] = t->second.first + std::to_string(d.between(0, t->second.second - 1));
      }
      if (kind == "insert_timeout" && d.coin())
        f["server_commits"] = d.pick<double>({0.0, 0.5, 1.0});
      if (kind == "rebalance" && d.coin())
        f["max.poll.records"] = d.pick<std::int64_t>({1, 200, 100000});
      if (kind == "leader_change" || kind == "leader_flapping") {
        if (d.coin())
          f["partitions"] = d.coin() ? json("all") : json::array({d.between(0, partitions - 1)});
        if (d.coin()) f["controlled"] = d.coin();
        if (kind == "leader_flapping" && d.coin()) f["period"] = d.pick_text({"100ms", "20s"});
      }
      if (kind == "response_loss" && d.coin()) f["probability"] = d.pick<double>({0.0, 0.5, 1.0});
      if (kind == "response_loss" && d.coin()) f["connection"] = d.pick_text({"stall", "reset"});
      if (kind == "keeper_backlog") {
        if (d.coin()) f["capacity_factor"] = d.pick<double>({0.0001, 0.25, 1.0});
        if (d.coin(0.3)) f["extra_clients"] = d.pick<std::int64_t>({0, 64, 5000});
        if (d.coin(0.3)) f["extra_client_think"] = d.pick_text({"0ms", "10ms", "1s"});
      }
      faults.push_back(f);
    }
    sc.kinds.push_back(kind);
  }
  if (!faults.empty() || d.coin(0.2)) raw["faults"] = faults;  // else the default mix
  if (!raw.contains("faults")) {
    for (const auto& f : default_faults()) sc.kinds.push_back(f.kind);
  }
  // The documented keys' layer: a few documented keys at drawn values on top (budget()
  // keeps the cost bounded); PIPESIM_SWARM_KEYS=0 leaves it out.
  if (env_int("PIPESIM_SWARM_KEYS", 1) != 0) sc.drawn = draw_documented_keys(d, sc, index);
  sc.seed = 1 + d.between(0, 999999);
  return sc;
}

// ------------------------------------------------------------------------------------------
// Every documented key across its documented range. The keys, kinds and ranges come from
// config_keys(), the declarations `pipesim validate --reference` prints, so a new key joins
// the swarm by itself. Each config sets a few of them, each to its minimum, its maximum, its
// default or a value between (log-uniform over wide ranges); a value the rest of the config
// makes inconsistent (config.cpp refuses it) is left out again. The generator test below
// checks that over the CI's configs every key was drawn, and at both ends of its range.

// Values for the keys whose kind has no range (free text, free-form JSON): a new such key
// must be given its values here (SwarmGenerator.DrawsEveryDocumentedKey fails until then).
const std::map<std::string, std::vector<json>>& free_form_values() {
  static const std::map<std::string, std::vector<json>> values = {
      {"workload.profile", {"production", "constant",
                            json::array({1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                         0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 23})}},
      {"connector.name", {"x", "clickhouse-sink-with-a-rather-long-name.v2"}},
      {"connector.topics", {"events", "t"}},
      {"connector.jdbcConnectionProperties",
       {"", "?socket_timeout=1", "?socket_timeout=300000&connect_timeout=1"}},
      {"connector.errors.deadletterqueue.topic.name", {"", "dlq"}},
  };
  return values;
}

// The keys whose extreme values make a run cost what it simulates (records, tasks,
// partitions) are bounded jointly by budget() after drawing; run.duration stays within a day.
constexpr double kMaxRecordsPerRun = 2e5;

std::string key_path(const ConfigKey& k) { return k.section + "." + k.row.key; }

// `forced`: 0 the minimum, 1 the maximum (as far as the kind has ends); -1 a draw.
json draw_value(Draw& d, const ConfigKey& k, int& end, int forced = -1) {
  using Kind = sim::OptionLister::Kind;
  const auto& r = k.row;
  double lo = r.min;
  double hi = r.max;
  // Simulated time up to a day: a drain of a year is idle time at a year's cost.
  if (key_path(k) == "run.duration" || key_path(k) == "run.drain") {
    hi = std::min(hi, static_cast<double>(sim::Time::days(1).us));
  }
  const int drawn = static_cast<int>(d.between(0, 3));  // min, max, default, between
  const int which = forced >= 0 ? forced : drawn;
  end = which == 0 ? -1 : which == 1 ? 1 : 0;
  const auto between = [&](double a, double b) {
    if (a > 0 && b / a > 100) return std::exp(std::log(a) + d.unit() * (std::log(b) - std::log(a)));
    return a + d.unit() * (b - a);
  };
  const auto pick_number = [&](double def) {
    return which == 0 ? lo : which == 1 ? hi : which == 2 ? def : between(lo, hi);
  };
  switch (r.kind) {
    case Kind::INTEGER:
    case Kind::MILLIS:
      return static_cast<std::int64_t>(std::llround(pick_number(std::stod(r.default_value))));
    case Kind::REAL:
      return pick_number(std::stod(r.default_value));
    case Kind::DURATION: {
      const double def = static_cast<double>(sim::parse_duration(json::parse(r.default_value).get<std::string>())->us);
      auto t = sim::Time{static_cast<std::int64_t>(pick_number(def))};
      // run.start is a time of day in whole hours (the profile is hourly).
      if (key_path(k) == "run.start") t = sim::Time::hours(t.us / sim::Time::hours(1).us);
      return sim::format_duration(t);
    }
    case Kind::BOOLEAN:
      end = 0;
      return d.coin();
    case Kind::CHOICE:
      end = 0;
      return r.choices[d.below(r.choices.size())];
    case Kind::TEXT:
    case Kind::ANY: {
      end = 0;
      const auto v = free_form_values().find(key_path(k));
      if (v == free_form_values().end()) return json::parse(r.default_value);  // the test says so
      return v->second[d.below(v->second.size())];
    }
  }
  return nullptr;
}

// Keeps a run's work bounded whatever was drawn: many tasks or partitions for a short time
// only, at most kMaxRecordsPerRun records (a drawn key keeps its value, the other one
// gives way). False when drawn keys alone make the run too costly: the last one is left out.
// The faults that must fire (those at a set time) and the kinds present, as sc.raw has them.
void note_faults(SwarmCase& sc) {
  sc.scheduled.clear();
  sc.kinds.clear();
  for (const auto& f : sc.raw["faults"]) {
    const std::string kind = f["kind"].get<std::string>();
    if (f.contains("at")) ++sc.scheduled[kind];
    if (std::find(sc.kinds.begin(), sc.kinds.end(), kind) == sc.kinds.end()) sc.kinds.push_back(kind);
  }
}

bool budget(json& raw, const std::vector<DrawnKey>& drawn) {
  const auto was_drawn = [&](const char* path) {
    return std::any_of(drawn.begin(), drawn.end(), [&](const DrawnKey& k) { return k.path == path; });
  };
  const double day_us = static_cast<double>(sim::Time::days(1).us);
  double days =
      static_cast<double>(sim::parse_duration(raw["run"]["duration"].get<std::string>())->us) / day_us;
  // Every task and partition costs per simulated second (idle polls, fetch waits): hundreds
  // of them for 10 minutes at most, more than 8 partitions for an hour at most.
  const auto tasks = raw["connect"].value("tasks.max", std::int64_t{8});
  const auto partitions = raw["kafka"].value("num.partitions", std::int64_t{8});
  // Thousands of partitions: a leader change of all of them settles the producer once per
  // partition moved (O(partitions^2) per flap): 2 minutes at most.
  // Every partition's replicas follow each leader change and broker fault: 64 partitions of
  // 1,000 replicas were 281,640 events at 38 us each for 30 minutes (11 s a run).
  const auto replicas = partitions * raw["kafka"].value("replication.factor", std::int64_t{3});
  const double most_days = partitions > 1000                             ? 1.0 / 720
                           : tasks + partitions > 200 || replicas > 1000 ? 1.0 / 144
                           : partitions > 8                              ? 1.0 / 24
                                                                         : 1.0;
  if (days > most_days) {
    if (was_drawn("run.duration")) {
      raw["connect"]["tasks.max"] = std::min<std::int64_t>(tasks, 4);
      raw["kafka"]["num.partitions"] = std::min<std::int64_t>(partitions, 4);
    } else {
      raw["run"]["duration"] = most_days < 1.0 / 144 ? "2m" : most_days < 1.0 / 24 ? "10m" : "1h";
      raw["run"]["drain"] = "10m";
    }
  }
  // After them the drain idles as long again: with hundreds of tasks or partitions a minute.
  if (tasks + partitions > 200 && !was_drawn("run.drain")) raw["run"]["drain"] = "1m";
  // A flush (offset.flush.interval.ms) every few milliseconds, a fetch answered at once
  // (fetch.max.wait.ms near 0: each task's consumer polls every few milliseconds, as the
  // real one does), or an insert per record or two of more than 100,000 records a day, is
  // an event each: an hour of them at most.
  const auto flush_ms = raw["connect"].value("offset.flush.interval.ms", std::int64_t{60000});
  const auto fetch_wait_ms = raw["connect"].value("fetch.max.wait.ms", std::int64_t{500});
  const auto poll_records = raw["connect"].value("max.poll.records", std::int64_t{500});
  const auto records_per_day = raw["workload"].value("records_per_day", std::int64_t{200000000});
  if (flush_ms < 1000 || fetch_wait_ms < 100 || (poll_records < 10 && records_per_day > 100000)) {
    // A flush every few milliseconds is ~1,000 events a simulated second: 10 minutes of them
    // (70 minutes at 1 ms was 4.2 M events, 52 s of a Release shard and past the sanitizer
    // build's timeout).
    // A fetch answered at once polls as often (fetch.max.wait.ms 0 over 30 minutes with
    // state wipes replaying: 1.06 M events, 10 s a run).
    const bool every_ms = flush_ms < 10 || fetch_wait_ms < 10;
    const sim::Time most_run = every_ms ? sim::Time::minutes(8) : sim::Time::hours(1);
    const sim::Time most_drain = every_ms ? sim::Time::minutes(2) : sim::Time::minutes(10);
    if (!was_drawn("run.duration") && *sim::parse_duration(raw["run"]["duration"].get<std::string>()) > most_run)
      raw["run"]["duration"] = sim::format_duration(most_run);
    if (!was_drawn("run.drain") && *sim::parse_duration(raw["run"]["drain"].get<std::string>()) > most_drain)
      raw["run"]["drain"] = sim::format_duration(most_drain);
    // Both drawn long (a flush every millisecond over a day and a drain of 16 hours was
    // 146 M events, 75 s of a CI shard's 101 s): not this combination.
    if (*sim::parse_duration(raw["run"]["duration"].get<std::string>()) +
            *sim::parse_duration(raw["run"]["drain"].get<std::string>()) >
        most_run + most_drain)
      return false;
  }
  days = static_cast<double>(sim::parse_duration(raw["run"]["duration"].get<std::string>())->us) / day_us;
  const double per_day = static_cast<double>(raw["workload"].value("records_per_day", std::int64_t{200000000}));
  if (per_day * days <= kMaxRecordsPerRun) return true;
  if (was_drawn("workload.records_per_day") && !was_drawn("run.duration")) {
    const auto us = std::max<std::int64_t>(1000000, static_cast<std::int64_t>(kMaxRecordsPerRun / per_day * day_us));
    raw["run"]["duration"] = sim::format_duration(sim::Time{us});
  } else {
    raw["workload"]["records_per_day"] = static_cast<std::int64_t>(kMaxRecordsPerRun / days);
  }
  return true;
}

// A value at an end of its range is often inconsistent with the rest of a config: the keys
// that config.cpp checks it against are set so that it holds (config.cpp's rules, and
// kafka-clients' and ClickHouse's behind them), so that each end is drawn at all.
void make_room(json& raw, const std::string& path, const json& value) {
  const auto whole = [&] { return value.get<std::int64_t>(); };
  if (path == "kafka.replication.factor") {
    raw["kafka"]["brokers"] = std::max<std::int64_t>(whole(), raw["kafka"].value("brokers", 3));
    raw["kafka"]["min.insync.replicas"] = 1;
  } else if (path == "kafka.min.insync.replicas") {
    raw["kafka"]["brokers"] = std::max<std::int64_t>(whole(), raw["kafka"].value("brokers", 3));
    raw["kafka"]["replication.factor"] = whole();
  } else if (path == "kafka.brokers") {
    raw["kafka"]["replication.factor"] = std::min<std::int64_t>(whole(), raw["kafka"].value("replication.factor", 1));
    raw["kafka"]["min.insync.replicas"] = 1;
  } else if (path == "clickhouse.insert_quorum") {
    raw["clickhouse"]["replicas"] = std::max<std::int64_t>(whole(), 1);
  } else if (path == "clickhouse.replicas") {
    raw["clickhouse"]["insert_quorum"] = 0;
  } else if (path == "clickhouse.parts_to_delay_insert" || path == "clickhouse.parts_to_throw_insert") {
    // parts_to_delay_insert must stay below parts_to_throw_insert (0: off).
    raw["clickhouse"][path == "clickhouse.parts_to_delay_insert" ? "parts_to_throw_insert"
                                                                  : "parts_to_delay_insert"] = 0;
  } else if (path == "producer.delivery.timeout.ms") {
    // at least linger.ms + request.timeout.ms (kafka-clients' ProducerConfig)
    raw["producer"]["linger.ms"] = 0;
    raw["producer"]["request.timeout.ms"] = std::max<std::int64_t>(1, std::min<std::int64_t>(whole(), 30000));
  } else if (path.rfind("keeper.", 0) == 0 && path != "keeper.background_ops_per_s" &&
             path != "keeper.background_clients") {
    // Keeper's own capacity and latency: without background load nothing can exceed them.
    raw["keeper"]["background_ops_per_s"] = 0;
  } else if (path == "run.duration" && raw.contains("faults")) {
    // Scheduled faults must fall inside the run (config.cpp): those after it go.
    const sim::Time end = *sim::parse_duration(value.get<std::string>());
    json kept = json::array();
    for (const auto& f : raw["faults"]) {
      if (!f.contains("at") || *sim::parse_duration(f["at"].get<std::string>()) < end) kept.push_back(f);
    }
    raw["faults"] = kept;
  } else if (path == "keeper.background_ops_per_s") {
    raw["keeper"]["capacity_ops_per_s"] = 100000000;  // above background's largest value
    raw["keeper"]["latency"] = "1us";
    raw["keeper"]["background_clients"] = 1000000;
  }
}

// Sets a few documented keys of `sc` to drawn values; returns the keys kept.
std::vector<DrawnKey> draw_documented_keys(Draw& d, SwarmCase& sc, std::int64_t index) {
  static const std::vector<ConfigKey> keys = config_keys();
  std::vector<DrawnKey> kept;
  const auto n = static_cast<std::int64_t>(keys.size());
  // The first key is scheduled, not drawn: config i sets key i mod n to its
  // minimum, or its maximum in every other round, so that a run of 2n configs
  // (the CI's 1,000 hold ~3.7 rounds) sets every key at both ends whatever
  // the number of keys; then 1 to 7 drawn ones.
  const std::int64_t count = 1 + d.between(1, 7);
  for (std::int64_t i = 0; i < count; ++i) {
    const bool scheduled = i == 0;
    const ConfigKey& k = scheduled ? keys[static_cast<std::size_t>(index % n)] : keys[d.below(keys.size())];
    int end = 0;
    const json value = draw_value(d, k, end, scheduled ? static_cast<int>((index / n) % 2) : -1);
    json trial = sc.raw;
    if (!trial.contains(k.section)) trial[k.section] = json::object();
    make_room(trial, key_path(k), value);
    trial[k.section][k.row.key] = value;
    std::vector<DrawnKey> with = kept;
    with.push_back({key_path(k), end});
    if (!budget(trial, with)) continue;  // too costly with the keys drawn before: left out
    try {
      (void)load_config(trial);
    } catch (const sim::ConfigError&) {
      continue;  // inconsistent with the rest of this config: left out
    }
    sc.raw = std::move(trial);
    kept = std::move(with);
  }
  if (sc.raw.contains("faults")) note_faults(sc);
  return kept;
}

double value(const sim::Metrics& m, const std::string& name) {
  for (const auto& x : m) {
    if (x.name == name) return x.value;
  }
  return std::nan("");
}

double sum_with_prefix(const sim::Metrics& m, const std::string& prefix) {
  double total = 0;
  for (const auto& x : m) {
    if (x.name.rfind(prefix, 0) == 0) total += x.value;
  }
  return total;
}

// Every check on one run's metrics; returns what is wrong, or "".
std::string check_metrics(const SwarmCase& sc, const sim::Metrics& m) {
  std::ostringstream problems;
  for (const auto& x : m) {
    if (!std::isfinite(x.value) || x.value < 0)
      problems << x.name << " = " << x.value << " (negative or not finite)\n";
  }
  const double produced = value(m, "records_produced");
  const double rows = value(m, "clickhouse_rows");
  const double dup = value(m, "duplicate_rows");
  const double lost = value(m, "lost_records");
  const double pending = value(m, "pending_records");
  // Each produced id is in ClickHouse (once or more), lost or pending.
  if (rows - dup + lost + pending != produced) {
    problems << "conservation: rows " << rows << " - duplicate_rows " << dup << " + lost " << lost
             << " + pending " << pending << " != records_produced " << produced << "\n";
  }
  if (sum_with_prefix(m, "duplicate_rows_by_entry.") != dup)
    problems << "duplicate rows without an entry point\n";
  if (sum_with_prefix(m, "lost_records_by_cause.") != lost)
    problems << "lost records without a cause\n";
  if (value(m, "final_duplicate_rows") > dup) problems << "final_duplicate_rows > duplicate_rows\n";
  if (value(m, "dedup_hits") > value(m, "inserts")) problems << "dedup_hits > inserts\n";
  // A server's ZooKeeperRequest is a part of what is in flight Keeper-wide.
  const double slack = 1e-9 * (1 + value(m, "keeper_peak_in_flight"));
  if (value(m, "zookeeper_request_peak") > value(m, "keeper_peak_in_flight") + slack)
    problems << "zookeeper_request_peak > keeper_peak_in_flight\n";
  if (value(m, "zookeeper_request_mean") > value(m, "keeper_mean_in_flight") + slack)
    problems << "zookeeper_request_mean > keeper_mean_in_flight\n";
  if (value(m, "zookeeper_request_sampled_max") > value(m, "keeper_in_flight_sampled_max") + slack)
    problems << "zookeeper_request_sampled_max > keeper_in_flight_sampled_max\n";
  for (const auto& kind : fault_kinds()) {
    const double fired = value(m, "faults_fired." + kind);
    const auto s = sc.scheduled.find(kind);
    const double scheduled = s == sc.scheduled.end() ? 0 : static_cast<double>(s->second);
    if (fired < scheduled)
      problems << "faults_fired." << kind << " = " << fired << " < " << scheduled << " scheduled\n";
    const bool present = std::find(sc.kinds.begin(), sc.kinds.end(), kind) != sc.kinds.end();
    if (!present && fired != 0)
      problems << "faults_fired." << kind << " = " << fired << " without such a fault\n";
  }
  return problems.str();
}

std::string metrics_difference(const sim::Metrics& a, const sim::Metrics& b) {
  if (a.size() != b.size()) return "different metric lists";
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].value != b[i].value) {
      std::ostringstream s;
      s.precision(17);
      s << a[i].name << ": " << a[i].value << " vs " << b[i].value;
      return s.str();
    }
  }
  return "";
}

// Runs case `index`; returns what is wrong (with the reproducing config and seed), or "".
std::string run_case(std::uint64_t swarm_seed, std::int64_t index) {
  const SwarmCase sc = draw_case(swarm_seed, index);
  Config config;
  try {
    config = load_config(sc.raw);
  } catch (const sim::ConfigError& e) {
    return std::string("the generator drew a config that does not load: ") + e.what() + "\n" +
           sc.raw.dump(2);
  }
  const std::string effective = effective_config(config).dump(2);
  if (env_int("PIPESIM_SWARM_PRINT", 0) != 0)
    std::cerr << effective << "\nseed " << sc.seed << "\n";
  const auto reproduce = [&](const std::string& what) {
    std::ostringstream s;
    s << "swarm case " << index << " (PIPESIM_SWARM_SEED=" << swarm_seed
      << " PIPESIM_SWARM_CASE=" << index << "), seed " << sc.seed << ": " << what
      << "\nreproduce: save this config as swarm.json and run "
      << "`pipesim run swarm.json --seed " << sc.seed << "`\n"
      << effective << "\n";
    return s.str();
  };
  try {
    const sim::Metrics first = run_scenario(config, sc.seed);
    if (const std::string p = check_metrics(sc, first); !p.empty()) return reproduce(p);
    // The same run twice must not differ, and neither may the run of the
    // config as `validate --print` writes it, loaded back.
    if (const std::string diff = metrics_difference(first, run_scenario(config, sc.seed));
        !diff.empty()) {
      return reproduce("not deterministic, the same run twice differs: " + diff);
    }
    const Config reloaded = load_config(json::parse(effective));
    if (const std::string diff = metrics_difference(first, run_scenario(reloaded, sc.seed));
        !diff.empty()) {
      return reproduce("the printed config runs differently: " + diff);
    }
  } catch (const std::exception& e) {
    return reproduce(std::string("exception: ") + e.what());
  }
  return "";
}

class Swarm : public testing::TestWithParam<int> {};

TEST_P(Swarm, RandomValidConfigsKeepEveryInvariant) {
  const auto swarm_seed = static_cast<std::uint64_t>(env_int("PIPESIM_SWARM_SEED", 1));
  const std::int64_t configs = env_int("PIPESIM_SWARM_CONFIGS", kDefaultConfigs);
  const std::int64_t only = env_int("PIPESIM_SWARM_CASE", -1);
  const int shard = GetParam();
  std::int64_t ran = 0;
  const bool times = env_int("PIPESIM_SWARM_TIMES", 0) != 0;
  for (std::int64_t i = shard; i < configs; i += kShards) {
    if (only >= 0 && i != only) continue;
    // PIPESIM_SWARM_TIMES=1: each case's CPU time on stderr (which configs cost the most).
    const std::clock_t started = std::clock();
    if (const std::string problem = run_case(swarm_seed, i); !problem.empty())
      ADD_FAILURE() << problem;
    if (times) {
      std::cerr << "swarm case " << i << ": "
                << static_cast<double>(std::clock() - started) / CLOCKS_PER_SEC << " s\n";
    }
    ++ran;
  }
  if (only < 0) {
    EXPECT_GE(ran, configs / kShards);
  }
}

INSTANTIATE_TEST_SUITE_P(Shards, Swarm, testing::Range(0, kShards));

// Findings of this test, each reduced to the smallest config that showed it
// (tests/swarm_test.cpp's failure output, minimised by dropping faults and
// keys while the run still failed).

// Keeper at 1 op/s and a backlog episode with 1e8 extra ops/s: the answer time
// overflowed int64 us and the insert's answer was scheduled in the past
// ("invariant violated: event scheduled in the past"). Fixed in keeper.cpp.
// Kept for the closed loop: 100,000 runaway threads at 0.0001 x 1 op/s.
TEST(SwarmFindings, KeeperBacklogFarBeyondCapacityIsNotScheduledInThePast) {
  for (const auto& [fault, seed] : std::vector<std::pair<json, std::uint64_t>>{
           {{{"kind", "keeper_backlog"}, {"rate_per_day", 240.0}, {"extra_clients", 100000}},
            667576},
           {{{"kind", "keeper_backlog"},
             {"at", "33903102us"},
             {"capacity_factor", 0.0001},
             {"extra_clients", 100000}},
            461373}}) {
    const Config c = load_config({{"keeper", {{"capacity_ops_per_s", 1}, {"background_ops_per_s", 0}}},
                                  {"faults", json::array({fault})},
                                  {"run", {{"duration", "1h"}, {"drain", "10m"}}},
                                  {"workload", {{"records_per_day", 8640000}}}});
    SwarmCase sc;
    sc.kinds = {"keeper_backlog"};
    sim::Metrics m;
    ASSERT_NO_THROW(m = run_scenario(c, seed)) << fault.dump();
    EXPECT_EQ(check_metrics(sc, m), "") << fault.dump();
    // Keeper answers nothing after the backlog starts: the records stay pending.
    EXPECT_GT(value(m, "pending_records"), 0) << fault.dump();
  }
}

// request.timeout.ms near its largest value: delivery.timeout.ms was raised to linger.ms +
// request.timeout.ms beyond its own range, and the printed config did not load back. Now
// capped at Integer.MAX_VALUE as kafka-clients' ProducerConfig caps it.
TEST(SwarmFindings, DeliveryTimeoutRaisedToLingerPlusRequestTimeoutStaysInItsRange) {
  const Config c = load_config({{"producer", {{"request.timeout.ms", 2147483647}, {"linger.ms", 30000}}}});
  EXPECT_EQ(c.producer.delivery_timeout, sim::Time::millis(2147483647));
  const Config reloaded = load_config(json::parse(effective_config(c).dump()));
  EXPECT_EQ(reloaded.producer.delivery_timeout, c.producer.delivery_timeout);
}

// Configs the swarm drew while keeper_stall was added (tests/swarm_findings/, each
// failing with the seed in its name before its fix).
// Returns the run's check_metrics verdict ("" when every check holds).
std::string run_finding(const std::string& file, std::uint64_t seed, sim::Metrics& m) {
  const char* root = std::getenv("PIPESIM_SOURCE_DIR");
  const std::string dir = std::string(root ? root : ".") + "/tests/swarm_findings/";
  SwarmCase sc;
  sc.raw = read_config_file(dir + file);
  note_faults(sc);
  m = run_scenario(load_config(sc.raw), seed);
  return check_metrics(sc, m);
}

// A task catching up inside its assign() reverts tolerateStateMismatch, a config
// change that restarts every task; the rebalance handing out assignments went on
// and gave the stale generation's partitions to task-3's new instance, still in
// SinkTask.start (a replica down): it polled and put() while its start queries ran
// ("invariant violated: put() while a put is in progress"). A member that left
// during the hand-out no longer gets the old generation's assignment.
TEST(SwarmFindings, ATaskRestartedWhileAssignmentsAreHandedOutWaitsForTheNextGeneration) {
  sim::Metrics m;
  std::string problems;
  ASSERT_NO_THROW(problems = run_finding("rebalance_reentered_by_a_restart_seed_159119.json", 159119, m));
  EXPECT_EQ(problems, "");
  // The path of the finding: poll timeouts, and restarts that replay what was put.
  EXPECT_GT(value(m, "poll_timeouts"), 0);
  EXPECT_GT(value(m, "duplicate_rows_by_entry.task_restart_replay"), 0);
}

// max.poll.interval.ms 20 ms: every put outlives the poll timeout and the same
// ranges are inserted again and again (54.6 million duplicate rows of 35,893
// records). The ledger's sweep attributed each id range's copies by comparing
// every pair (O(n^2) in ~112,000 copies): the run never finished. The sweep now
// keeps the active copies in insert order with per-copy and per-partition tallies.
TEST(SwarmFindings, ARangeInsertedTensOfThousandsOfTimesSettles) {
  sim::Metrics m;
  std::string problems;
  ASSERT_NO_THROW(problems = run_finding("ledger_settle_quadratic_seed_119660.json", 119660, m));
  EXPECT_EQ(problems, "");
  EXPECT_GT(value(m, "duplicate_rows"), 1000 * value(m, "records_produced"));
}

// The swarm reaches the pipeline's rare paths (FoundationDB's CODE_PROBE
// idea): over the configs of the CI run, some runs throw State MISMATCH,
// CONTAINS and ERROR State, fail a task, send to the DLQ, duplicate rows by
// each sink-side entry point and hit the dedup window. A generator drifted
// into configs where nothing happens would pass every invariant and test
// nothing. (Losses need a rare combination, an uncommitted insert then
// smaller polls with exactlyOnce and errors.tolerance=all, and are not
// required here.) Needs the full set of configs: skipped with fewer.
TEST(SwarmGenerator, ReachesTheRarePaths) {
  const std::int64_t configs = env_int("PIPESIM_SWARM_CONFIGS", kDefaultConfigs);
  if (configs < 1000) GTEST_SKIP() << "needs PIPESIM_SWARM_CONFIGS >= 1000";
  const auto swarm_seed = static_cast<std::uint64_t>(env_int("PIPESIM_SWARM_SEED", 1));
  std::map<std::string, int> runs_with;
  const std::vector<std::string> probes = {"state_mismatch_throws",
                                           "state_contains_throws",
                                           "error_state_throws",
                                           "task_failures",
                                           "dlq_records_in_clickhouse",
                                           "duplicate_rows_by_entry.task_restart_replay",
                                           "duplicate_rows_by_entry.insert_timeout_redelivery",
                                           "duplicate_rows_by_entry.state_reset",
                                           "poll_timeouts",
                                           "dedup_hits",
                                           "classifications.BEFORE_PROCESSING.OVER_LAPPING",
                                           "classifications.AFTER_PROCESSING.ZERO",
                                           "classifications.AFTER_PROCESSING.PREVIOUS"};
  // Stops at the first config by which every probe has been reached.
  const auto all_reached = [&] {
    return std::all_of(probes.begin(), probes.end(),
                       [&](const std::string& p) { return runs_with[p] > 0; });
  };
  for (std::int64_t i = 0; i < 1000 && !all_reached(); ++i) {
    const SwarmCase sc = draw_case(swarm_seed, i);
    const sim::Metrics m = run_scenario(load_config(sc.raw), sc.seed);
    for (const auto& p : probes) runs_with[p] += value(m, p) > 0 ? 1 : 0;
  }
  for (const auto& p : probes) EXPECT_GE(runs_with[p], 1) << p;
}

// Over 1,000 configs (the Release CI run's; drawing them runs nothing, so the sanitizer
// build, which runs fewer, checks the same 1,000), every documented key (config_keys(): the
// reference's list) was set, and each with a range at both of its ends; the keys without a
// range have values in free_form_values().
TEST(SwarmGenerator, DrawsEveryDocumentedKeyAtBothEndsOfItsRange) {
  using Kind = sim::OptionLister::Kind;
  constexpr std::int64_t kDraws = 1500;
  std::map<std::string, std::array<int, 3>> seen;  // [min, elsewhere, max]
  for (std::int64_t i = 0; i < kDraws; ++i) {
    const SwarmCase sc = draw_case(1, i);  // the configs the swarm runs (keys layer on)
    for (const auto& k : sc.drawn) ++seen[k.path][static_cast<std::size_t>(k.end + 1)];
  }
  for (const auto& k : config_keys()) {
    const std::string path = key_path(k);
    const auto& s = seen[path];
    EXPECT_GT(s[0] + s[1] + s[2], 0) << path << " was never drawn";
    const bool ranged = k.row.kind == Kind::INTEGER || k.row.kind == Kind::REAL ||
                        k.row.kind == Kind::MILLIS || k.row.kind == Kind::DURATION;
    if (ranged) {
      EXPECT_GT(s[0], 0) << path << " never drawn at its minimum " << k.row.range();
      EXPECT_GT(s[2], 0) << path << " never drawn at its maximum " << k.row.range();
    }
    if (k.row.kind == Kind::TEXT || k.row.kind == Kind::ANY) {
      EXPECT_TRUE(free_form_values().count(path)) << path << ": give it values in free_form_values()";
    }
  }
}

// The generator really reaches the extremes the swarm is meant to cover.
TEST(SwarmGenerator, CoversTheExtremeValuesAndEveryFaultKind) {
  std::map<std::string, int> seen;
  for (std::int64_t i = 0; i < 1000; ++i) {
    const SwarmCase sc = draw_case(1, i);
    const json& r = sc.raw;
    if (r["kafka"]["num.partitions"] == 1) ++seen["1 partition"];
    if (r["kafka"]["num.partitions"] == 64) ++seen["64 partitions"];
    if (r["connect"].value("max.poll.records", 0) == 1) ++seen["max.poll.records 1"];
    if (r["clickhouse"].value("replicated_deduplication_window", -1) == 0) ++seen["window 0"];
    if (r["connect"].value("offset.flush.interval.ms", 0) == 1000) ++seen["commit 1s"];
    if (r["connect"].value("offset.flush.interval.ms", 0) == 600000) ++seen["commit 10m"];
    if (r["connect"]["workers"] == 3) ++seen["3 workers"];
    if (r["connect"].contains("max.poll.interval.ms")) ++seen["short max.poll.interval.ms"];
    if (r["connector"]["exactlyOnce"] == true) ++seen["exactlyOnce"];
    if (r["connector"]["exactlyOnce"] == false) ++seen["at least once"];
    if (r["connector"]["errors.tolerance"] == "all") ++seen["errors.tolerance all"];
    if (r["connector"]["errors.tolerance"] == "none") ++seen["errors.tolerance none"];
    if (r["connector"].contains("errors.deadletterqueue.topic.name")) ++seen["DLQ"];
    for (const auto& k : sc.kinds) ++seen["fault " + k];
  }
  for (const char* want :
       {"1 partition", "64 partitions", "max.poll.records 1", "window 0", "commit 1s", "commit 10m",
        "3 workers", "short max.poll.interval.ms", "exactlyOnce", "at least once",
        "errors.tolerance all", "errors.tolerance none", "DLQ"}) {
    EXPECT_GE(seen[want], 20) << want;
  }
  for (const auto& kind : fault_kinds()) EXPECT_GE(seen["fault " + kind], 20) << kind;
}

}  // namespace
}  // namespace pipesim::pipeline
