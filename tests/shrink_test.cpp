// pipesim shrink: delta debugging (sim/experiment/ddmin), the run condition,
// the realised fault timeline as scheduled faults (it reproduces a run bit for
// bit), and a known 2-fault cause found among 30 planted irrelevant faults.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "models/pipeline/config.h"
#include "models/pipeline/scenario.h"
#include "models/pipeline/shrink.h"
#include "sim/config/options.h"
#include "sim/experiment/ddmin.h"
#include "tests/lab_run.h"
#include "tests/under_sanitizer.h"

namespace pipesim {
namespace {

using Subset = std::vector<std::size_t>;

bool has(const Subset& s, std::size_t x) { return std::find(s.begin(), s.end(), x) != s.end(); }

TEST(Ddmin, FindsTheTwoElementsThatTogetherCauseIt) {
  int tests = 0;
  const Subset found = sim::ddmin(30, [&](const Subset& s) {
    ++tests;
    return has(s, 3) && has(s, 17);
  });
  EXPECT_EQ(found, (Subset{3, 17}));
  // Far fewer tests than the 2^30 subsets: ddmin's worst case is quadratic,
  // here 2 elements among 30 take a few dozen.
  EXPECT_LT(tests, 80);
}

TEST(Ddmin, ResultIsOneMinimal) {
  // Holds when at least 3 of the even elements are there: any 3 of them is a
  // 1-minimal answer (dropping one breaks it).
  const auto holds = [](const Subset& s) {
    return std::count_if(s.begin(), s.end(), [](std::size_t x) { return x % 2 == 0; }) >= 3;
  };
  const Subset found = sim::ddmin(20, holds);
  EXPECT_EQ(found.size(), 3u);
  EXPECT_TRUE(holds(found));
  for (std::size_t i = 0; i < found.size(); ++i) {
    Subset without = found;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
    EXPECT_FALSE(holds(without));
  }
}

TEST(Ddmin, AConditionThatNeedsNothingReducesToTheEmptySet) {
  EXPECT_TRUE(sim::ddmin(10, [](const Subset&) { return true; }).empty());
  EXPECT_EQ(sim::ddmin(1, [](const Subset& s) { return !s.empty(); }), (Subset{0}));
}

TEST(RunCondition, ParsesClausesAndNamesWhatIsWrong) {
  const auto c = pipeline::parse_run_condition("lost_records > 0 and duplicate_rows>=10");
  ASSERT_EQ(c.clauses.size(), 2u);
  EXPECT_EQ(c.clauses[1].metric, "duplicate_rows");
  EXPECT_EQ(c.clauses[1].op, ">=");
  EXPECT_EQ(c.clauses[1].value, 10.0);
  EXPECT_TRUE(pipeline::holds(c, {{"lost_records", 1}, {"duplicate_rows", 10}}));
  EXPECT_FALSE(pipeline::holds(c, {{"lost_records", 1}, {"duplicate_rows", 9}}));
  EXPECT_TRUE(pipeline::holds(
      pipeline::parse_run_condition("state_contains_throws >= 1 && lost_records == 500"),
      {{"state_contains_throws", 2}, {"lost_records", 500}}));
  const auto error = [](const std::string& text) {
    try {
      (void)pipeline::parse_run_condition(text);
    } catch (const sim::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("lost_record > 0"),
            "--until \"lost_record > 0\": unknown metric \"lost_record\"; did you mean "
            "\"lost_records\"? (a metric of "
            "one run, as in run --per-seed)");
  EXPECT_EQ(error("lost_records"),
            "--until \"lost_records\": expected METRIC OP NUMBER (OP one of > >= < <= == !=), "
            "found \"lost_records\"");
  EXPECT_EQ(error("lost_records > many"),
            "--until \"lost_records > many\": expected a number after \">\", found \"many\"");
}

// A few hours of Poisson faults of several kinds (with random targets and an
// exponential window): as scheduled faults they give the same run.
TEST(RealisedFaults, ReproduceTheRunBitForBit) {
  pipeline::Config c = pipeline::load_config(nlohmann::json::parse(R"({
    "workload": {"records_per_day": 4320000, "profile": "constant"},
    "producer": {"acks": "1"},
    "kafka": {"num.partitions": 2},
    "connect": {"tasks.max": 2},
    "faults": [
      {"kind": "broker_crash", "rate_per_day": 6, "duration": "1m"},
      {"kind": "worker_crash", "rate_per_day": 12},
      {"kind": "leader_change", "rate_per_day": 24, "duration_mean": "5s"},
      {"kind": "task_restart", "rate_per_day": 12}
    ],
    "run": {"duration": "3h", "drain": "10m"}
  })"));
  // Three seeds; one under the sanitizers (a run there is ~10x slower).
  const std::vector<std::uint64_t> seeds =
      testing_support::kUnderSanitizer ? std::vector<std::uint64_t>{1} : std::vector<std::uint64_t>{1, 2, 3};
  for (const std::uint64_t seed : seeds) {
    const sim::Metrics original = pipeline::run_scenario(c, seed);
    pipeline::Config explicit_faults = c;
    explicit_faults.faults = pipeline::realised_faults(c, seed);
    EXPECT_GE(explicit_faults.faults.size(), 3u);
    for (const auto& f : explicit_faults.faults) {
      EXPECT_TRUE(f.at.has_value());
      EXPECT_EQ(f.rate_per_day, 0.0);
    }
    // Written out and read back, as shrink's output is.
    const pipeline::Config reread = pipeline::load_config(
        nlohmann::json::parse(pipeline::effective_config(explicit_faults).dump()));
    const sim::Metrics again = pipeline::run_scenario(reread, seed);
    ASSERT_EQ(again.size(), original.size());
    for (std::size_t i = 0; i < original.size(); ++i)
      EXPECT_EQ(again[i].value, original[i].value) << original[i].name;
  }
}

// configs/lab/unknown_insert_then_smaller_polls_without_dlq.json: an insert
// of unknown outcome (insert_timeout, the server commits nothing) then a
// rebalance to a smaller max.poll.records: State CONTAINS, 500 records lost.
// Both are needed. Planted among 30 controlled leader changes (acks=all,
// idempotent: no loss of their own), shrink keeps exactly the two.
TEST(Shrink, FindsAPlantedTwoFaultCauseAmongThirtyIrrelevantFaults) {
  nlohmann::json raw = pipeline::lab_json("unknown_insert_then_smaller_polls_without_dlq.json");
  nlohmann::json faults = raw["faults"];
  for (int i = 0; i < 30; ++i)
    faults.push_back({{"kind", "leader_change"}, {"at", std::to_string(5 + 19 * i) + "s"}});
  raw["faults"] = faults;
  const pipeline::Config config = pipeline::load_config(raw);
  const auto condition = pipeline::parse_run_condition("lost_records > 0");
  ASSERT_TRUE(pipeline::holds(condition, pipeline::run_scenario(config, 1)));

  const auto all = pipeline::realised_faults(config, 1);
  ASSERT_EQ(all.size(), 32u);
  const auto found = pipeline::shrink_faults(
      config, 1, [&](const sim::Metrics& m) { return pipeline::holds(condition, m); }, all, 500);
  EXPECT_FALSE(found.out_of_runs);
  std::multiset<std::string> kinds;
  for (const auto& f : found.kept) kinds.insert(f.kind);
  EXPECT_EQ(kinds, (std::multiset<std::string>{"insert_timeout", "rebalance"}));
  EXPECT_LT(found.runs, 60);
  // The result reproduces: written out, read back, the seed still loses records.
  pipeline::Config result = config;
  result.faults = found.kept;
  const pipeline::Config reread =
      pipeline::load_config(nlohmann::json::parse(pipeline::effective_config(result).dump()));
  EXPECT_TRUE(pipeline::holds(condition, pipeline::run_scenario(reread, 1)));
  // Each kept fault is needed.
  for (std::size_t i = 0; i < found.kept.size(); ++i) {
    pipeline::Config without = reread;
    without.faults.erase(without.faults.begin() + static_cast<std::ptrdiff_t>(i));
    EXPECT_FALSE(pipeline::holds(condition, pipeline::run_scenario(without, 1)))
        << found.kept[i].kind;
  }
}

TEST(Shrink, StopsAtItsBudgetWithTheBestSoFar) {
  nlohmann::json raw = pipeline::lab_json("unknown_insert_then_smaller_polls_without_dlq.json");
  for (int i = 0; i < 30; ++i)
    raw["faults"].push_back({{"kind", "leader_change"}, {"at", std::to_string(5 + 19 * i) + "s"}});
  const pipeline::Config config = pipeline::load_config(raw);
  const auto condition = pipeline::parse_run_condition("lost_records > 0");
  const auto all = pipeline::realised_faults(config, 1);
  const auto found = pipeline::shrink_faults(
      config, 1, [&](const sim::Metrics& m) { return pipeline::holds(condition, m); }, all, 3);
  EXPECT_TRUE(found.out_of_runs);
  EXPECT_EQ(found.runs, 3);
  EXPECT_LE(found.kept.size(), all.size());
  pipeline::Config result = config;
  result.faults = found.kept;
  EXPECT_TRUE(pipeline::holds(condition, pipeline::run_scenario(result, 1)));
}

}  // namespace
}  // namespace pipesim
