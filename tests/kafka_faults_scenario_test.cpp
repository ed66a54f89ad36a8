// Whole-pipeline runs under the producer and broker faults (leader_change,
// leader_flapping, response_loss, broker_crash, producer_restart,
// manual_resend): determinism, common random numbers, conservation over many
// seeds, and an independent count of the producer's duplicates.
#include <gtest/gtest.h>

#include <string>

#include "metric_lookup.h"
#include "models/pipeline/config.h"
#include "models/pipeline/scenario.h"
#include "tests/under_sanitizer.h"

namespace pipesim::pipeline {
namespace {

using test_support::metric;

// Two hours of faults, half an hour under the sanitizers (where a run is ~10x slower):
// every claim below holds for each run, whatever its length.
Config with(const nlohmann::json& extra) {
  nlohmann::json raw = {{"workload", {{"records_per_day", 8640000}, {"profile", "constant"}}},
                        {"kafka", {{"num.partitions", 4}}},
                        {"connect", {{"tasks.max", 2}}},
                        {"run", {{"duration", testing_support::kUnderSanitizer ? "30m" : "2h"}, {"drain", "30m"}}}};
  raw.merge_patch(extra);
  return load_config(raw);
}

const nlohmann::json kAllKafkaFaults = nlohmann::json::parse(R"([
  {"kind": "leader_change", "rate_per_day": 100},
  {"kind": "leader_change", "rate_per_day": 30, "duration": "3m", "partitions": 1},
  {"kind": "leader_change", "rate_per_day": 30, "controlled": false, "partitions": [2]},
  {"kind": "leader_flapping", "rate_per_day": 10, "duration": "5m", "period": "7s"},
  {"kind": "response_loss", "rate_per_day": 50, "duration": "1m", "probability": 0.2},
  {"kind": "broker_crash", "rate_per_day": 30, "duration_mean": "2m"},
  {"kind": "producer_restart", "rate_per_day": 30},
  {"kind": "manual_resend", "rate_per_day": 30},
  {"kind": "worker_crash", "rate_per_day": 10}
])");

TEST(KafkaFaults, SameSeedGivesTheSameRun) {
  const Config c = with({{"faults", kAllKafkaFaults}});
  const sim::Metrics a = run_scenario(c, 11);
  const sim::Metrics b = run_scenario(c, 11);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].value, b[i].value) << a[i].name;
}

TEST(KafkaFaults, ProducerSettingsDoNotShiftTheWorkloadOrTheFaultTimeline) {
  // Common random numbers: only enable.idempotence differs.
  const sim::Metrics on = run_scenario(with({{"faults", kAllKafkaFaults}}), 5);
  const sim::Metrics off =
      run_scenario(with({{"faults", kAllKafkaFaults}, {"producer", {{"enable.idempotence", false}}}}), 5);
  EXPECT_EQ(metric(on, "records_produced"), metric(off, "records_produced"));
  for (const auto& kind : fault_kinds()) {
    EXPECT_EQ(metric(on, "faults_fired." + kind), metric(off, "faults_fired." + kind)) << kind;
  }
}

// The Release build checks 3 seeds of each setting, the sanitizer build 1.
constexpr std::uint64_t kConservationSeeds = testing_support::kUnderSanitizer ? 1 : 3;
// Seeds of the lost-answer tests.
constexpr std::uint64_t kLostAnswerSeeds = testing_support::kUnderSanitizer ? 1 : 5;

