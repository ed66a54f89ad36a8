// Config loading (docs/model.md §7, §8, §9): the empty config is the production
// baseline; a bad config is refused with a message that names the JSON path,
// what was expected and what was found; --set overrides; the Connect REST form
// of a connector; the effective config round-trips with the same digest.
//
// Every expected message below is written from the code's intent (the path,
// the range declared in the option's visit(), the value as JSON), not copied
// from program output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "models/pipeline/config.h"
#include "models/workload/workload.h"
#include "sim/config/duration.h"
#include "sim/config/options.h"
#include "tests/config_error.h"

namespace {

using nlohmann::json;
using pipesim::pipeline::apply_override;
using pipesim::pipeline::Config;
using pipesim::pipeline::config_digest;
using pipesim::pipeline::effective_config;
using pipesim::pipeline::load_config;
using pipesim::pipeline::parse_config_text;
using pipesim::pipeline::read_config_file;
using pipesim::sim::ConfigError;
using pipesim::sim::Time;

using pipesim::testing::error_of;

std::string load_error(const json& raw) {
  return error_of([&] { (void)load_config(raw); });
}

std::string override_error(json raw, const std::string& assignment) {
  return error_of([&] { apply_override(raw, assignment); });
}

Config load_text(const char* text) { return load_config(json::parse(text)); }

// The effective config as a plain json (key order does not matter for ==).
json effective(const Config& c) { return json::parse(effective_config(c).dump()); }

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// A scratch directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "pipesim_config_test_XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] std::string file(const std::string& name, const std::string& content) const {
    const std::string p = (path_ / name).string();
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  [[nodiscard]] std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// ---------------------------------------------------------------------------------------------
// The production baseline (docs/model.md §8)

TEST(ConfigBaseline, EmptyConfigIsTheProductionBaseline) {
  const Config c = load_config(json::object());

  // Workload: 200 M records/day on the daily production profile.
  EXPECT_EQ(c.workload.records_per_day, 200'000'000);
  EXPECT_EQ(c.workload.profile, json("production"));
  EXPECT_EQ(c.workload.record_bytes, 1024);

  // kafka-clients 3.4 producer defaults.
  EXPECT_EQ(c.producer.acks, "all");
  EXPECT_TRUE(c.producer.enable_idempotence);
  EXPECT_EQ(c.producer.delivery_timeout, Time::millis(120000));
  EXPECT_EQ(c.producer.request_timeout, Time::millis(30000));
  EXPECT_EQ(c.producer.retries, 2147483647);
  EXPECT_EQ(c.producer.retry_backoff, Time::millis(100));
  EXPECT_EQ(c.producer.max_in_flight_requests_per_connection, 5);
  EXPECT_EQ(c.producer.linger, Time::millis(0));
  EXPECT_EQ(c.producer.batch_size, 16384);

  // Kafka 3.7: 8 partitions; model: 3 brokers, replication factor 3.
  EXPECT_EQ(c.kafka.num_partitions, 8);
  EXPECT_EQ(c.kafka.brokers, 3);
  EXPECT_EQ(c.kafka.replication_factor, 3);
  EXPECT_EQ(c.kafka.min_insync_replicas, 1);
  EXPECT_FALSE(c.kafka.unclean_leader_election_enable);
  EXPECT_EQ(c.kafka.replica_lag_time_max, Time::millis(30000));
  EXPECT_EQ(c.kafka.retention, Time::days(7));
  EXPECT_EQ(c.kafka.broker_session_timeout, Time::millis(9000));
  EXPECT_EQ(c.kafka.producer_id_expiration, Time::days(1));

  // Connect: 1 worker, tasks.max 8, flush every 60 s, 500 records per poll.
  EXPECT_EQ(c.connect.workers, 1);
  EXPECT_EQ(c.connect.tasks_max, 8);
  EXPECT_EQ(c.connect.offset_flush_interval, Time::millis(60000));
  EXPECT_EQ(c.connect.offset_flush_interval, Time::seconds(60));
  EXPECT_EQ(c.connect.max_poll_records, 500);
  EXPECT_EQ(c.connect.session_timeout, Time::millis(45000));
  EXPECT_EQ(c.connect.max_poll_interval, Time::millis(300000));
  EXPECT_EQ(c.connect.worker_session_timeout, Time::millis(10000));
  EXPECT_EQ(c.connect.scheduled_rebalance_max_delay, Time::millis(300000));
  EXPECT_EQ(c.connect.worker_restart_delay, Time::seconds(30));

  // The on-call operator acts after ~30 min and only restarts.
  EXPECT_EQ(c.operator_options.restart_delay, Time::minutes(30));
  EXPECT_EQ(c.operator_options.remediation, "restart_only");

  // Sink v1.3.9 defaults.
  EXPECT_FALSE(c.connector.exactly_once);
  EXPECT_FALSE(c.connector.tolerate_state_mismatch);
  EXPECT_EQ(c.connector.socket_timeout, Time::millis(30000));
  EXPECT_EQ(c.connector.errors_tolerance, "none");
  EXPECT_EQ(c.connector.errors_deadletterqueue_topic_name, "");
  EXPECT_FALSE(c.connector.errors_log_enable);
  EXPECT_EQ(c.connector.buffer_count, 0);
  EXPECT_FALSE(c.connector.ignore_partitions_when_batching);
  EXPECT_FALSE(c.connector.report_inserted_offsets);

  // ClickHouse 25.3, 3 replicas, ReplacingMergeTree, no quorum.
  EXPECT_EQ(c.clickhouse.version, "25.3");
  EXPECT_EQ(c.clickhouse.replicas, 3);
  EXPECT_EQ(c.clickhouse.engine, "ReplacingMergeTree");
  EXPECT_EQ(c.clickhouse.insert_quorum, 0);

  // Keeper healthy: a read's round trip 0.3 ms, a write's Raft commit 1.4 ms
  // more, a third of the background's requests writes.
  EXPECT_EQ(c.keeper.latency, Time::micros(300));
  EXPECT_EQ(c.keeper.commit_latency, Time::micros(1400));
  EXPECT_DOUBLE_EQ(c.keeper.background_write_share, 1.0 / 3.0);

  // Run section of docs/model.md §9.
  EXPECT_EQ(c.run.duration, Time::days(1));
  EXPECT_EQ(c.run.drain, Time::minutes(30));
  EXPECT_EQ(c.run.seeds, 100);
  EXPECT_EQ(c.run.first_seed, 1);

  EXPECT_TRUE(c.ignored.empty());
}

TEST(ConfigBaseline, DefaultFaultMix) {
  const Config c = load_config(json::object());
  ASSERT_EQ(c.faults.size(), 5u);

  // worker_crash 1/day
  EXPECT_EQ(c.faults[0].kind, "worker_crash");
  EXPECT_FALSE(c.faults[0].at.has_value());
  EXPECT_DOUBLE_EQ(c.faults[0].rate_per_day, 1.0);
  EXPECT_EQ(c.faults[0].target, "");

  // rebalance 2/day (graceful)
  EXPECT_EQ(c.faults[1].kind, "rebalance");
  EXPECT_FALSE(c.faults[1].at.has_value());
  EXPECT_DOUBLE_EQ(c.faults[1].rate_per_day, 2.0);

  // leader_change 1/day, controlled
  EXPECT_EQ(c.faults[2].kind, "leader_change");
  EXPECT_FALSE(c.faults[2].at.has_value());
  EXPECT_DOUBLE_EQ(c.faults[2].rate_per_day, 1.0);
  EXPECT_EQ(c.faults[2].params.value("controlled", false), true);

  // insert_timeout 1/day with a 40 s window, the server commits
  EXPECT_EQ(c.faults[3].kind, "insert_timeout");
  EXPECT_FALSE(c.faults[3].at.has_value());
  EXPECT_DOUBLE_EQ(c.faults[3].rate_per_day, 1.0);
  EXPECT_EQ(c.faults[3].duration, Time::seconds(40));
  EXPECT_DOUBLE_EQ(c.faults[3].params.value("server_commits", 0.0), 1.0);

  // keeper_backlog once a week for 1 h
  EXPECT_EQ(c.faults[4].kind, "keeper_backlog");
  EXPECT_FALSE(c.faults[4].at.has_value());
  EXPECT_DOUBLE_EQ(c.faults[4].rate_per_day, 1.0 / 7.0);
  EXPECT_EQ(c.faults[4].duration, Time::hours(1));
}

TEST(ConfigBaseline, ExplicitEmptyFaultListMeansNoFaults) {
  const Config c = load_text(R"({"faults": []})");
  EXPECT_TRUE(c.faults.empty());
  // ...and it is a different scenario from the default fault mix.
  EXPECT_NE(config_digest(c), config_digest(load_config(json::object())));
}

TEST(ConfigBaseline, ProductionProfilePeaksNearTenThousandPerSecond) {
  const Config c = load_config(json::object());
  const pipesim::workload::Workload w(c.workload, static_cast<int>(c.kafka.num_partitions), 1);
  double peak = 0;
  double total = 0;
  for (int h = 0; h < 24; ++h) {
    const double r = w.rate_at(Time::hours(h));
    peak = std::max(peak, r);
    total += r * 3600;
  }
  EXPECT_NEAR(peak, 10000.0, 500.0);
  EXPECT_NEAR(total, 200e6, 200e6 * 1e-3);  // the profile keeps records_per_day
  // docs/model.md §8: between two commits (60 s) each of 8 partitions takes some 10,000 to 75,000.
  const double per_partition_per_minute_at_peak = peak * 60 / 8;
  EXPECT_LE(per_partition_per_minute_at_peak, 80000.0);
  EXPECT_GE(total / 86400 * 60 / 8, 10000.0);
}

// ---------------------------------------------------------------------------------------------
// Duration syntax (docs/model.md §9)

TEST(ConfigDuration, ParsesIntegerAndUnit) {
  using pipesim::sim::parse_duration;
  EXPECT_EQ(parse_duration("500ms"), Time::millis(500));
  EXPECT_EQ(parse_duration("30s"), Time::seconds(30));
  EXPECT_EQ(parse_duration("45m"), Time::minutes(45));
  EXPECT_EQ(parse_duration("2h"), Time::hours(2));
  EXPECT_EQ(parse_duration("1d"), Time::days(1));
  EXPECT_EQ(parse_duration("7us"), Time::micros(7));
  EXPECT_EQ(parse_duration("0s"), Time{0});
  EXPECT_FALSE(parse_duration(""));
  EXPECT_FALSE(parse_duration("30"));      // no unit
  EXPECT_FALSE(parse_duration("s"));       // no number
  EXPECT_FALSE(parse_duration("-1s"));     // negative
  EXPECT_FALSE(parse_duration("30 s"));    // space
  EXPECT_FALSE(parse_duration("2w"));      // unknown unit
  EXPECT_FALSE(parse_duration("99999999999999999999s"));  // overflows int64
  EXPECT_FALSE(parse_duration("106751992d"));              // > int64 microseconds
}

TEST(ConfigDuration, ParsesCompoundAndFractionalForms) {
  using pipesim::sim::parse_duration;
  EXPECT_EQ(parse_duration("1h30m"), Time::minutes(90));
  EXPECT_EQ(parse_duration("2m30s"), Time::seconds(150));
  EXPECT_EQ(parse_duration("1d2h3m4s5ms6us"), Time{86400000000LL + 7200000000LL + 180000000LL + 4000000 + 5000 + 6});
  EXPECT_EQ(parse_duration("1m500ms"), Time::millis(60500));  // "ms" is not "m" then "s"
  EXPECT_EQ(parse_duration("1.5h"), Time::minutes(90));
  EXPECT_EQ(parse_duration("0.25s"), Time::millis(250));
  EXPECT_EQ(parse_duration("250.5ms"), Time::micros(250500));
  EXPECT_EQ(parse_duration("0.000001s"), Time::micros(1));
  EXPECT_FALSE(parse_duration("0.0000001s"));  // a tenth of a microsecond
  EXPECT_FALSE(parse_duration("1.5us"));
  EXPECT_FALSE(parse_duration("30m1h"));       // units from the largest down
  EXPECT_FALSE(parse_duration("1m1m"));        // each unit once
  EXPECT_FALSE(parse_duration("1h30"));        // a trailing number without its unit
  EXPECT_FALSE(parse_duration("1.h"));
  EXPECT_FALSE(parse_duration(".5h"));
  EXPECT_FALSE(parse_duration("1h 30m"));
  EXPECT_FALSE(parse_duration("106751991d5h"));  // the sum overflows int64 microseconds
}

TEST(ConfigDuration, CompoundFormsInAConfig) {
  const auto c = pipesim::pipeline::load_config(json::parse(R"({"run": {"duration": "1h30m", "drain": "2m30s"}})"));
  EXPECT_EQ(c.run.duration, Time::minutes(90));
  EXPECT_EQ(c.run.drain, Time::seconds(150));
}

TEST(ConfigDuration, FormatsShortestExactUnit) {
  using pipesim::sim::format_duration;
  EXPECT_EQ(format_duration(Time{0}), "0s");
  EXPECT_EQ(format_duration(Time::seconds(90)), "90s");
  EXPECT_EQ(format_duration(Time::seconds(5400)), "90m");
  EXPECT_EQ(format_duration(Time::days(1)), "1d");
  EXPECT_EQ(format_duration(Time::hours(25)), "25h");
  EXPECT_EQ(format_duration(Time::millis(1500)), "1500ms");
  EXPECT_EQ(format_duration(Time::micros(1500)), "1500us");
}

// ---------------------------------------------------------------------------------------------
// Bad configs: each message names the path, what was expected and what was found.

TEST(ConfigErrors, MalformedJsonFileGivesLineAndColumn) {
  TempDir dir;
  // Line 2, column 22 is the '}' after the trailing comma.
  const std::string path = dir.file("bad.json", "{\n  \"run\": {\"seeds\": 4,}\n}\n");
  EXPECT_EQ(error_of([&] { (void)read_config_file(path); }),
            "config error: " + path +
                ": malformed JSON at line 2, column 22: syntax error while parsing object key - "
                "unexpected '}'; expected string literal");
}

TEST(ConfigErrors, MalformedJsonOnTheFirstLine) {
  TempDir dir;
  // Column 9 is the 'x' where a value was expected.
  const std::string path = dir.file("bad1.json", R"({"run": x})");
  const std::string e = error_of([&] { (void)read_config_file(path); });
  EXPECT_EQ(e.rfind("config error: " + path + ": malformed JSON at line 1, column 9: syntax error", 0),
            0u)
      << e;
}

// Fuzzing findings (tests/fuzz/config_fuzz.cpp). Each of these aborted the
// program (an exception other than ConfigError, or a stack overflow).

// A number beyond double's range is nlohmann's out_of_range, not a parse_error.
TEST(ConfigErrors, NumberBeyondDoubleRangeInTheFile) {
  EXPECT_EQ(error_of([] { (void)parse_config_text(R"({"run": {"seeds": 1e400}})", "big.json"); }),
            "config error: big.json: number overflow parsing '1e400'");
}

// The same number in --set is taken as a string, like any value that is not JSON.
TEST(ConfigErrors, NumberBeyondDoubleRangeInAnOverride) {
  json raw = json::object();
  apply_override(raw, "run.seeds=1e400");
  EXPECT_EQ(load_error(raw),
            R"(config error at run.seeds: expected an integer from 1 to 100000000, found "1e400")");
}

// Printing a deeply nested value in a message recursed once per level: a
// 200,000-deep array overflowed the stack. Configs are refused past 64 levels.
TEST(ConfigErrors, DeeplyNestedJsonIsRefused) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  EXPECT_EQ(error_of([&] { (void)parse_config_text(deep, "deep.json"); }),
            "config error: deep.json: JSON nested deeper than 64 levels");
  // 64 levels are fine: the top-level object, run, and 62 arrays.
  const std::string ok = R"({"run": {"seeds": )" + std::string(62, '[') + std::string(62, ']') + "}}";
  EXPECT_EQ(load_error(parse_config_text(ok, "ok.json")).rfind("config error at run.seeds: expected an integer", 0), 0u);
  EXPECT_EQ(override_error(json::object(), "run.seeds=" + deep),
            "bad --set \"run.seeds=" + deep + "\": JSON nested deeper than 64 levels");
}

