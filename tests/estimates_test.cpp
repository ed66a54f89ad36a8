// Derived estimates, paired comparison and lint findings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "models/pipeline/config.h"
#include "models/pipeline/estimates.h"
#include "models/pipeline/lint.h"
#include "models/pipeline/metrics.h"
#include "models/pipeline/scenario.h"
#include "sim/experiment/statistics.h"
#include "tests/under_sanitizer.h"

namespace pipesim::pipeline {
namespace {

sim::Metrics run_with(std::initializer_list<std::pair<const char*, double>> values) {
  sim::Metrics m;
  for (const auto& name : metric_names()) m.push_back({name, 0.0});
  for (const auto& [name, v] : values) {
    for (auto& x : m) {
      if (x.name == name) x.value = v;
    }
  }
  return m;
}

TEST(Estimates, PerDayScalesTheMeanAndItsIntervalOverWholeDays) {
  // Two 2-day runs with 10 and 30 duplicate rows: 20 per run = 10 per day.
  const std::vector<sim::Metrics> runs = {run_with({{"duplicate_rows", 10}}), run_with({{"duplicate_rows", 30}})};
  const auto per_run = estimate(runs, "duplicate_rows", 2.0);
  const auto per_day = estimate(runs, "duplicate_rows_per_day", 2.0);
  ASSERT_TRUE(per_run && per_day);
  EXPECT_DOUBLE_EQ(per_run->value, 20);
  EXPECT_DOUBLE_EQ(per_day->value, 10);
  EXPECT_DOUBLE_EQ(per_day->hi, per_run->hi / 2);
  EXPECT_DOUBLE_EQ(estimate(runs, "duplicate_rows_per_month", 2.0)->value, 300);
}

TEST(Estimates, AWindowShorterThanWholeDaysReportsPerWindowAndNeverPerDay) {
  // 6-hour runs with 10 and 30 duplicate rows: 20 per window. Scaling that to
  // 80 a day would take the night's traffic for the day's (the profile is
  // not flat), so there is no per-day or per-month figure.
  const std::vector<sim::Metrics> runs = {run_with({{"duplicate_rows", 10}}),
                                          run_with({{"duplicate_rows", 30}})};
  EXPECT_FALSE(estimate(runs, "duplicate_rows_per_day", 0.25));
  EXPECT_FALSE(estimate(runs, "duplicate_rows_per_month", 0.25));
  EXPECT_FALSE(estimate(runs, "lost_records_probability_per_month", 0.25));
  EXPECT_FALSE(estimate(runs, "duplicate_rows_per_day", 1.5));  // nor a day and a half
  const auto window = estimate(runs, "duplicate_rows_per_window", 0.25);
  ASSERT_TRUE(window);
  EXPECT_DOUBLE_EQ(window->value, 20);
  EXPECT_EQ(in_period("duplicate_rows_per_day", 0.25), "duplicate_rows_per_window");
  EXPECT_EQ(in_period("duplicate_rows_per_day", 1.0), "duplicate_rows_per_day");
  EXPECT_EQ(in_period("pending_records", 0.25), "pending_records");
  EXPECT_EQ(period_words(0.25, 18), "per 6h window from 18:00");
  EXPECT_EQ(period_words(0.25), "per 6h window");
  EXPECT_EQ(period_words(3.0, 18), "per day");
  EXPECT_EQ(period_problem("lost_records_per_day", 0.25),
            "lost_records_per_day needs whole days: run.duration is 6h, and a window's figure "
            "scaled to a day is not the day's (the traffic profile is not flat); use "
            "lost_records_per_window, or a run.duration of whole days");
  EXPECT_NE(period_problem("lost_records_probability_per_month", 0.25)
                .find("use lost_records_probability,"),
            std::string::npos);
  EXPECT_EQ(period_problem("lost_records_per_day", 2.0), "");
  EXPECT_EQ(period_problem("lost_records_per_crash", 0.25), "");
}

TEST(Estimates, ProbabilityIsTheShareOfRunsAboveZeroAndPerMonthCompoundsIt) {
  // 1 of 4 one-day runs lost records: 0.25 (Wilson), and a month of 30 such
  // days loses some with probability 1 - 0.75^30.
  const std::vector<sim::Metrics> runs = {run_with({{"lost_records", 7}}), run_with({}), run_with({}), run_with({})};
  const auto p = estimate(runs, "lost_records_probability", 1.0);
  ASSERT_TRUE(p);
  EXPECT_DOUBLE_EQ(p->value, 0.25);
  EXPECT_EQ(p->successes, 1);
  EXPECT_EQ(p->trials, 4);
  const auto [lo, hi] = sim::wilson_interval(1, 4);
  EXPECT_DOUBLE_EQ(p->lo, lo);
  const auto month = estimate(runs, "lost_records_probability_per_month", 1.0);
  ASSERT_TRUE(month);
  EXPECT_NEAR(month->value, 1 - std::pow(0.75, 30), 1e-12);
  EXPECT_NEAR(month->hi, 1 - std::pow(1 - hi, 30), 1e-12);
  // Runs of 2 days: 15 of them make a month.
  EXPECT_NEAR(estimate(runs, "lost_records_probability_per_month", 2.0)->value,
              1 - std::pow(0.75, 15), 1e-12);
  // Weighted (importance sampling): the mean of w·1{x > 0}.
  const std::vector<double> w = {0.1, 2.0, 1.0, 0.9};
  EXPECT_NEAR(estimate(runs, "lost_records_probability", 1.0, 0.95, &w)->value, 0.1 / 4, 1e-15);
  EXPECT_FALSE(estimate(runs, "lost_recordz_probability", 1.0));
}

TEST(Estimates, CrashShareIsAWilsonProportionOverAllEpisodes) {
  // 3 + 5 crash episodes, 2 + 4 of them ended in State MISMATCH: 6 of 8.
  const std::vector<sim::Metrics> runs = {
      run_with({{"crash_episodes", 3}, {"crash_episodes_state_mismatch", 2}}),
      run_with({{"crash_episodes", 5}, {"crash_episodes_state_mismatch", 4}})};
  const auto e = estimate(runs, "state_mismatch_per_crash", 1.0);
  ASSERT_TRUE(e);
  EXPECT_DOUBLE_EQ(e->value, 0.75);
  EXPECT_EQ(e->successes, 6);
  EXPECT_EQ(e->trials, 8);
  const auto [lo, hi] = sim::wilson_interval(6, 8);
  EXPECT_DOUBLE_EQ(e->lo, lo);
  EXPECT_DOUBLE_EQ(e->hi, hi);
}

TEST(Estimates, PerCrashAndPerMillionAreRatiosOfSums) {
  const std::vector<sim::Metrics> runs = {
      run_with({{"duplicate_rows", 100}, {"crash_episodes", 1}, {"records_produced", 1e6}}),
      run_with({{"duplicate_rows", 500}, {"crash_episodes", 3}, {"records_produced", 3e6}})};
  EXPECT_DOUBLE_EQ(estimate(runs, "duplicate_rows_per_crash", 1.0)->value, 600.0 / 4);
  EXPECT_DOUBLE_EQ(estimate(runs, "duplicate_rows_per_million", 1.0)->value, 600.0 / 4e6 * 1e6);
  const auto e = estimate(runs, "duplicate_rows_per_crash", 1.0);
  EXPECT_LE(e->lo, e->value);
  EXPECT_GE(e->hi, e->value);
}

TEST(Estimates, NoIntervalFromOneSeedOrFewerThanThreeEpisodesButAProportionHasOne) {
  const std::vector<sim::Metrics> one = {
      run_with({{"duplicate_rows", 100}, {"crash_episodes", 4}})};
  EXPECT_EQ(no_interval(*estimate(one, "duplicate_rows_per_day", 1.0), 1),
            "one seed gives no interval");
  // A proportion's Wilson interval holds for one run: 0 of 1 run.
  EXPECT_EQ(no_interval(*estimate(one, "lost_records_probability", 1.0), 1), "");
  // 4 episodes in one seed: the ratio's interval needs seeds too.
  EXPECT_EQ(no_interval(*estimate(one, "duplicate_rows_per_crash", 1.0), 1),
            "one seed gives no interval");
  const std::vector<sim::Metrics> two = {
      run_with({{"duplicate_rows", 100}, {"crash_episodes", 1}}),
      run_with({{"duplicate_rows", 300}, {"crash_episodes", 1}})};
  EXPECT_EQ(no_interval(*estimate(two, "duplicate_rows_per_crash", 1.0), 2),
            "2 episodes give no interval: it takes 3");
  EXPECT_EQ(no_interval(*estimate(two, "duplicate_rows_per_day", 1.0), 2), "");
}

TEST(Estimates, UnknownNamesAreRejected) {
  const std::vector<sim::Metrics> runs = {run_with({})};
  EXPECT_FALSE(estimate(runs, "no_such_metric", 1.0));
  EXPECT_FALSE(estimate(runs, "no_such_metric_per_day", 1.0));
  EXPECT_TRUE(estimate(runs, "inserts_per_million", 1.0));
}

TEST(Compare, PairedIntervalIsNarrowerThanUnpairedOnTheSameSeeds) {
  // Commit every 60 s vs every 20 s, same seeds: both see the same arrivals
  // and the same crash times, so the per-seed differences vary far less
  // than the two samples do on their own.
  nlohmann::json raw = {{"workload", {{"records_per_day", 86400000}, {"profile", "constant"}}},
                        {"kafka", {{"num.partitions", 2}}},
                        {"connect", {{"tasks.max", 2}}},
                        {"faults", {{{"kind", "worker_crash"}, {"rate_per_day", 48}}}},
                        {"run", {{"duration", "2h"}, {"drain", "10m"}}}};
  const Config a = load_config(raw);
  raw["connect"]["offset.flush.interval.ms"] = 20000;
  const Config b = load_config(raw);
  // 20 seeds; 6 under the sanitizers (a run there is ~10x slower).
  const std::uint64_t seeds = testing_support::kUnderSanitizer ? 6 : 20;
  std::vector<double> da, db;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    da.push_back(metric_column({run_scenario(a, seed)}, "duplicate_rows")[0]);
    db.push_back(metric_column({run_scenario(b, seed)}, "duplicate_rows")[0]);
  }
  const sim::SummaryStats paired = sim::paired_difference(da, db);
  const auto [lo, hi] = sim::welch_difference_interval(da, db);
  EXPECT_LT(paired.ci_hi - paired.ci_lo, hi - lo);
  EXPECT_LT(paired.mean, 0);  // committing 3x as often replays fewer records
}

bool has(const std::vector<Finding>& findings, const std::string& id) {
  return std::any_of(findings.begin(), findings.end(), [&](const Finding& f) { return f.id == id; });
}

TEST(Lint, NamesEachHazardOfItsConfig) {
  QuickProfile calm;
  calm.inserts_per_s = 1;  // window of 1000 blocks lasts 1000 s
  // Every producer path closed too: one batch of a partition in flight, the
  // application re-sends only what ClickHouse lacks.
  const nlohmann::json clean = {{"connector", {{"exactlyOnce", true}, {"tolerateStateMismatch", true}}},
                                {"producer", {{"max.in.flight.requests.per.connection", 1}}},
                                {"app", {{"on_send_failure", "retry_table"}, {"resend_policy", "check_by_key"}}},
                                {"kafka", {{"min.insync.replicas", 2}}}};
  const Config base = load_config(clean);
  EXPECT_TRUE(lint(base, calm).empty());

  const auto with = [&](const nlohmann::json& patch) {
    nlohmann::json raw = clean;
    raw.merge_patch(patch);
    return lint(load_config(raw, true), calm);
  };
  EXPECT_TRUE(has(with({{"connector", {{"tolerateStateMismatch", false}}}}), "exactly_once_without_tolerance"));
  EXPECT_TRUE(has(with({{"connector", {{"errors.tolerance", "all"}}}}), "silent_drop"));
  EXPECT_FALSE(has(with({{"connector", {{"errors.tolerance", "all"}, {"errors.log.enable", true}}}}), "silent_drop"));
  EXPECT_TRUE(has(with({{"clickhouse", {{"replicated_deduplication_window", 0}}}}), "dedup_window_disabled"));
  EXPECT_TRUE(has(with({{"connector", {{"bufferCount", 1000}}}}), "buffer_count_with_exactly_once"));
  EXPECT_TRUE(has(with({{"producer", {{"acks", "1"}}}}), "acks_not_all"));
  EXPECT_TRUE(has(with({{"kafka", {{"min.insync.replicas", 1}}}}), "min_insync_replicas_1"));
  EXPECT_TRUE(has(with({{"kafka", {{"unclean.leader.election.enable", true}}}}), "unclean_leader_election"));
  EXPECT_TRUE(has(with({{"kafka", {{"producer.id.expiration.ms", 60000}}}}), "producer_path_producer_id_expired"));
  EXPECT_TRUE(has(with({{"producer", {{"enable.idempotence", false}}}}), "producer_path_not_idempotent"));
  EXPECT_TRUE(has(with({{"producer", {{"max.in.flight.requests.per.connection", 5}}}}),
                  "producer_path_epoch_bump_resend"));
  EXPECT_TRUE(has(with({{"app", {{"on_send_failure", "retry"}}}}), "producer_path_application_resend"));
  EXPECT_TRUE(has(with({{"kafka", {{"unclean.leader.election.enable", true}}}}), "producer_path_after_truncation"));
  // 8 partitions on 1 task, 4 queries each with exactlyOnce, 30 s each: 960 s > 300 s.
  EXPECT_TRUE(has(with({{"connect", {{"tasks.max", 1}}}}), "put_may_outlive_max_poll_interval"));
  EXPECT_FALSE(has(with({{"connect", {{"tasks.max", 8}}}}), "put_may_outlive_max_poll_interval"));
}

TEST(Lint, RunAndLintNameTheSameOpenProducerPathsEachWithTheSettingThatClosesIt) {
  // The defaults: idempotence on with 5 in flight (KAFKA-14034), the
  // application re-sends a failed send.
  const Config defaults = load_config(nlohmann::json::object());
  const std::vector<std::string> entries = open_entry_points(defaults, 1);
  ASSERT_FALSE(entries.empty());
  EXPECT_EQ(entries.front(), "producer_retry (epoch_bump_resend, application_resend)");
  QuickProfile calm;
  calm.inserts_per_s = 1;
  std::vector<std::string> lint_paths;
  for (const auto& f : lint(defaults, calm)) {
    if (f.opens.rfind("producer_retry.", 0) == 0) lint_paths.push_back(f.opens.substr(15));
  }
  EXPECT_EQ(lint_paths, (std::vector<std::string>{"epoch_bump_resend", "application_resend"}));
  for (const auto& f : hazards(defaults, 1)) {
    if (f.id == "producer_path_epoch_bump_resend") {
      EXPECT_EQ(f.closed_by, (std::vector<std::string>{"producer.max.in.flight.requests.per.connection=1"}));
    }
    if (f.id == "producer_path_application_resend") {
      EXPECT_EQ(f.closed_by,
                (std::vector<std::string>{"app.on_send_failure=retry_table", "app.resend_policy=check_by_key"}));
    }
  }
  // Idempotence off: the retry path is not_idempotent, and epoch bumps are gone.
  const Config plain = load_config({{"producer", {{"enable.idempotence", false}}}, {"app", {{"on_send_failure", "drop"}}}});
  EXPECT_EQ(open_entry_points(plain, 1).front(), "producer_retry (not_idempotent)");
}

// run's headline line and lint come from one function: what run lists open is
// exactly what lint's findings open, at the same insert rate.
TEST(Lint, RunsOpenLineIsWhatLintsFindingsOpen) {
  for (const nlohmann::json& raw :
       {nlohmann::json::object(), nlohmann::json{{"producer", {{"acks", "1"}, {"enable.idempotence", false}}}},
        nlohmann::json{{"connector", {{"exactlyOnce", true}, {"errors.tolerance", "all"}}}},
        nlohmann::json{{"operator", {{"remediation", "delete_state_row"}}}, {"connector", {{"exactlyOnce", true}}}}}) {
    const Config c = load_config(raw, true);
    QuickProfile p;
    p.inserts_per_s = 400;
    std::set<std::string> from_lint, from_run;
    for (const auto& f : lint(c, p)) {
      from_lint.insert(f.opens.rfind("producer_retry.", 0) == 0 ? f.opens.substr(15) : f.opens);
    }
    for (const auto& e : open_entry_points(c, 400)) {
      if (e.rfind("producer_retry (", 0) == 0) {
        std::string paths = e.substr(16, e.size() - 17);
        for (std::size_t at = 0; at != std::string::npos;) {
          const auto comma = paths.find(", ", at);
          from_run.insert(paths.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
          at = comma == std::string::npos ? comma : comma + 2;
        }
      } else {
        from_run.insert(e);
      }
    }
    EXPECT_EQ(from_lint, from_run) << raw.dump();
  }
}

// With errors.tolerance=all the sink swallows a replay's State MISMATCH and
// reports the batch (v1.3.9 Utils.handleException): the task never stops, so
// lint must not say it does.
TEST(Lint, AnExactlyOnceConnectorWithToleranceAllReportsInsteadOfStopping) {
  QuickProfile p;
  p.inserts_per_s = 1;
  const auto ids = [&](const nlohmann::json& raw) {
    std::map<std::string, std::string> out;
    for (const auto& f : lint(load_config(raw, true), p)) out[f.id] = f.opens;
    return out;
  };
  const auto dlq = ids({{"connector", {{"exactlyOnce", true}, {"errors.tolerance", "all"},
                                       {"errors.deadletterqueue.topic.name", "dlq"}}}});
  EXPECT_EQ(dlq.count("exactly_once_without_tolerance"), 0u);
  EXPECT_EQ(dlq.at("exactly_once_errors_reported"), "dlq_only");
  const auto none = ids({{"connector", {{"exactlyOnce", true}, {"errors.tolerance", "all"}, {"errors.log.enable", true}}}});
  EXPECT_EQ(none.at("exactly_once_errors_reported"), "dropped_no_dlq");
  const auto stops = ids({{"connector", {{"exactlyOnce", true}}}});
  EXPECT_EQ(stops.at("exactly_once_without_tolerance"), "state_mismatch_stop");
}

TEST(Lint, DedupWindowTurnoverComparesWindowLifetimeWithRedeliveryDelay) {
  // 1000 blocks at 20 inserts/s last 50 s; a redelivery comes up to
  // 30 s (socket_timeout) + 60 s (offset flush) = 90 s later.
  const Config c = load_config({{"connector", {{"exactlyOnce", true}, {"tolerateStateMismatch", true}}},
                                {"kafka", {{"min.insync.replicas", 2}}}});
  QuickProfile busy;
  busy.inserts_per_s = 20;
  EXPECT_TRUE(has(lint(c, busy), "dedup_window_turnover"));
  QuickProfile quiet;
  quiet.inserts_per_s = 10;  // 100 s > 90 s
  EXPECT_FALSE(has(lint(c, quiet), "dedup_window_turnover"));
}

TEST(Lint, QuickProfileSeesEveryCrashStopAnExactlyOnceConnector) {
  const Config c = load_config({{"workload", {{"records_per_day", 8640000}, {"profile", "constant"}}},
                                {"kafka", {{"num.partitions", 2}}},
                                {"connect", {{"tasks.max", 2}}},
                                {"connector", {{"exactlyOnce", true}}}});
  const QuickProfile p = quick_profile(c, 5);
  EXPECT_GT(p.crashes, 3);
  // One worker runs both tasks (50 records/s each). A crash more than ~10 s
  // (500 records, the first replay poll) after the last commit stops a task
  // at its restart: State MISMATCH when it fell between puts (AFTER_PROCESSING
  // stored), the error state when it cut an insert short (BEFORE_PROCESSING).
  // Commits are 60 s apart, so ~5 crashes in 6 stop one or both.
  EXPECT_GE(p.crashes_state_mismatch + p.crashes_error_state, p.crashes - 1);
  // A put (15 ms insert + two 1 ms Keeper requests + 1 read and 2 writes of
  // the state) lasts longer than the 20 ms between records: the task is
  // nearly always inside one, so crashes do cut inserts short.
  EXPECT_GT(p.crashes_error_state, 0);
}

}  // namespace
}  // namespace pipesim::pipeline