TEST(KafkaFaults, ConservationHoldsOverManySeedsAndSettings) {
  // settle() throws on a conservation violation; every id must also end in a
  // class: nothing may stay pending after the drain.
  const char* settings[] = {
      R"({})",
      // Followers that lag 250 ms: a failover with acks=1 often cuts acknowledged records.
      R"({"producer": {"acks": "1"}, "kafka": {"replication_latency": "500ms"}})",
      R"({"producer": {"enable.idempotence": false, "max.in.flight.requests.per.connection": 1}})",
      R"({"kafka": {"replication.factor": 2, "unclean.leader.election.enable": true}, "producer": {"acks": "1"}})",
      R"({"app": {"on_send_failure": "retry_table", "resend_policy": "check_by_key"}})",
      R"({"app": {"on_send_failure": "drop"}, "producer": {"linger.ms": 20}})",
      R"({"kafka": {"retention.ms": 300000, "log.segment.bytes": 1024000, "log.retention.check.interval.ms": 30000}})",
  };
  double dup = 0, truncated = 0, expired = 0, elections = 0;
  for (const char* s : settings) {
    nlohmann::json extra = nlohmann::json::parse(s);
    extra["faults"] = kAllKafkaFaults;
    const Config c = with(extra);
    for (std::uint64_t seed = 1; seed <= kConservationSeeds; ++seed) {
      const sim::Metrics m = run_scenario(c, seed);
      const double distinct = metric(m, "clickhouse_rows") - metric(m, "duplicate_rows");
      EXPECT_EQ(distinct + metric(m, "lost_records") + metric(m, "pending_records"),
                metric(m, "records_produced"))
          << s << " seed " << seed;
      EXPECT_EQ(metric(m, "pending_records"), 0) << s << " seed " << seed;
      dup += metric(m, "duplicate_rows_by_entry.producer_retry") + metric(m, "duplicate_rows_by_entry.manual_resend");
      truncated += metric(m, "kafka_truncated_records");
      expired += metric(m, "producer_expired_records");
      elections += metric(m, "leader_elections");
    }
  }
  // The faults really acted.
  EXPECT_GT(dup, 0);
  EXPECT_GT(truncated, 0);
  EXPECT_GT(expired, 0);
  // The leader changes alone (160 a day) give ~6.7 elections an hour in each of
  // the 7 settings' runs (half an hour each under the sanitizers): at least 10
  // per seed is far below that.
  EXPECT_GT(elections, 10 * static_cast<double>(kConservationSeeds));
}

// Random lost answers without idempotence: every retry whose first attempt
// had been appended adds one extra Kafka record, and without sink faults the
// sink inserts every Kafka record exactly once, so the duplicate rows must
// equal the extra Kafka records, counted independently at the broker.
const nlohmann::json kLostAnswers = nlohmann::json::parse(R"([
  {"kind": "response_loss", "rate_per_day": 100, "duration": "50s", "probability": 0.3, "connection": "stall"}
])");

TEST(KafkaFaults, WithoutIdempotenceDuplicatesEqualTheRetriedAppends) {
  const Config c = with({{"faults", kLostAnswers}, {"producer", {{"enable.idempotence", false}}}});
  double total = 0;
  for (std::uint64_t seed = 1; seed <= kLostAnswerSeeds; ++seed) {
    const sim::Metrics m = run_scenario(c, seed);
    const double extra_copies = metric(m, "kafka_records") - metric(m, "records_produced");
    EXPECT_EQ(metric(m, "duplicate_rows"), extra_copies) << "seed " << seed;
    EXPECT_EQ(metric(m, "duplicate_rows_by_entry.producer_retry"), extra_copies) << "seed " << seed;
    EXPECT_EQ(metric(m, "lost_records"), 0) << "seed " << seed;
    total += extra_copies;
  }
  EXPECT_GT(total, 0);
}

TEST(KafkaFaults, WithIdempotenceLostAnswersAddNoKafkaRecord) {
  const Config c = with({{"faults", kLostAnswers}});
  double retried = 0;
  for (std::uint64_t seed = 1; seed <= kLostAnswerSeeds; ++seed) {
    const sim::Metrics m = run_scenario(c, seed);
    EXPECT_EQ(metric(m, "kafka_records"), metric(m, "records_produced")) << "seed " << seed;
    EXPECT_EQ(metric(m, "duplicate_rows"), 0) << "seed " << seed;
    retried += metric(m, "producer_retried_records");
  }
  EXPECT_GT(retried, 0);  // the answers were lost and the batches retried
}

}  // namespace
}  // namespace pipesim::pipeline
