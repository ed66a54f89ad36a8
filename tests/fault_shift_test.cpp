// No estimate may depend on where within a second (or any internal step) a
// fault falls: shifting every fault of a scenario by +1 ms, +3.5 ms and
// +500 ms leaves each estimate within the 95% interval of the unshifted one
// (over the same seeds: the same arrivals, the faults a little later).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "models/pipeline/config.h"
#include "sim/config/duration.h"
#include "models/pipeline/scenario.h"
#include "sim/experiment/statistics.h"

namespace pipesim::pipeline {
namespace {

using nlohmann::json;

constexpr int kSeeds = 12;

double metric(const sim::Metrics& m, const std::string& name) {
  for (const auto& x : m) {
    if (x.name == name) return x.value;
  }
  ADD_FAILURE() << "no metric " << name;
  return 0;
}

// Each fault's "at" (in microseconds) moved by `shift_us`.
json shifted(json raw, std::int64_t shift_us) {
  for (auto& f : raw["faults"]) {
    const sim::Time at = sim::parse_duration(f["at"].get<std::string>()).value();
    f["at"] = std::to_string(at.us + shift_us) + "us";
  }
  return raw;
}

sim::SummaryStats estimate(const json& raw, const std::string& name) {
  const Config c = load_config(raw);
  std::vector<double> v;
  for (int s = 1; s <= kSeeds; ++s) v.push_back(metric(run_scenario(c, static_cast<std::uint64_t>(s)), name));
  return sim::summarize(v);
}

void expect_shift_invariant(const json& raw, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    const sim::SummaryStats base = estimate(raw, name);
    // The fault must matter: an estimate that is 0 everywhere tests nothing.
    EXPECT_GT(base.mean, 0) << name;
    for (const std::int64_t shift : {1000, 3500, 500000}) {
      const sim::SummaryStats moved = estimate(shifted(raw, shift), name);
      const double half = std::max(base.ci_hi - base.ci_lo, moved.ci_hi - moved.ci_lo) / 2;
      EXPECT_LE(std::abs(moved.mean - base.mean), half + 1e-9 * base.mean)
          << name << " shifted by " << shift << " us: " << moved.mean << " [" << moved.ci_lo << ", "
          << moved.ci_hi << "] against " << base.mean << " [" << base.ci_lo << ", " << base.ci_hi << "]";
    }
  }
}

// A scheduled fault of `kind` at `at`, with its parameters.
json fault(const std::string& kind, const std::string& at, json params = json::object()) {
  params["kind"] = kind;
  params["at"] = at;
  return params;
}

json base(double records_per_s, int partitions) {
  json raw = json::object();
  raw["run"] = {{"duration", "30m"}, {"drain", "10m"}};
  raw["workload"] = {{"profile", "constant"},
                     {"records_per_day", static_cast<std::int64_t>(records_per_s * 86400)}};
  raw["kafka"] = {{"num.partitions", partitions}, {"auto.leader.rebalance.enable", false}};
  raw["connect"] = {{"tasks.max", partitions}};
  return raw;
}

TEST(FaultShift, LeaderFlappingWithIdempotenceOff) {
  // The case: 45 min of flapping duplicated ~10,000 records when it
  // started 2 ms after a 1 s tick and none when it started on it.
  json raw = base(1000, 4);
  raw["run"]["duration"] = "1h";
  raw["producer"] = {{"enable.idempotence", false}};
  raw["faults"] = json::array({fault("leader_flapping", "5m", {{"duration", "45m"}, {"period", "20s"}})});
  expect_shift_invariant(raw, {"duplicate_rows", "producer_retried_records"});
}

TEST(FaultShift, BrokerCrashWithAcks1) {
  json raw = base(1000, 4);
  raw["producer"] = {{"acks", "1"}};
  raw["faults"] = json::array({fault("broker_crash", "10m", {{"target", "broker-0"}, {"duration", "1m"}})});
  expect_shift_invariant(raw, {"kafka_truncated_records", "lost_records"});
}

TEST(FaultShift, ResponseLoss) {
  json raw = base(1000, 4);
  raw["producer"] = {{"enable.idempotence", false}};
  raw["faults"] = json::array({fault("response_loss", "10m", {{"duration", "2s"}, {"probability", 1.0}})});
  expect_shift_invariant(raw, {"duplicate_rows"});
}

TEST(FaultShift, InsertTimeout) {
  json raw = base(1000, 4);
  raw["faults"] = json::array({fault("insert_timeout", "10m", {{"duration", "40s"}, {"server_commits", 1.0}})});
  expect_shift_invariant(raw, {"redeliveries", "dedup_hits"});
}

TEST(FaultShift, WorkerCrash) {
  json raw = base(1000, 4);
  raw["faults"] = json::array({fault("worker_crash", "10m", {{"target", "worker-0"}})});
  expect_shift_invariant(raw, {"duplicate_rows"});
}

}  // namespace
}  // namespace pipesim::pipeline