// --set values are raw bytes from the command line; one that is not UTF-8
// could not be printed back as JSON in the message naming it. (The fuzzer's
// input: a --set faults=... that was not JSON, so a string, so "expected a
// list of faults, found <the string>".)
TEST(ConfigErrors, OverrideThatIsNotUtf8) {
  EXPECT_EQ(override_error(json::object(), "connector.name=\x8c"), "bad --set: not valid UTF-8");
  EXPECT_EQ(override_error(json::object(), "faults=[{\"kind\":\"worker_crash\",\"a\x8c\xdd:\"1h\"}]"),
            "bad --set: not valid UTF-8");
}

// A config file whose top level is not an object, with an override: --set
// faults=... aborted (nlohmann type_error), --set section.key=... replaced the
// file's value with {} and the config loaded as if the file were empty.
TEST(ConfigErrors, OverrideOnAFileThatIsNotAnObject) {
  EXPECT_EQ(override_error(json(222222222), "faults=[]"),
            "config error at (top level): expected an object with sections, found 222222222");
  EXPECT_EQ(override_error(json::array({1}), "run.seeds=3"),
            "config error at (top level): expected an object with sections, found [1]");
}

// Bad-input sweep findings (tests/bad_input_sweep.py). nlohmann's lexer takes a
// NUL byte for the end of the input: what follows it was silently ignored.
TEST(ConfigErrors, ANulByteIsMalformedJson) {
  const std::string text = std::string("{\"run\": {}}\n") + '\0' + R"({"run": {"seeds": 0}})";
  EXPECT_EQ(error_of([&] { (void)parse_config_text(text, "nul.json"); }),
            "config error: nul.json: malformed JSON at line 2: a NUL byte (a JSON text has none)");
}

