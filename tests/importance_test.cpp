// Importance sampling of rare faults (sim/experiment/importance.h): the
// likelihood ratio by hand, its exactness over many seeds (E[w] = 1 and a
// reweighted count of fired faults recovers the real rate), and, on a
// scenario where both are affordable, agreement with plain Monte Carlo on the
// probability that a run loses records, with a much narrower interval.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "models/pipeline/config.h"
#include "models/pipeline/estimates.h"
#include "models/pipeline/fault_timeline.h"
#include "models/pipeline/scenario.h"
#include "sim/config/options.h"
#include "sim/experiment/importance.h"
#include "sim/experiment/statistics.h"
#include "tests/under_sanitizer.h"

namespace pipesim {
namespace {

sim::FaultSpec poisson(const std::string& kind, double rate) {
  sim::FaultSpec s;
  s.kind = kind;
  s.rate_per_day = rate;
  return s;
}

sim::FaultOccurrence at(sim::Time t, std::size_t spec) { return {t, spec, sim::Time{}, ""}; }

TEST(Importance, LikelihoodRatioByHand) {
  // worker_crash at 2/day tilted x3 over half a day, 4 arrivals:
  // (1/3)^4 · e^{(3 - 1)·2·0.5} = e^2 / 81. The broker_crash spec is not
  // tilted (its arrival does not count), the scheduled crash is not random.
  sim::FaultSpec scheduled;
  scheduled.kind = "worker_crash";
  scheduled.at = sim::Time::hours(1);
  const std::vector<sim::FaultSpec> real = {poisson("worker_crash", 2), poisson("broker_crash", 5),
                                            scheduled};
  const sim::Tilt tilt{{{"worker_crash", 3.0}}};
  const std::vector<sim::FaultOccurrence> schedule = {
      at(sim::Time::hours(1), 2), at(sim::Time::hours(2), 0), at(sim::Time::hours(3), 1),
      at(sim::Time::hours(4), 0), at(sim::Time::hours(5), 0), at(sim::Time::hours(6), 0)};
  EXPECT_NEAR(sim::likelihood_ratio(real, tilt, schedule, sim::Time::hours(12)),
              std::exp(2.0) / 81.0, 1e-12);
  // No arrival at all: e^{(f - 1)λT} = e^2.
  EXPECT_NEAR(sim::likelihood_ratio(real, tilt, {}, sim::Time::hours(12)), std::exp(2.0), 1e-12);
  // A factor below 1 (drawing fewer): 1 arrival at 0.5x over a day at 2/day: 2 · e^{-1}.
  EXPECT_NEAR(sim::likelihood_ratio(real, sim::Tilt{{{"worker_crash", 0.5}}},
                                    {at(sim::Time::hours(1), 0)}, sim::Time::days(1)),
              2.0 * std::exp(-1.0), 1e-12);
  EXPECT_EQ(sim::likelihood_ratio(real, sim::Tilt{}, schedule, sim::Time::hours(12)), 1.0);
  // Only the tilted kinds' Poisson rates change.
  const auto tilted = sim::tilt_specs(real, tilt);
  EXPECT_EQ(tilted[0].rate_per_day, 6.0);
  EXPECT_EQ(tilted[1].rate_per_day, 5.0);
  EXPECT_FALSE(tilted[2].rate_per_day > 0);
}

TEST(Importance, ReweightedCountsRecoverTheRealRate) {
  // worker_crash at 1.5/day drawn at 4x (6/day) over a day, 20,000 seeds: the
  // weights average 1 and the weighted count of arrivals averages 1.5, each
  // within its 99.9% interval; the tilted draws themselves average 6.
  const std::vector<sim::FaultSpec> real = {poisson("worker_crash", 1.5),
                                            poisson("broker_crash", 3)};
  const sim::Tilt tilt{{{"worker_crash", 4.0}}};
  const auto drawn = sim::tilt_specs(real, tilt);
  std::vector<double> weights, weighted_counts, counts;
  for (std::uint64_t seed = 1; seed <= 20000; ++seed) {
    const auto schedule = sim::build_fault_schedule(drawn, seed, sim::Time::days(1), nullptr);
    double n = 0;
    for (const auto& o : schedule) n += o.spec == 0 ? 1 : 0;
    const double w = sim::likelihood_ratio(real, tilt, schedule, sim::Time::days(1));
    weights.push_back(w);
    weighted_counts.push_back(w * n);
    counts.push_back(n);
  }
  const auto in = [](const sim::SummaryStats& s, double x) { return s.ci_lo <= x && x <= s.ci_hi; };
  const auto w = sim::summarize(weights, 0.999);
  const auto wn = sim::summarize(weighted_counts, 0.999);
  const auto n = sim::summarize(counts, 0.999);
  EXPECT_TRUE(in(w, 1.0)) << w.mean << " [" << w.ci_lo << ", " << w.ci_hi << "]";
  EXPECT_TRUE(in(wn, 1.5)) << wn.mean << " [" << wn.ci_lo << ", " << wn.ci_hi << "]";
  EXPECT_TRUE(in(n, 6.0)) << n.mean;
  // Kish's effective sample size (Σw)²/Σw² ≈ N / E[w²], and under the tilted
  // rates E[w²] = e^{λT(f-1)²/f} (the Poisson generating function):
  // 20,000 / e^{1.5·9/4} = 684.
  const double expected = 20000.0 * std::exp(-1.5 * 9.0 / 4.0);
  EXPECT_NEAR(sim::effective_sample_size(weights), expected, 0.15 * expected);
}

TEST(Importance, ParseTiltNamesWhatIsWrong) {
  const std::vector<std::string> kinds = {"worker_crash", "broker_crash"};
  const auto t = sim::parse_tilt("worker_crash=10,broker_crash=2.5", kinds);
  EXPECT_EQ(t.factors.at("worker_crash"), 10.0);
  EXPECT_EQ(t.factors.at("broker_crash"), 2.5);
  EXPECT_EQ(sim::format_tilt(t), "broker_crash=2.5,worker_crash=10");
  const auto error = [&](const std::string& text) {
    try {
      (void)sim::parse_tilt(text, kinds);
    } catch (const sim::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("worker_crsh=10"),
            "--importance \"worker_crsh=10\": \"worker_crsh\" is not a fault kind with a Poisson "
            "rate in this "
            "config (worker_crash, broker_crash); did you mean \"worker_crash\"?");
  EXPECT_EQ(error("worker_crash=0"),
            "--importance \"worker_crash=0\": worker_crash: expected a factor above 0 and at most "
            "1e6, found \"0\"");
  EXPECT_EQ(error("worker_crash=ten"),
            "--importance \"worker_crash=ten\": worker_crash: expected a factor above 0 and at "
            "most 1e6, found "
            "\"ten\"");
  EXPECT_EQ(error("worker_crash"),
            "--importance \"worker_crash\": expected KIND=FACTOR[,KIND=FACTOR...], found "
            "\"worker_crash\"");
  EXPECT_EQ(error("worker_crash=2,worker_crash=3"),
            "--importance \"worker_crash=2,worker_crash=3\": worker_crash is given twice");
  EXPECT_EQ(sim::parse_tilt("broker_crash=1e6", kinds).factors.at("broker_crash"), 1e6);
}

// 1 record/s into one partition (configs/scenarios/rare_loss.json with 10-minute runs); the
// application drops a record whose send failed (app.on_send_failure=drop); a leader change that
// leaves the partition without a leader for 150 s (past delivery.timeout.ms, 120 s) loses the
// records that expire. Such changes come at 1.44 a day: a 10-minute run sees
// one with probability 1 - e^{-0.01} ≈ 0.01.
pipeline::Config rare_loss() {
  return pipeline::load_config(nlohmann::json::parse(R"({
    "workload": {"records_per_day": 86400, "profile": "constant"},
    "kafka": {"num.partitions": 1},
    "app": {"on_send_failure": "drop"},
    "connect": {"tasks.max": 1},
    "faults": [{"kind": "leader_change", "rate_per_day": 1.44, "duration": "150s", "partitions": "all"}],
    "run": {"duration": "10m", "drain": "5m"}
  })"));
}

TEST(Importance, AgreesWithPlainMonteCarloOnARareLossWithANarrowerInterval) {
  if (testing_support::kUnderSanitizer)
    GTEST_SKIP() << "4,000 runs (2 s here); run in the Release stage";
  const pipeline::Config real = rare_loss();
  const sim::Tilt tilt{{{"leader_change", 100.0}}};  // drawn at 144/day: a change in ~63% of runs
  const pipeline::Config drawn = pipeline::tilted_config(real, tilt);
  constexpr std::uint64_t kSeeds = 2000;
  std::vector<sim::Metrics> plain, tilted;
  std::vector<double> weights;
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    plain.push_back(pipeline::run_scenario(real, seed));
    tilted.push_back(pipeline::run_scenario(drawn, seed));
    weights.push_back(pipeline::importance_weight(real, tilt, seed));
  }
  const double days = 10.0 / 1440.0;
  const auto mc = *pipeline::estimate(plain, "lost_records_probability", days);
  const auto is = *pipeline::estimate(tilted, "lost_records_probability", days, 0.95, &weights);
  std::cout << "plain Monte Carlo: " << mc.value << " [" << mc.lo << ", " << mc.hi << "] ("
            << mc.successes << " of " << kSeeds << " runs); importance sampling: " << is.value
            << " [" << is.lo << ", " << is.hi << "], effective sample size "
            << sim::effective_sample_size(weights) << "\n";
  // Plain Monte Carlo sees a loss in about 1% of runs (Wilson interval).
  EXPECT_GT(mc.successes, 5.0);
  EXPECT_LT(mc.value, 0.03);
  // They agree: the weighted estimate lies in plain Monte Carlo's interval,
  // and the two intervals overlap.
  EXPECT_GE(is.value, mc.lo) << "IS " << is.value << " [" << is.lo << ", " << is.hi << "], MC "
                             << mc.value << " [" << mc.lo << ", " << mc.hi << "]";
  EXPECT_LE(is.value, mc.hi);
  EXPECT_LE(is.lo, mc.hi);
  EXPECT_GE(is.hi, mc.lo);
  // With the same number of runs the weighted interval is at least 5x narrower.
  EXPECT_GT((mc.hi - mc.lo) / (is.hi - is.lo), 5.0)
      << "MC width " << mc.hi - mc.lo << ", IS width " << is.hi - is.lo;
}

}  // namespace
}  // namespace pipesim