// A file holding null was taken for the empty config (the production baseline).
TEST(ConfigErrors, AFileHoldingNullIsNotAConfig) {
  TempDir dir;
  const std::string path = dir.path("null.json");
  std::ofstream(path) << "null\n";
  EXPECT_EQ(error_of([&] { (void)read_config_file(path); }),
            "config error at (top level): expected an object with sections, found null");
}

TEST(ConfigErrors, UnreadableFile) {
  TempDir dir;
  const std::string path = dir.path("missing.json");
  EXPECT_EQ(error_of([&] { (void)read_config_file(path); }),
            "config error: cannot read " + path + ": No such file or directory");
}

// Regression: a directory opens as an ifstream on Linux and reads as empty;
// it was reported as "malformed JSON at line 1, column 1: ... unexpected end
// of input" instead of "cannot read DIR: Is a directory".
TEST(ConfigErrors, DirectoryIsUnreadable) {
  TempDir dir;
  const std::string path = dir.path("");
  const std::string e = error_of([&] { (void)read_config_file(path); });
  EXPECT_EQ(e.rfind("config error: cannot read " + path, 0), 0u) << e;
}

TEST(ConfigErrors, GoodFileIsRead) {
  TempDir dir;
  const std::string path = dir.file("good.json", R"({"kafka": {"num.partitions": 16}})");
  const Config c = load_config(read_config_file(path));
  EXPECT_EQ(c.kafka.num_partitions, 16);
}

TEST(ConfigErrors, TopLevelMustBeAnObject) {
  EXPECT_EQ(load_error(json::array()),
            "config error at (top level): expected an object with sections, found []");
}

TEST(ConfigErrors, UnknownSectionWithDidYouMean) {
  EXPECT_EQ(load_error(json::parse(R"({"conect": {}})")),
            "config error at conect: unknown section; did you mean \"connect\"?");
  // Nothing close: no hint.
  EXPECT_EQ(load_error(json::parse(R"({"zookeeper_settings": {}})")),
            "config error at zookeeper_settings: unknown section");
}

TEST(ConfigErrors, SectionMustBeAnObject) {
  EXPECT_EQ(load_error(json::parse(R"({"run": 5})")),
            "config error at run: expected an object, found 5");
  EXPECT_EQ(load_error(json::parse(R"({"faults": {}})")),
            "config error at faults: expected a list of faults, found {}");
}

TEST(ConfigErrors, UnknownKeyWithDidYouMean) {
  EXPECT_EQ(load_error(json::parse(R"({"connect": {"max.pol.records": 200}})")),
            "config error at connect.max.pol.records: unknown key; did you mean "
            "\"max.poll.records\"?");
  EXPECT_EQ(load_error(json::parse(R"({"connector": {"exactlyonce": true}})")),
            "config error at connector.exactlyonce: unknown key; did you mean \"exactlyOnce\"?");
  EXPECT_EQ(load_error(json::parse(R"({"run": {"completely_unrelated_thing": 1}})")),
            "config error at run.completely_unrelated_thing: unknown key");
}

TEST(ConfigErrors, WrongType) {
  // A string for an integer (strings are only allowed in the REST form of a connector).
  EXPECT_EQ(load_error(json::parse(R"({"connect": {"max.poll.records": "500"}})")),
            "config error at connect.max.poll.records: expected an integer from 1 to "
            "2147483647, found \"500\"");
  EXPECT_EQ(load_error(json::parse(R"({"connector": {"exactlyOnce": "true"}})")),
            "config error at connector.exactlyOnce: expected true or false, found \"true\"");
  EXPECT_EQ(load_error(json::parse(R"({"connector": {"topics": true}})")),
            "config error at connector.topics: expected a string, found true");
  // An integer stands for its text, as in a properties file (acks=1).
  EXPECT_EQ(load_config(json::parse(R"({"connector": {"topics": 7}})")).connector.topics, "7");
  // A fraction is not an integer; an integral float is.
  EXPECT_EQ(load_error(json::parse(R"({"connect": {"max.poll.records": 2.5}})")),
            "config error at connect.max.poll.records: expected an integer from 1 to "
            "2147483647, found 2.5");
  EXPECT_EQ(load_text(R"({"connect": {"max.poll.records": 250.0}})").connect.max_poll_records, 250);
}

TEST(ConfigErrors, IntegerOutOfRange) {
  EXPECT_EQ(load_error(json::parse(R"({"kafka": {"num.partitions": 0}})")),
            "config error at kafka.num.partitions: expected an integer from 1 to 4096, found 0");
  EXPECT_EQ(load_error(json::parse(R"({"kafka": {"num.partitions": 5000}})")),
            "config error at kafka.num.partitions: expected an integer from 1 to 4096, found 5000");
  EXPECT_EQ(load_error(json::parse(R"({"kafka": {"num.partitions": 18446744073709551615}})")),
            "config error at kafka.num.partitions: expected an integer from 1 to 4096, found "
            "18446744073709551615");
  // A real property in milliseconds keeps its real unit and range.
  EXPECT_EQ(load_error(json::parse(R"({"connect": {"offset.flush.interval.ms": 0}})")),
            "config error at connect.offset.flush.interval.ms: expected an integer from 1 to "
            "2147483647, found 0");
  EXPECT_EQ(load_error(json::parse(R"({"run": {"seeds": -3}})")),
            "config error at run.seeds: expected an integer from 1 to 100000000, found -3");
}

TEST(ConfigErrors, RealOutOfRange) {
  EXPECT_EQ(load_error(json::parse(
                R"({"faults": [{"kind": "insert_timeout", "at": "1h", "server_commits": 1.5}]})")),
            "config error at faults[0].server_commits: expected a number from 0 to 1, found 1.5");
}

// All of a config's errors at once, one line each: every bad key of a section
// (the section is read again without it), every section, every fault.
TEST(ConfigErrors, EveryErrorOfAConfigAtOnce) {
  EXPECT_EQ(load_error(json::parse(R"({"run": {"seeds": 0, "duration": "2 hours", "bogus": 1},
                                      "conect": {}, "connector": {"exactlyOnce": "yes"},
                                      "faults": [{"kind": "worker_crsh", "at": "1h"}, {"kind": "worker_crash"}]})")),
            "config error at conect: unknown section; did you mean \"connect\"?\n"
            "config error at run.duration: expected a duration such as \"30s\" or \"1h30m\" (units d, h, m, s, "
            "ms, us) from 1s to 3650d, found \"2 hours\"\n"
            "config error at run.seeds: expected an integer from 1 to 100000000, found 0\n"
            "config error at run.bogus: unknown key\n"
            "config error at connector.exactlyOnce: expected true or false, found \"yes\"\n"
            "config error at faults[0].kind: unknown fault kind \"worker_crsh\"; did you mean \"worker_crash\"?\n"
            "config error at faults[1]: a fault needs exactly one of \"at\" (scheduled) or \"rate_per_day\" "
            "(Poisson)");
  // At most 20 shown, then a line that says so.
  json many = json::object();
  for (int i = 0; i < 25; ++i) many["run"]["bogus" + std::to_string(100 + i)] = 1;
  const std::string e = load_error(many);
  EXPECT_EQ(std::count(e.begin(), e.end(), '\n'), 20);
  EXPECT_NE(e.find("\n(further config errors not shown: the first 20 are above)"), std::string::npos);
}

TEST(ConfigErrors, DuplicateKeysAndFaultsThatWouldNeverFire) {
  EXPECT_EQ(error_of([] { (void)parse_config_text(R"({"run": {"seeds": 2, "seeds": 3}})", "x.json"); }),
            "config error: x.json: duplicate key \"seeds\" at run.seeds (JSON keeps only the last: give it once)");
  EXPECT_EQ(error_of([] {
              (void)parse_config_text(R"({"faults": [{"kind": "a"}, {"kind": "b", "at": "1h", "at": "2h"}]})", "x.json");
            }),
            "config error: x.json: duplicate key \"at\" at faults[1].at (JSON keeps only the last: give it once)");
  // The same key in two different objects is fine.
  EXPECT_EQ(error_of([] { (void)parse_config_text(R"({"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 1}, {"k": 2}]})", "x.json"); }),
            "<no error>");
  EXPECT_EQ(load_error(json::parse(R"({"run": {"duration": "2h"}, "faults": [{"kind": "worker_crash", "at": "2h"}]})")),
            "config error at faults[0].at: expected a time before run.duration (2h): faults come while the "
            "workload runs, found \"2h\"");
  EXPECT_EQ(load_error(json::parse(R"({"run": {"duration": "2h"}, "faults": [{"kind": "worker_crash", "at": "119m"}]})")),
            "<no error>");
}

TEST(ConfigErrors, BadDuration) {
  EXPECT_EQ(load_error(json::parse(R"({"run": {"duration": "2 hours"}})")),
            "config error at run.duration: expected a duration such as \"30s\" or \"1h30m\" (units d, h, m, "
            "s, ms, us) from 1s to 3650d, found \"2 hours\"");
  // pipesim's own durations are strings, not numbers.
  EXPECT_EQ(load_error(json::parse(R"({"run": {"drain": 600}})")),
            "config error at run.drain: expected a duration such as \"30s\" or \"1h30m\" (units d, h, m, s, "
            "ms, us) from 0s to 365d, found 600");
  // Below the minimum of 1 s.
  EXPECT_EQ(load_error(json::parse(R"({"run": {"duration": "500ms"}})")),
            "config error at run.duration: expected a duration such as \"30s\" or \"1h30m\" (units d, h, m, "
            "s, ms, us) from 1s to 3650d, found \"500ms\"");
}

TEST(ConfigErrors, BadChoice) {
  EXPECT_EQ(load_error(json::parse(R"({"producer": {"acks": "2"}})")),
            "config error at producer.acks: expected one of \"all\" \"-1\" \"1\" \"0\", found \"2\"");
  EXPECT_EQ(load_error(json::parse(R"({"operator": {"remediation": "panic"}})")),
            "config error at operator.remediation: expected one of \"restart_only\" "
            "\"delete_state_row\" \"tolerate_then_revert\", found \"panic\"");
  EXPECT_EQ(load_error(json::parse(R"({"connector": {"errors.tolerance": "some"}})")),
            "config error at connector.errors.tolerance: expected one of \"none\" \"all\", found "
            "\"some\"");
}

TEST(ConfigErrors, BufferCountWithExactlyOnce) {
  EXPECT_EQ(load_error(json::parse(R"({"connector": {"exactlyOnce": true, "bufferCount": 1000}})")),
            "config error at connector.bufferCount: bufferCount > 0 cannot be combined with "
            "exactlyOnce=true (the connector refuses this configuration), found 1000");
  // Each alone is fine.
  EXPECT_NO_THROW(load_text(R"({"connector": {"exactlyOnce": true}})"));
  EXPECT_NO_THROW(load_text(R"({"connector": {"bufferCount": 1000}})"));
}

TEST(ConfigErrors, AsyncInsertIsRefusedNotIgnored) {
  // It changes the dedup story (async_insert_deduplicate, wait_for_async_insert)
  // and is not modelled: refused. Its 25.3 defaults, stated, are accepted.
  EXPECT_EQ(load_error(json::parse(R"({"clickhouse": {"async_insert": true}})")),
            "config error at clickhouse.async_insert: async_insert=1 is not modelled (buffered inserts "
            "change what a redelivery and a crash do: async_insert_deduplicate, wait_for_async_insert); "
            "expected 0, found 1");
  EXPECT_NO_THROW(load_text(
      R"({"clickhouse": {"async_insert": false, "async_insert_deduplicate": false, "wait_for_async_insert": true}})"));
  EXPECT_FALSE(load_text(R"({"clickhouse": {"insert_deduplicate": false}})").clickhouse.insert_deduplicate);
}

TEST(ConfigErrors, ReplicationFactorAboveBrokers) {
  EXPECT_EQ(load_error(json::parse(R"({"kafka": {"brokers": 3, "replication.factor": 4}})")),
            "config error at kafka.replication.factor: expected at most kafka.brokers (3), found 4");
  // Lowering brokers below the default replication factor (3) is refused too.
  EXPECT_EQ(load_error(json::parse(R"({"kafka": {"brokers": 2}})")),
            "config error at kafka.replication.factor: expected at most kafka.brokers (2), found 3");
  EXPECT_EQ(load_error(json::parse(
                R"({"kafka": {"replication.factor": 2, "min.insync.replicas": 3}})")),
            "config error at kafka.min.insync.replicas: expected at most kafka.replication.factor "
            "(2), found 3");
  EXPECT_EQ(load_error(json::parse(R"({"clickhouse": {"insert_quorum": 4}})")),
            "config error at clickhouse.insert_quorum: expected at most clickhouse.replicas (3), "
            "found 4");
}

TEST(ConfigErrors, FaultWithoutKind) {
  EXPECT_EQ(load_error(json::parse(R"({"faults": [{"rate_per_day": 1}]})")),
            "config error at faults[0]: missing \"kind\"");
  EXPECT_EQ(load_error(json::parse(R"({"faults": [{"kind": "rebalance", "at": "1h"}, 7]})")),
            "config error at faults[1]: expected an object, found 7");
}

TEST(ConfigErrors, UnknownFaultKind) {
  EXPECT_EQ(load_error(json::parse(R"({"faults": [{"kind": "worker_crsh", "rate_per_day": 1}]})")),
            "config error at faults[0].kind: unknown fault kind \"worker_crsh\"; did you mean "
            "\"worker_crash\"?");
  // Nothing close: the message lists the kinds of docs/model.md §5.
  EXPECT_EQ(load_error(json::parse(R"({"faults": [{"kind": "meteor", "rate_per_day": 1}]})")),
            "config error at faults[0].kind: unknown fault kind \"meteor\"; expected one of "
            "leader_change leader_flapping response_loss broker_crash producer_restart "
            "worker_crash task_restart rebalance insert_timeout keeper_backlog keeper_election "
            "replica_crash state_wipe manual_resend keeper_session_loss keeper_stall");
  EXPECT_EQ(load_error(json::parse(R"({"faults": [{"kind": 3, "rate_per_day": 1}]})")),
            "config error at faults[0].kind: expected one of leader_change leader_flapping "
            "response_loss broker_crash producer_restart worker_crash task_restart rebalance "
            "insert_timeout keeper_backlog keeper_election replica_crash state_wipe "
            "manual_resend keeper_session_loss keeper_stall, found 3");
}

TEST(ConfigErrors, FaultWithBothAtAndRate) {
  const std::string expected =
      "config error at faults[0]: a fault needs exactly one of \"at\" (scheduled) or "
      "\"rate_per_day\" (Poisson)";
  EXPECT_EQ(load_error(json::parse(
                R"({"faults": [{"kind": "worker_crash", "at": "2h", "rate_per_day": 1}]})")),
            expected);
  // Neither is the same mistake.
  EXPECT_EQ(load_error(json::parse(R"({"faults": [{"kind": "worker_crash"}]})")), expected);
  EXPECT_EQ(load_error(json::parse(
                R"({"faults": [{"kind": "keeper_backlog", "at": "1h", "duration": "1h",
                                "duration_mean": "1h"}]})")),
            "config error at faults[0]: give \"duration\" or \"duration_mean\", not both");
}

TEST(ConfigErrors, FaultTargetOutOfRange) {
  EXPECT_EQ(load_error(json::parse(
                R"({"faults": [{"kind": "worker_crash", "at": "2h", "target": "worker-3"}]})")),
            "config error at faults[0].target: expected \"worker-0\" to \"worker-0\", found "
            "\"worker-3\"");
  EXPECT_EQ(load_error(json::parse(
                R"({"faults": [{"kind": "rebalance", "at": "1h"},
                               {"kind": "broker_crash", "at": "2h", "target": "worker-0"}]})")),
            "config error at faults[1].target: expected \"broker-0\" to \"broker-2\", found "
            "\"worker-0\"");
  EXPECT_EQ(load_error(json::parse(
                R"({"faults": [{"kind": "rebalance", "at": "1h", "target": "task-0"}]})")),
            "config error at faults[0].target: fault kind \"rebalance\" takes no target");
  // In range with 4 workers.
  const Config c = load_text(
      R"({"connect": {"workers": 4},
          "faults": [{"kind": "worker_crash", "at": "2h", "target": "worker-3"}]})");
  ASSERT_EQ(c.faults.size(), 1u);
  EXPECT_EQ(c.faults[0].target, "worker-3");
  EXPECT_EQ(c.faults[0].at, Time::hours(2));
}

TEST(ConfigErrors, UnknownFaultKey) {
  // Keys of other kinds are unknown for this kind.
  EXPECT_EQ(load_error(json::parse(
                R"({"faults": [{"kind": "worker_crash", "at": "2h", "server_commits": 1}]})")),
            "config error at faults[0].server_commits: unknown key");
  EXPECT_EQ(load_error(json::parse(
                R"({"faults": [{"kind": "rebalance", "at": "3h", "max.pol.records": 200}]})")),
            "config error at faults[0].max.pol.records: unknown key; did you mean "
            "\"max.poll.records\"?");
}

TEST(ConfigErrors, BadProfile) {
  const std::string expected_text =
      "expected \"production\", \"constant\" or a list of 24 non-negative hourly multipliers "
      "(not all 0)";
  EXPECT_EQ(load_error(json::parse(R"({"workload": {"profile": "peak"}})")),
            "config error at workload.profile: " + expected_text + ", found \"peak\"");
  EXPECT_EQ(load_error(json::parse(R"({"workload": {"profile": [1, 2, 3]}})")),
            "config error at workload.profile: " + expected_text + ", found [1,2,3]");
  json all_zero = json::array();
  for (int i = 0; i < 24; ++i) all_zero.push_back(0);
  EXPECT_EQ(load_error(json{{"workload", {{"profile", all_zero}}}}).rfind(
                "config error at workload.profile: " + expected_text + ", found [0,0,0,", 0),
            0u);
  // 24 multipliers are fine.
  json hourly = json::array();
  for (int i = 0; i < 24; ++i) hourly.push_back(i < 12 ? 1 : 2);
  EXPECT_EQ(load_config(json{{"workload", {{"profile", hourly}}}}).workload.profile, hourly);
}

TEST(ConfigErrors, BadOverrideSyntax) {
  EXPECT_EQ(override_error(json::object(), "connect.max.poll.records"),
            "bad --set \"connect.max.poll.records\": expected section.key=value");
  EXPECT_EQ(override_error(json::object(), "connect=5"),
            "bad --set \"connect=5\": expected section.key=value");
  EXPECT_EQ(override_error(json::object(), "connect.=5"),
            "bad --set \"connect.=5\": expected section.key=value");
  EXPECT_EQ(override_error(json::object(), "=5"), "bad --set \"=5\": expected section.key=value");
}

TEST(ConfigErrors, OverrideOfUnknownSection) {
  EXPECT_EQ(override_error(json::object(), "conect.tasks.max=4"),
            "bad --set \"conect.tasks.max=4\": unknown section \"conect\"; did you mean "
            "\"connect\"?");
  EXPECT_EQ(override_error(json::object(), "xyz.x=4"),
            "bad --set \"xyz.x=4\": unknown section \"xyz\"");
}

TEST(ConfigErrors, OverrideOfAnUnknownKeyFailsAtLoad) {
  json raw = json::object();
  apply_override(raw, "connect.max.pol.records=200");
  EXPECT_EQ(load_error(raw),
            "config error at connect.max.pol.records: unknown key; did you mean "
            "\"max.poll.records\"?");
}

// ---------------------------------------------------------------------------------------------
// --set overrides

TEST(ConfigOverride, TypedValues) {
  json raw = json::object();
  apply_override(raw, "connect.max.poll.records=200");
  apply_override(raw, "connector.exactlyOnce=true");
  apply_override(raw, "run.duration=2h");
  apply_override(raw, "connector.topics=orders");
  apply_override(raw, "faults=[]");
  // The raw JSON holds typed values: an integer, a boolean, strings.
  EXPECT_EQ(raw["connect"]["max.poll.records"], json(200));
  EXPECT_EQ(raw["connector"]["exactlyOnce"], json(true));
  EXPECT_EQ(raw["run"]["duration"], json("2h"));
  EXPECT_EQ(raw["connector"]["topics"], json("orders"));

  const Config c = load_config(raw);
  EXPECT_EQ(c.connect.max_poll_records, 200);
  EXPECT_TRUE(c.connector.exactly_once);
  EXPECT_EQ(c.run.duration, Time::hours(2));
  EXPECT_EQ(c.connector.topics, "orders");
  EXPECT_TRUE(c.faults.empty());
}

TEST(ConfigOverride, OverridesAValueFromTheFile) {
  json raw = json::parse(R"({"connect": {"max.poll.records": 1000, "tasks.max": 2}})");
  apply_override(raw, "connect.max.poll.records=200");
  const Config c = load_config(raw);
  EXPECT_EQ(c.connect.max_poll_records, 200);
  EXPECT_EQ(c.connect.tasks_max, 2);  // untouched
}

TEST(ConfigOverride, LaterOverrideWins) {
  json raw = json::object();
  apply_override(raw, "kafka.num.partitions=16");
  apply_override(raw, "kafka.num.partitions=4");
  EXPECT_EQ(load_config(raw).kafka.num_partitions, 4);
}

TEST(ConfigOverride, FaultListAsJson) {
  json raw = json::object();
  apply_override(raw, R"(faults=[{"kind":"worker_crash","at":"2h"}])");
  const Config c = load_config(raw);
  ASSERT_EQ(c.faults.size(), 1u);
  EXPECT_EQ(c.faults[0].kind, "worker_crash");
  EXPECT_EQ(c.faults[0].at, Time::hours(2));
}

TEST(ConfigOverride, IntoARestFormConnector) {
  json raw = json::parse(
      R"({"connector": {"name": "x", "config": {"connector.class": "ClickHouseSink", "exactlyOnce": "false",
                                                                 "errors.tolerance": "none"}}})");
  apply_override(raw, "connector.exactlyOnce=true");
  apply_override(raw, "connector.jdbcConnectionProperties=?socket_timeout=60000");
  apply_override(raw, "connector.tasks.max=4");
  // The values go under "config", as strings (the REST form's type).
  EXPECT_EQ(raw["connector"]["config"]["exactlyOnce"], json("true"));
  EXPECT_EQ(raw["connector"]["config"]["jdbcConnectionProperties"], json("?socket_timeout=60000"));
  EXPECT_EQ(raw["connector"]["config"]["tasks.max"], json("4"));
  EXPECT_FALSE(raw["connector"].contains("exactlyOnce"));

  const Config c = load_config(raw);
  EXPECT_TRUE(c.connector.exactly_once);
  EXPECT_EQ(c.connector.socket_timeout, Time::seconds(60));
  EXPECT_EQ(c.connect.tasks_max, 4);
  EXPECT_EQ(c.connector.name, "x");
}

// Regression: in the REST form the outer "name" silently overwrote
// config.name, so `--set connector.name=...` (which apply_override writes
// under "config") had no effect. Real Connect refuses a config.name that
// differs from the outer name; the override now sets both.
TEST(ConfigOverride, NameIntoARestFormConnector) {
  json raw = json::parse(
      R"({"connector": {"name": "x", "config": {"connector.class": "ClickHouseSink"}}})");
  apply_override(raw, "connector.name=y");
  EXPECT_EQ(load_config(raw).connector.name, "y");
}

// Regression: the value of --set is parsed as JSON first, so
// `--set producer.acks=1` gave the number 1 and was refused; the same for a
// numeric topic name. An integer now stands for its text.
TEST(ConfigOverride, NumericLookingStringChoice) {
  json raw = json::object();
  apply_override(raw, "producer.acks=1");
  EXPECT_EQ(load_config(raw).producer.acks, "1");
}

TEST(ConfigOverride, QuotedStringValue) {
  json raw = json::object();
  apply_override(raw, R"(producer.acks="1")");
  EXPECT_EQ(load_config(raw).producer.acks, "1");
}

// ---------------------------------------------------------------------------------------------
// The Connect REST form of a connector

TEST(ConfigConnector, OnlyTheClickHouseSinkReadingOneTopic) {
  // Connect takes a class by its full name or by its plugin aliases.
  for (const char* cls : {"com.clickhouse.kafka.connect.ClickHouseSinkConnector",
                          "ClickHouseSinkConnector", "ClickHouseSink"}) {
    const Config c = load_config(
        json{{"connector",
              {{"name", "x"}, {"config", {{"connector.class", cls}, {"topics", "orders"}}}}}});
    EXPECT_EQ(c.connector.topics, "orders") << cls;
  }
  // Connect refuses a connector config without its class ("contains no connector type").
  EXPECT_EQ(
      load_error(json::parse(R"({"connector": {"name": "x", "config": {"topics": "orders"}}})")),
      "config error at connector.config: a Connect REST connector config names its class: expected "
      "\"connector.class\": \"com.clickhouse.kafka.connect.ClickHouseSinkConnector\" (Connect "
      "refuses "
      "a config without one: \"contains no connector type\")");
  EXPECT_EQ(load_error(json::parse(R"({"connector": {"name": "x", "config": {
      "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector"}}})")),
            "config error at connector.config.connector.class: expected "
            "com.clickhouse.kafka.connect.ClickHouseSinkConnector (pipesim simulates the "
            "ClickHouse sink, no "
            "other connector), found \"io.confluent.connect.jdbc.JdbcSinkConnector\"");
  EXPECT_EQ(
      load_error(json::parse(R"({"connector": {"topics": "orders,payments"}})")),
      "config error at connector.topics: expected one topic (pipesim models one topic and its "
      "partitions), found \"orders,payments\"");
  EXPECT_EQ(load_error(json::parse(R"({"connector": {"topics.regex": "orders.*"}})")),
            "config error at connector.topics.regex: a pattern may name several topics, and "
            "pipesim models "
            "one: give \"topics\" with one topic name");
}

TEST(ConfigConnector, RestForm) {
  const Config c = load_text(R"({"connector": {"name": "x", "config": {
      "exactlyOnce": "true",
      "tasks.max": "4",
      "consumer.override.max.poll.records": "200",
      "connector.class": "com.clickhouse.kafka.connect.ClickHouseSinkConnector",
      "hostname": "ch"}}})");
  EXPECT_TRUE(c.connector.exactly_once);
  EXPECT_EQ(c.connect.tasks_max, 4);
  EXPECT_EQ(c.connect.max_poll_records, 200);
  EXPECT_EQ(c.connector.name, "x");
  // connector.class is read (the ClickHouse sink's), not ignored.
  EXPECT_FALSE(contains(c.ignored, "connector.config.connector.class"));
  EXPECT_TRUE(contains(c.ignored, "connector.config.hostname"));
  EXPECT_EQ(c.ignored.size(), 1u);
  // Everything else keeps its default.
  EXPECT_FALSE(c.connector.tolerate_state_mismatch);
  EXPECT_EQ(c.connector.socket_timeout, Time::millis(30000));
  EXPECT_EQ(c.connect.offset_flush_interval, Time::millis(60000));
}

TEST(ConfigConnector, FlatFormWithTypedValues) {
  const Config c = load_text(
      R"({"connector": {"name": "y", "exactlyOnce": true, "tasks.max": 3,
                        "hostname": "ch"}})");
  EXPECT_TRUE(c.connector.exactly_once);
  EXPECT_EQ(c.connect.tasks_max, 3);
  EXPECT_EQ(c.connector.name, "y");
  EXPECT_EQ(c.ignored, std::vector<std::string>{"connector.hostname"});
}

TEST(ConfigConnector, AJdbcPropertyTypoIsRefusedWithTheOptionItMeant) {
  // clickhouse-java reads socket_timeout and nothing like it: a typo would
  // leave the 30 s default in force without a word.
  const auto refused = [](const std::string& properties) {
    return load_error(json{{"connector", {{"jdbcConnectionProperties", properties}}}});
  };
  EXPECT_EQ(refused("?sockettimeout=1000"),
            "config error at connector.jdbcConnectionProperties.sockettimeout: unknown clickhouse-java "
            "option; did you mean \"socket_timeout\"?");
  EXPECT_EQ(refused("?ssl=true&socketTimeout=1000"),
            "config error at connector.jdbcConnectionProperties.socketTimeout: unknown clickhouse-java "
            "option; did you mean \"socket_timeout\"?");
  EXPECT_EQ(refused("connect_timout=100"),
            "config error at connector.jdbcConnectionProperties.connect_timout: unknown clickhouse-java "
            "option; did you mean \"connect_timeout\"?");
  // Other client options and keys like none of them (a server setting) are
  // read and listed as ignored.
  const Config c = load_text(
      R"({"connector": {"jdbcConnectionProperties": "?session_timeout=5&max_insert_block_size=1"}})");
  EXPECT_EQ(c.ignored, (std::vector<std::string>{"connector.jdbcConnectionProperties.session_timeout",
                                                 "connector.jdbcConnectionProperties.max_insert_block_size"}));
  EXPECT_EQ(c.connector.socket_timeout, Time::millis(30000));
}

TEST(ConfigConnector, SocketTimeoutComesFromJdbcConnectionProperties) {
  // clickhouse-java reads socket_timeout (ms) from the URL's query string;
  // the leading "?" is optional (ClickHouseHelperClient adds it).
  Config c = load_text(
      R"({"connector": {"jdbcConnectionProperties": "?ssl=true&socket_timeout=60000"}})");
  EXPECT_EQ(c.connector.socket_timeout, Time::seconds(60));
  EXPECT_EQ(c.ignored, std::vector<std::string>{"connector.jdbcConnectionProperties.ssl"});
  c = load_text(R"({"connector": {"jdbcConnectionProperties": "socket_timeout=1500"}})");
  EXPECT_EQ(c.connector.socket_timeout, Time::millis(1500));
  // timeoutSeconds is the start check's ping timeout: it does not touch the
  // insert's timeout.
  c = load_text(R"({"connector": {"timeoutSeconds": 5}})");
  EXPECT_EQ(c.connector.socket_timeout, Time::millis(30000));
  EXPECT_EQ(c.connector.timeout_seconds, 5);
  EXPECT_TRUE(c.ignored.empty());

  EXPECT_EQ(load_error(json::parse(R"({"connector": {"jdbcConnectionProperties": "?socket_timeout=6s"}})")),
            "config error at connector.jdbcConnectionProperties.socket_timeout: expected a whole "
            "number of milliseconds from 1 to 86400000 (0, no timeout, is not modelled), found \"6s\"");
  EXPECT_EQ(load_error(json::parse(R"({"connector": {"jdbcConnectionProperties": "socket_timeout=0"}})")),
            "config error at connector.jdbcConnectionProperties.socket_timeout: expected a whole "
            "number of milliseconds from 1 to 86400000 (0, no timeout, is not modelled), found \"0\"");
  EXPECT_EQ(
      load_error(json::parse(
          R"({"connector": {"name": "x", "config": {"connector.class": "ClickHouseSink", "jdbcConnectionProperties": "=5"}}})")),
      "config error at connector.config.jdbcConnectionProperties: expected key=value pairs "
      "separated by '&', found \"=5\"");
}

TEST(ConfigConnector, BufferAndOffsetPropertiesAreModelledNotIgnored) {
  // Modelled since issue 17 (ClickHouseSinkTask v1.3.9): read, not listed.
  Config c = load_text(R"({"connector": {"bufferCount": 1000, "bufferFlushTime": 5000,
                                         "ignorePartitionsWhenBatching": true,
                                         "reportInsertedOffsets": true}})");
  EXPECT_TRUE(c.ignored.empty());
  EXPECT_EQ(c.connector.buffer_count, 1000);
  EXPECT_EQ(c.connector.buffer_flush_time, pipesim::sim::Time::millis(5000));
  EXPECT_TRUE(c.connector.ignore_partitions_when_batching);
  EXPECT_TRUE(c.connector.report_inserted_offsets);
  // The REST form: bufferFlushTime is a Long of milliseconds.
  EXPECT_EQ(
      load_error(json::parse(
          R"({"connector": {"name": "x", "config": {"connector.class": "ClickHouseSink", "bufferFlushTime": "-1"}}})")),
      "config error at connector.config.bufferFlushTime: expected an integer from 0 to "
      "9223372036854, found \"-1\"");
}

TEST(ConfigConnector, RestFormErrors) {
  EXPECT_EQ(
      load_error(json::parse(
          R"({"connector": {"name": "x", "config": {"connector.class": "ClickHouseSink", "exactlyOnce": "yes"}}})")),
      "config error at connector.config.exactlyOnce: expected true or false, found \"yes\"");
  EXPECT_EQ(
      load_error(json::parse(
          R"({"connector": {"name": "x", "config": {"connector.class": "ClickHouseSink", "bufferCount": "3O"}}})")),
      "config error at connector.config.bufferCount: expected an integer from 0 to "
      "2147483647, found \"3O\"");
  EXPECT_EQ(
      load_error(json::parse(
          R"({"connector": {"name": "x", "config": {"connector.class": "ClickHouseSink", "tasks.max": "0"}}})")),
      "config error at connector.config.tasks.max: expected an integer from 1 to 10000, "
      "found \"0\" (pipesim's bound: every rebalance visits each task once per joining "
      "task, so a run's cost grows with the square of the tasks; a sink reads at most "
      "num.partitions of them)");
  EXPECT_EQ(
      load_error(json::parse(
          R"({"connector": {"name": "x", "config": {"connector.class": "ClickHouseSink", "exactlyOnc": "true"}}})")),
      "config error at connector.config.exactlyOnc: unknown key; did you mean "
      "\"exactlyOnce\"?");
  EXPECT_EQ(
      load_error(json::parse(
          R"({"connector": {"name": "x", "config": {"connector.class": "ClickHouseSink"}, "status": []}})")),
      "config error at connector.status: unknown key in a Connect REST connector (expected "
      "\"name\" and \"config\", and \"tasks\" and \"type\" of a GET)");
  EXPECT_EQ(load_error(json::parse(R"({"connector": {"name": "x", "config": "a=b"}})")),
            "config error at connector.config: expected an object, found \"a=b\"");
  EXPECT_EQ(load_error(json::parse(R"({"connector": 5})")),
            "config error at connector: expected an object, found 5");
}

// Regression: a bad consumer.override.max.poll.records was reported at
// "connector.config.max.poll.records", a path that is not in the user's JSON.
TEST(ConfigConnector, BadConsumerOverrideNamesItsOwnPath) {
  EXPECT_EQ(
      load_error(json::parse(
          R"({"connector": {"name": "x", "config": {"connector.class": "ClickHouseSink", "consumer.override.max.poll.records": "0"}}})")),
      "config error at connector.config.consumer.override.max.poll.records: expected an "
      "integer from 1 to 2147483647, found \"0\"");
}

// Regression: connect_options.h declared v.alias("consumer.max.poll.records",
// ...) after v.integer("max.poll.records"), so the alias was not registered
// when the integer was read: the value was silently dropped (300 -> 500) and a
// bad value ("junk") silently accepted.
TEST(ConfigConnector, ConsumerPrefixAliasInConnectSection) {
  const Config c = load_text(R"({"connect": {"consumer.max.poll.records": 300}})");
  EXPECT_EQ(c.connect.max_poll_records, 300);
  EXPECT_EQ(load_error(json::parse(R"({"connect": {"consumer.max.poll.records": "junk"}})"))
                .rfind("config error at connect.consumer.max.poll.records: expected an integer", 0),
            0u);
}

// Regression: a non-string outer "name" of a REST-form connector was reported
// at "connector.config.name", which is not where it is.
TEST(ConfigConnector, BadRestNameNamesItsOwnPath) {
  EXPECT_EQ(load_error(json::parse(
                R"({"connector": {"name": 5, "config": {"connector.class": "ClickHouseSink"}}})")),
            "config error at connector.name: expected a string, found 5");
}

TEST(ConfigConnector, IgnoredRealPropertiesAreListed) {
  const Config c = load_text(
      R"({"producer": {"bootstrap.servers": "k:9092", "compression.type": "lz4"},
          "kafka": {"num.io.threads": 8}})");
  EXPECT_TRUE(contains(c.ignored, "producer.bootstrap.servers"));
  EXPECT_TRUE(contains(c.ignored, "producer.compression.type"));
  EXPECT_TRUE(contains(c.ignored, "kafka.num.io.threads"));
  EXPECT_EQ(c.ignored.size(), 3u);
  // Ignored properties do not change the scenario.
  EXPECT_EQ(config_digest(c), config_digest(load_config(json::object())));
}

// ---------------------------------------------------------------------------------------------
// Effective config and digest

TEST(ConfigEffective, HasEverySection) {
  const json e = effective(load_config(json::object()));
  for (const char* s : {"workload", "producer", "app", "kafka", "connect", "operator", "connector",
                        "clickhouse", "keeper", "faults", "run"}) {
    EXPECT_TRUE(e.contains(s)) << s;
  }
  EXPECT_EQ(e["connect"]["offset.flush.interval.ms"], json(60000));
  EXPECT_EQ(e["connect"]["max.poll.records"], json(500));
  EXPECT_EQ(e["run"]["duration"], json("1d"));
  EXPECT_EQ(e["run"]["drain"], json("30m"));
  EXPECT_EQ(e["faults"].size(), 5u);
}

TEST(ConfigEffective, RoundTripKeepsTheDigest) {
  const char* texts[] = {
      "{}",
      R"({"faults": []})",
      R"({"workload": {"records_per_day": 8640000, "profile": "constant"},
          "kafka": {"num.partitions": 2},
          "connect": {"tasks.max": 2, "workers": 2},
          "run": {"duration": "2h", "drain": "10m", "seeds": 4}})",
      R"({"connector": {"name": "x", "config": {"connector.class": "ClickHouseSink", "exactlyOnce": "true", "tasks.max": "4",
                        "consumer.override.max.poll.records": "200", "hostname": "ch"}},
          "operator": {"remediation": "delete_state_row", "restart_delay": "90s"},
          "clickhouse": {"version": "23.8", "insert_quorum": 2},
          "faults": [
            {"kind": "worker_crash", "at": "2h", "target": "worker-0"},
            {"kind": "worker_crash", "rate_per_day": 2},
            {"kind": "insert_timeout", "at": "10m", "duration": "40s", "server_commits": 0.5},
            {"kind": "leader_flapping", "at": "1h", "duration": "45m", "partitions": [1, 3],
             "period": "20s"},
            {"kind": "rebalance", "at": "3h", "max.poll.records": 200},
            {"kind": "keeper_backlog", "rate_per_day": 0.3, "duration_mean": "1h",
             "capacity_factor": 0.1},
            {"kind": "state_wipe", "at": "0s"}]})",
      // An explicit zero window of kinds whose window has a default (a swarm
      // finding: the print left it out and the reload took the default).
      R"({"faults": [{"kind": "response_loss", "at": "1m", "duration": "0s"},
                     {"kind": "broker_crash", "rate_per_day": 1, "duration": "0s"},
                     {"kind": "leader_flapping", "at": "1h", "duration": "0s"},
                     {"kind": "response_loss", "at": "2m", "duration_mean": "5s"}]})",
  };
  for (const char* text : texts) {
    SCOPED_TRACE(text);
    const Config c1 = load_text(text);
    const json e1 = effective(c1);
    const Config c2 = load_config(e1);
    EXPECT_EQ(config_digest(c2), config_digest(c1));
    EXPECT_EQ(effective(c2), e1);
    EXPECT_EQ(effective_config(c2).dump(), effective_config(c1).dump());
    ASSERT_EQ(c2.faults.size(), c1.faults.size());
    for (std::size_t i = 0; i < c1.faults.size(); ++i) {
      EXPECT_EQ(c2.faults[i].duration.us, c1.faults[i].duration.us) << i;
      EXPECT_EQ(c2.faults[i].duration_mean.us, c1.faults[i].duration_mean.us) << i;
    }
  }
}

TEST(ConfigEffective, DigestShape) {
  const std::string d = config_digest(load_config(json::object()));
  ASSERT_EQ(d.size(), 16u);
  EXPECT_TRUE(std::all_of(d.begin(), d.end(), [](char ch) {
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
  })) << d;
  // Deterministic.
  EXPECT_EQ(config_digest(load_config(json::object())), d);
}

TEST(ConfigEffective, DigestChangesWithOneValue) {
  const std::string base = config_digest(load_config(json::object()));
  const char* changed[] = {
      R"({"connect": {"max.poll.records": 499}})",
      R"({"connector": {"exactlyOnce": true}})",
      R"({"run": {"seeds": 101}})",
      R"({"run": {"first_seed": 2}})",
      R"({"workload": {"profile": "constant"}})",
      R"({"kafka": {"retention.ms": 604800001}})",
      R"({"faults": [{"kind": "worker_crash", "rate_per_day": 1},
                     {"kind": "rebalance", "rate_per_day": 2},
                     {"kind": "leader_change", "rate_per_day": 1, "controlled": true},
                     {"kind": "insert_timeout", "rate_per_day": 1, "duration": "40s",
                      "server_commits": 0.9},
                     {"kind": "keeper_backlog", "rate_per_day": 0.14285714285714285,
                      "duration": "1h"}]})",
  };
  for (const char* text : changed) {
    SCOPED_TRACE(text);
    EXPECT_NE(config_digest(load_text(text)), base);
  }
  // Setting a value to its default does not change the scenario.
  EXPECT_EQ(config_digest(load_text(R"({"connect": {"max.poll.records": 500}})")), base);
  // The default fault mix written out explicitly is the same scenario.
  EXPECT_EQ(config_digest(load_text(
                R"({"faults": [{"kind": "worker_crash", "rate_per_day": 1},
                               {"kind": "rebalance", "rate_per_day": 2},
                               {"kind": "leader_change", "rate_per_day": 1, "controlled": true},
                               {"kind": "insert_timeout", "rate_per_day": 1, "duration": "40s",
                                "server_commits": 1.0},
                               {"kind": "keeper_backlog", "rate_per_day": 0.14285714285714285,
                                "duration": "1h"}]})")),
            base);
  // The REST form and the flat form of the same connector are the same scenario.
  EXPECT_EQ(
      config_digest(load_text(
          R"({"connector": {"name": "clickhouse-sink", "config": {"connector.class": "ClickHouseSink", "exactlyOnce": "true"}}})")),
      config_digest(load_text(R"({"connector": {"exactlyOnce": true}})")));
}

TEST(ConfigEffective, ProductionJsonIsTheEffectiveEmptyConfig) {
  const char* root = std::getenv("PIPESIM_SOURCE_DIR");
  if (root == nullptr) GTEST_SKIP() << "PIPESIM_SOURCE_DIR not set";
  const std::string path = std::string(root) + "/configs/production.json";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " does not exist";
  const json file = read_config_file(path);
  const Config empty = load_config(json::object());
  // As a JSON patch from the file to the code's defaults, so a drift reads as a
  // list of keys ("add" = a key the code has and the file lacks).
  const json patch = json::diff(file, effective(empty));
  EXPECT_TRUE(patch.empty()) << path << " differs from the effective config of {}: "
                             << patch.dump();
  const Config loaded = load_config(file);
  EXPECT_EQ(config_digest(loaded), config_digest(empty));
  EXPECT_TRUE(loaded.ignored.empty());
}

// ---------------------------------------------------------------------------------------------
// kafka-clients 3.4 producer rules (ProducerConfig.postProcessAndValidateIdempotenceConfigs,
// KafkaProducer.configureDeliveryTimeout)

TEST(ConfigProducer, IdempotenceIsOnByDefaultAndQuietlyOffWhenAcksIsNotAll) {
  EXPECT_TRUE(load_text("{}").producer.enable_idempotence);
  const Config c = load_text(R"({"producer": {"acks": "1"}})");
  EXPECT_FALSE(c.producer.enable_idempotence);
  // The effective config says so, and reads back to the same scenario.
  EXPECT_EQ(effective(c)["producer"]["enable.idempotence"], false);
  EXPECT_EQ(config_digest(load_config(effective(c))), config_digest(c));
  EXPECT_FALSE(load_text(R"({"producer": {"max.in.flight.requests.per.connection": 6}})")
                   .producer.enable_idempotence);
  EXPECT_FALSE(load_text(R"({"producer": {"retries": 0}})").producer.enable_idempotence);
}

TEST(ConfigProducer, ExplicitIdempotenceWithAConflictIsRefused) {
  EXPECT_EQ(load_error(json::parse(R"({"producer": {"enable.idempotence": true, "acks": "1"}})")),
            "config error at producer.enable.idempotence: the idempotent producer needs acks=all "
            "(kafka-clients refuses this configuration), found enable.idempotence=true");
  EXPECT_NE(load_error(json::parse(
                R"({"producer": {"enable.idempotence": true, "max.in.flight.requests.per.connection": 6}})")),
            "<no error>");
  EXPECT_NE(load_error(json::parse(R"({"producer": {"enable.idempotence": true, "retries": 0}})")),
            "<no error>");
  EXPECT_EQ(load_error(json::parse(R"({"producer": {"enable.idempotence": false, "acks": "0"}})")),
            "<no error>");
}

TEST(ConfigProducer, DeliveryTimeoutBelowLingerPlusRequestTimeout) {
  // Explicitly too small: refused; by default: raised to linger.ms + request.timeout.ms.
  EXPECT_EQ(load_error(json::parse(R"({"producer": {"delivery.timeout.ms": 20000}})")),
            "config error at producer.delivery.timeout.ms: expected at least linger.ms + "
            "request.timeout.ms (30000), found 20000");
  const Config c = load_text(R"({"producer": {"request.timeout.ms": 200000, "linger.ms": 5}})");
  EXPECT_EQ(c.producer.delivery_timeout, Time::millis(200005));
}

TEST(ConfigFaults, WindowedKafkaFaultsGetADefaultLength) {
  const Config c = load_text(R"({"faults": [
      {"kind": "broker_crash", "at": "1h"}, {"kind": "response_loss", "at": "1h"},
      {"kind": "leader_flapping", "at": "1h"}, {"kind": "broker_crash", "at": "1h", "duration_mean": "5m"},
      {"kind": "manual_resend", "at": "2h", "resend_policy": "check_by_key"}]})");
  EXPECT_EQ(c.faults[0].duration, Time::minutes(1));
  EXPECT_EQ(c.faults[1].duration, Time::seconds(30));
  EXPECT_EQ(c.faults[2].duration, Time::minutes(10));
  EXPECT_EQ(c.faults[3].duration, Time{});  // drawn from duration_mean instead
  EXPECT_EQ(c.faults[4].params["resend_policy"], "check_by_key");
  EXPECT_EQ(load_error(json::parse(R"({"faults": [{"kind": "manual_resend", "at": "1h", "resend_policy": "all"}]})")),
            "config error at faults[0].resend_policy: expected one of \"blind\" \"check_by_key\", found \"all\"");
}

// The consumer's fetch properties (KafkaConsumer 3.7 ranges: each at least 0)
// and the arrival model: refused with the path named.
TEST(ConfigContinuousTime, FetchPropertiesAndArrivalsAreChecked) {
  EXPECT_EQ(load_error(json::parse(R"({"connect": {"fetch.min.bytes": -1}})")),
            "config error at connect.fetch.min.bytes: expected an integer from 0 to 2147483647, found -1");
  EXPECT_EQ(load_error(json::parse(R"({"connect": {"fetch.max.wait.ms": "500"}})")),
            "config error at connect.fetch.max.wait.ms: expected an integer from 0 to 2147483647, found \"500\"");
  EXPECT_EQ(load_error(json::parse(R"({"connect": {"max.partition.fetch.bytes": 3000000000}})")),
            "config error at connect.max.partition.fetch.bytes: expected an integer from 0 to 2147483647, "
            "found 3000000000");
  EXPECT_EQ(load_error(json::parse(R"({"connect": {"fetch.max.bytes": 1.5}})")),
            "config error at connect.fetch.max.bytes: expected an integer from 0 to 2147483647, found 1.5");
  EXPECT_EQ(load_error(json::parse(R"({"connect": {"fetch_latency": "0s"}})")),
            "config error at connect.fetch_latency: expected a duration such as \"30s\" or \"1h30m\" (units d, h, m, s, ms, "
            "us) from 1us to 1m, found \"0s\"");
  EXPECT_EQ(load_error(json::parse(R"({"workload": {"arrivals": "bursts"}})")),
            "config error at workload.arrivals: expected one of \"poisson\" \"fixed\", found \"bursts\"");
  // The consumer.* spellings of a worker config are the same properties.
  const Config c = load_text(R"({"connect": {"consumer.fetch.min.bytes": 521000, "fetch.max.wait.ms": 60000}})");
  EXPECT_EQ(c.connect.fetch_min_bytes, 521000);
  EXPECT_EQ(c.connect.fetch_max_wait, Time::seconds(60));
}

TEST(ConfigContinuousTime, TheArrivalTickIsRefusedWithWhatReplacedIt) {
  EXPECT_EQ(load_error(json::parse(R"({"workload": {"tick": "20ms"}})")),
            "config error at workload.tick: no longer exists: records arrive one by one at their own instants "
            "(workload.arrivals: \"poisson\" or \"fixed\" for evenly spaced), so there is no arrival "
            "quantum to set");
}

}  // namespace

namespace {
TEST(ConfigErrors, PartsToDelayInsertMustStayBelowPartsToThrowInsert) {
  // MergeTreeData::delayInsertOrThrowIfNeeded scales the delay by their
  // difference: an equal or inverted pair is refused, a 0 turns either off.
  EXPECT_EQ(load_error(json::parse(R"({"clickhouse": {"parts_to_delay_insert": 3000}})")),
            "config error at clickhouse.parts_to_delay_insert: must be below "
            "clickhouse.parts_to_throw_insert (3000), or 0");
  EXPECT_EQ(load_error(json::parse(R"({"clickhouse": {"parts_to_delay_insert": 0}})")), "<no error>");
  EXPECT_EQ(load_error(json::parse(R"({"clickhouse": {"parts_to_throw_insert": 0}})")), "<no error>");
}
}  // namespace
