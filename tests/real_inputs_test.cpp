// Real inputs: Java .properties files as Properties.load reads them, the
// worker / consumer / producer files mapped onto what their keys mean, the
// Connect REST bodies (POST, PUT, GET) as whole files, and the real
// ConfigDefs' key lists (data/configdefs/) deciding ignored vs unknown.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "models/pipeline/config.h"
#include "models/pipeline/properties_input.h"
#include "models/pipeline/real_keys.h"
#include "sim/config/options.h"
#include "sim/config/properties_file.h"
#include "tests/config_error.h"

namespace {

using nlohmann::json;
using pipesim::pipeline::apply_override;
using pipesim::pipeline::apply_properties_files;
using pipesim::pipeline::Config;
using pipesim::pipeline::configdef_has;
using pipesim::pipeline::configdef_keys;
using pipesim::pipeline::connect_rest_document;
using pipesim::pipeline::load_config;
using pipesim::pipeline::PropertiesFiles;
using pipesim::pipeline::real_key;
using pipesim::sim::ConfigError;
using pipesim::sim::parse_properties;
using pipesim::sim::Time;

using pipesim::testing::error_of;

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// A file in a fresh directory, removed with it.
class TempFiles {
 public:
  TempFiles() {
    char tmpl[] = "/tmp/pipesim_real_inputs.XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  ~TempFiles() { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

 private:
  std::string dir_;
};

// ---------------------------------------------------------------------------------------------
// Properties.load's syntax

TEST(PropertiesFile, SeparatorsCommentsAndBlanks) {
  const auto p = parse_properties(
      "# comment\n! also a comment\n\n  a=1\nb : 2\nc 3\nd=\ne\n  f  =  x y  \n", "t.properties");
  ASSERT_EQ(p.size(), 6u);
  EXPECT_EQ(p[0].key, "a");
  EXPECT_EQ(p[0].value, "1");
  EXPECT_EQ(p[0].line, 4);
  EXPECT_EQ(p[1].key, "b");
  EXPECT_EQ(p[1].value, "2");
  EXPECT_EQ(p[2].key, "c");
  EXPECT_EQ(p[2].value, "3");
  EXPECT_EQ(p[3].key, "d");
  EXPECT_EQ(p[3].value, "");
  EXPECT_EQ(p[4].key, "e");
  EXPECT_EQ(p[4].value, "");
  EXPECT_EQ(p[5].key, "f");
  EXPECT_EQ(p[5].value, "x y  ");  // trailing blanks are the value's (Properties keeps them)
}

TEST(PropertiesFile, ContinuationsAndEscapes) {
  const auto p = parse_properties(
      "plugin.path=/a,\\\n    /b,\\\n\t/c\nkey\\=with\\:seps=v\\tw\nu=\\u00e9\\u0041\nslash=a\\\\\nnext=1\r\n",
      "t.properties");
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[0].value, "/a,/b,/c");  // each continuation's leading blanks dropped
  EXPECT_EQ(p[0].line, 1);
  EXPECT_EQ(p[1].key, "key=with:seps");
  EXPECT_EQ(p[1].value, "v\tw");
  EXPECT_EQ(p[1].line, 4);
  EXPECT_EQ(p[2].value, "\xC3\xA9" "A");  // U+00E9 in UTF-8, then 'A'
  EXPECT_EQ(p[3].value, "a\\");          // an even number of backslashes does not continue
  EXPECT_EQ(p[4].key, "next");
  EXPECT_EQ(p[4].value, "1");            // CRLF line ends
}

TEST(PropertiesFile, LastValueWinsAndBadEscapeNamesTheLine) {
  const auto p = parse_properties("a=1\nb=2\na=3\n", "t.properties");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].key, "a");
  EXPECT_EQ(p[0].value, "3");
  EXPECT_EQ(p[0].line, 3);
  EXPECT_EQ(error_of([] { (void)parse_properties("a=1\nb=\\u12x4\n", "t.properties"); }),
            "config error: t.properties: line 2: malformed \\uXXXX escape");
}

TEST(PropertiesFile, AByteOrderMarkOrANulByteIsSaidPlainly) {
  // Java's Properties.load(InputStream) reads ISO 8859-1: the mark would be
  // three characters of the first key, not a typo of it.
  EXPECT_EQ(
      error_of([] {
        (void)parse_properties(
            "\xEF\xBB\xBF"
            "acks=all\n",
            "p.properties");
      }),
      "config error: p.properties: line 1: starts with a UTF-8 byte-order mark, which Java's "
      "Properties.load reads into the first key (Kafka would then ignore that key): save the file "
      "without it");
  EXPECT_EQ(
      error_of([] { (void)parse_properties(std::string("a=1\nb=2\nc=\0\n", 12), "p.properties"); }),
      "config error: p.properties: line 3: a NUL byte (0x00): not a properties text file");
  // A mark later in the file is a character like any other (ISO 8859-1).
  EXPECT_EQ(parse_properties("a=\xEF\xBB\xBF\n", "p.properties").front().value, "\xEF\xBB\xBF");
}

// ---------------------------------------------------------------------------------------------
// The ConfigDef lists

TEST(RealKeys, ListsHoldTheConfigDefsOfKafka371AndTheSink139) {
  // Counts of the README in data/configdefs (define + defineInternal calls).
  EXPECT_EQ(configdef_keys("consumer").size(), 96u);
  EXPECT_EQ(configdef_keys("producer").size(), 90u);
  EXPECT_EQ(configdef_keys("worker").size(), 112u);
  EXPECT_EQ(configdef_keys("connector").size(), 19u);
  EXPECT_EQ(configdef_keys("clickhouse_sink").size(), 39u);
  EXPECT_TRUE(configdef_has("worker", "offset.flush.interval.ms"));
  EXPECT_TRUE(configdef_has("worker", "scheduled.rebalance.max.delay.ms"));  // DistributedConfig
  EXPECT_TRUE(configdef_has("consumer", "max.poll.records"));
  EXPECT_TRUE(configdef_has("producer", "enable.idempotence"));
  EXPECT_TRUE(configdef_has("clickhouse_sink", "exactlyOnce"));
  EXPECT_TRUE(configdef_has("clickhouse_sink", "client_version"));
  EXPECT_FALSE(configdef_has("clickhouse_sink", "clientVersion"));
  EXPECT_FALSE(configdef_has("worker", "rest.port"));  // removed before 3.7
}

TEST(RealKeys, FamiliesByPrefix) {
  EXPECT_TRUE(real_key("connector", "consumer.override.client.rack"));
  EXPECT_FALSE(real_key("connector", "consumer.override.client.rak"));
  EXPECT_TRUE(real_key("connector", "transforms.unwrap.type"));
  EXPECT_TRUE(real_key("connector", "key.converter.schemas.enable"));
  EXPECT_FALSE(real_key("connector", "transforms."));
  EXPECT_TRUE(real_key("connect", "consumer.client.rack"));
  EXPECT_TRUE(real_key("connect", "producer.linger.ms"));
  EXPECT_TRUE(real_key("connect", "plugin.path"));
  EXPECT_FALSE(real_key("connect", "plugin.paths"));
  EXPECT_TRUE(real_key("producer", "compression.type"));
  EXPECT_FALSE(real_key("producer", "max.poll.records"));
}

TEST(RealKeys, SectionsIgnoreRealKeysAndRefuseOthers) {
  const Config c = load_config(json::parse(
      R"({"producer": {"compression.type": "lz4"}, "connect": {"plugin.path": "/x", "consumer.client.rack": "a"},
          "connector": {"hostname": "ch", "transforms": "u", "transforms.u.type": "T",
                        "consumer.override.client.rack": "a"}})"));
  for (const char* k : {"producer.compression.type", "connect.plugin.path", "connect.consumer.client.rack",
                        "connector.hostname", "connector.transforms", "connector.transforms.u.type",
                        "connector.consumer.override.client.rack"}) {
    EXPECT_TRUE(contains(c.ignored, k)) << k;
  }
  EXPECT_EQ(error_of([] { (void)load_config(json::parse(R"({"connector": {"clientVersion": "V2"}})")); }),
            "config error at connector.clientVersion: unknown key; did you mean \"client_version\"?");
  EXPECT_EQ(error_of([] { (void)load_config(json::parse(R"({"producer": {"lingr.ms": 5}})")); }),
            "config error at producer.lingr.ms: unknown key; did you mean \"linger.ms\"?");
}

// ---------------------------------------------------------------------------------------------
// Connect REST bodies

TEST(ConnectRest, PostPutAndGetBodiesAreTheConnectorSection) {
  const json config = json::parse(R"({"connector.class": "com.clickhouse.kafka.connect.ClickHouseSinkConnector",
                                      "tasks.max": "4", "exactlyOnce": "true"})");
  const json post = {{"name", "sink"}, {"config", config}};
  json get = post;
  get["tasks"] = json::array({{{"connector", "sink"}, {"task", 0}}});
  get["type"] = "sink";
  for (const json& body : {post, get, config}) {
    const Config c = load_config(connect_rest_document(body));
    EXPECT_EQ(c.connect.tasks_max, 4);
    EXPECT_TRUE(c.connector.exactly_once);
  }
  EXPECT_EQ(load_config(connect_rest_document(post)).connector.name, "sink");
  get["type"] = "source";
  EXPECT_EQ(error_of([&] { (void)load_config(connect_rest_document(get)); }),
            "config error at connector.type: expected \"sink\" (the ClickHouse sink connector), found \"source\"");
  // A pipesim config is left as it is, even one with "name"-like keys in it.
  const json mine = json::parse(R"({"connector": {"name": "x"}, "run": {"seeds": 3}})");
  EXPECT_EQ(connect_rest_document(mine), mine);
}

TEST(ConnectRest, EveryModelledConsumerOverrideMapsOntoConnect) {
  const Config c = load_config(json::parse(
      R"({"connector": {"name": "x", "config": {"connector.class": "ClickHouseSink", "consumer.override.max.poll.records": "200",
          "consumer.override.fetch.min.bytes": "1024", "consumer.override.max.poll.interval.ms": "600000"}}})"));
  EXPECT_EQ(c.connect.max_poll_records, 200);
  EXPECT_EQ(c.connect.fetch_min_bytes, 1024);
  EXPECT_EQ(c.connect.max_poll_interval, Time::millis(600000));
}

TEST(ConnectRest, ClickHouseSettingsSetTheModelledInsertSettings) {
  // v1.3.9 ClickHouseSinkConfig: split at ',', each piece at '=', a piece
  // that is not key=value dropped; ClickHouseWriter sends each with every
  // insert, and a query's setting wins over the server's profile.
  json raw = json::parse(
      R"({"clickhouse": {"insert_quorum": 0},
          "connector": {"clickhouseSettings": " insert_quorum=2, insert_deduplicate=0,max_insert_threads=4,,broken"}})");
  Config c = load_config(raw);
  EXPECT_EQ(c.clickhouse.insert_quorum, 2);
  EXPECT_FALSE(c.clickhouse.insert_deduplicate);
  EXPECT_EQ(c.ignored,
            (std::vector<std::string>{
                "connector.clickhouseSettings.max_insert_threads",
                "connector.clickhouseSettings \"broken\" (not key=value: the connector drops it)",
                "clickhouse.insert_quorum (0): connector.clickhouseSettings insert_quorum=2 "
                "overrides it"}));
  // A --set of clickhouse.insert_quorum applies last: the connector's setting too.
  apply_override(raw, "clickhouse.insert_quorum=3");
  EXPECT_EQ(raw["connector"]["clickhouseSettings"],
            json("insert_quorum=3, insert_deduplicate=0,max_insert_threads=4,,broken"));
  EXPECT_EQ(load_config(raw).clickhouse.insert_quorum, 3);
  // In a REST body, and refused as the clickhouse section refuses it.
  c = load_config(json::parse(
      R"({"connector": {"name": "x", "config": {"connector.class": "ClickHouseSink", "clickhouseSettings": "insert_quorum=2"}}})"));
  EXPECT_EQ(c.clickhouse.insert_quorum, 2);
  EXPECT_EQ(error_of([] {
              (void)load_config(
                  json::parse(R"({"connector": {"clickhouseSettings": "async_insert=1"}})"));
            }),
            "config error at connector.clickhouseSettings.async_insert: async_insert=1 is not "
            "modelled (buffered "
            "inserts change what a redelivery and a crash do: async_insert_deduplicate, "
            "wait_for_async_insert); "
            "expected 0, found 1");
  EXPECT_NE(error_of([] {
              (void)load_config(
                  json::parse(R"({"connector": {"clickhouseSettings": "insert_quorum=auto"}})"));
            }).find("config error at connector.clickhouseSettings.insert_quorum: "),
            std::string::npos);
}

TEST(ConnectRest, AConnectorsOverrideWinsOverTheWorkersAndASetAppliesLast) {
  // Kafka 3.7 Worker.connectorClientConfigOverrides: the connector's
  // consumer.override.* over the worker's consumer.* over the defaults; the
  // value it replaces is listed.
  json raw = json::parse(
      R"({"connect": {"fetch.min.bytes": 1, "tasks.max": 2},
          "connector": {"consumer.override.fetch.min.bytes": 1024, "tasks.max": 4}})");
  Config c = load_config(raw);
  EXPECT_EQ(c.connect.fetch_min_bytes, 1024);
  EXPECT_EQ(c.connect.tasks_max, 4);
  EXPECT_EQ(c.ignored, (std::vector<std::string>{
                           "connect.tasks.max (2): connector.tasks.max (4) overrides it",
                           "connect.fetch.min.bytes (1): "
                           "connector.consumer.override.fetch.min.bytes (1024) overrides it"}));
  // --set (and a sweep grid's point) on connect.* comes last: it sets the
  // connector's override too, in either form.
  apply_override(raw, "connect.fetch.min.bytes=5");
  apply_override(raw, "connect.tasks.max=3");
  c = load_config(raw);
  EXPECT_EQ(c.connect.fetch_min_bytes, 5);
  EXPECT_EQ(c.connect.tasks_max, 3);
  EXPECT_TRUE(c.ignored.empty());
  json rest = json::parse(
      R"({"connector": {"name": "x", "config": {"connector.class": "ClickHouseSink", "consumer.override.max.poll.records": "200"}}})");
  apply_override(rest, "connect.max.poll.records=100");
  EXPECT_EQ(rest["connector"]["config"]["consumer.override.max.poll.records"], json("100"));
  EXPECT_EQ(load_config(rest).connect.max_poll_records, 100);
  // A worker properties file's consumer.* loses to the connector's override.
  TempFiles t;
  PropertiesFiles files;
  files.worker = t.write("worker.properties", "consumer.max.poll.records=300\n");
  json from_files = json::parse(R"({"connector": {"consumer.override.max.poll.records": 200}})");
  (void)apply_properties_files(from_files, files);
  EXPECT_EQ(load_config(from_files).connect.max_poll_records, 200);
}

// ---------------------------------------------------------------------------------------------
// --worker-properties, --consumer-properties, --producer-properties

TEST(PropertiesInput, EachKeyGoesWhereItMeansWhatItMeans) {
  TempFiles t;
  PropertiesFiles files;
  files.worker = t.write("worker.properties",
                         "bootstrap.servers=k:9092\noffset.flush.interval.ms=10000\nsession.timeout.ms=20000\n"
                         "heartbeat.interval.ms=2000\nconsumer.max.poll.records=1000\nconsumer.client.rack=a\n"
                         "plugin.path=/x\n");
  files.consumer = t.write("consumer.properties", "max.poll.interval.ms: 600000\nclient.id = c\n");
  files.producer = t.write("producer.properties", "acks=1\nlinger.ms=5\ncompression.type=lz4\n");
  json raw = json::object();
  const auto ignored = apply_properties_files(raw, files);
  const Config c = load_config(raw);
  EXPECT_EQ(c.connect.offset_flush_interval, Time::millis(10000));
  // The worker's session.timeout.ms is its group's; the tasks' consumers keep theirs.
  EXPECT_EQ(c.connect.worker_session_timeout, Time::millis(20000));
  EXPECT_EQ(c.connect.session_timeout, Time::millis(45000));
  EXPECT_EQ(c.connect.heartbeat_interval, Time::millis(3000));  // the worker's heartbeat is not the consumer's
  EXPECT_EQ(c.connect.max_poll_records, 1000);
  EXPECT_EQ(c.connect.max_poll_interval, Time::millis(600000));
  EXPECT_EQ(c.producer.acks, "1");
  EXPECT_EQ(c.producer.linger, Time::millis(5));
  const std::vector<std::string> want = {
      files.worker + ": bootstrap.servers", files.worker + ": heartbeat.interval.ms",
      files.worker + ": consumer.client.rack", files.worker + ": plugin.path", files.consumer + ": client.id",
      files.producer + ": compression.type"};
  EXPECT_EQ(ignored, want);
}

TEST(PropertiesInput, KeysKafkaRemovedFromTheWorkerAreListedNotRefused) {
  // A 2.x worker file: Connect 3.7 logs its removed keys as unused and starts (AbstractConfig.logUnused).
  TempFiles t;
  PropertiesFiles files;
  files.worker = t.write("worker.properties",
                         "rest.port=8083\nrest.host.name=0.0.0.0\ninternal.key.converter.schemas.enable=false\n"
                         "offset.flush.interval.ms=30000\n");
  json raw = json::object();
  const auto ignored = apply_properties_files(raw, files);
  EXPECT_EQ(load_config(raw).connect.offset_flush_interval, Time::millis(30000));
  ASSERT_EQ(ignored.size(), 3u);
  EXPECT_EQ(ignored[0], files.worker +
                            ": rest.port (line 1: removed from Kafka's WorkerConfig in 3.7 (KAFKA-12482): Connect "
                            "logs it as unused; the REST server listens on \"listeners\")");
  EXPECT_EQ(ignored[1].rfind(files.worker + ": rest.host.name (line 2: removed", 0), 0u) << ignored[1];
  EXPECT_EQ(ignored[2].rfind(files.worker + ": internal.key.converter.schemas.enable (line 3: removed from "
                                            "Kafka's WorkerConfig in 3.0 (KIP-738)", 0),
            0u)
      << ignored[2];
  // A key that never was one is still a typo, with its suggestion.
  files.worker = t.write("typo.properties", "rest.prot=8083\n");
  raw = json::object();
  EXPECT_NE(error_of([&] { (void)apply_properties_files(raw, files); }).find("unknown key \"rest.prot\""),
            std::string::npos);
}

TEST(PropertiesInput, ErrorsNameTheFileAndLine) {
  TempFiles t;
  const auto error = [&](const char* which, const std::string& text) {
    PropertiesFiles files;
    const std::string path = t.write(std::string(which) + ".properties", text);
    (std::string(which) == "worker" ? files.worker : std::string(which) == "consumer" ? files.consumer
                                                                                       : files.producer) = path;
    json raw = json::object();
    std::string e = error_of([&] { (void)apply_properties_files(raw, files); });
    const auto at = e.find(path);
    return at == std::string::npos ? e : e.replace(at, path.size(), std::string(which) + ".properties");
  };
  EXPECT_EQ(error("consumer", "# x\nmax.poll.records=abc\n"),
            "config error: consumer.properties: line 2: max.poll.records: expected an integer from 1 to "
            "2147483647, found \"abc\"");
  EXPECT_EQ(error("consumer", "max.pol.records=5\n"),
            "config error: consumer.properties: line 1: unknown key \"max.pol.records\" (not a key of Kafka "
            "3.7's ConsumerConfig); did you mean \"max.poll.records\"?");
  EXPECT_EQ(error("worker", "max.poll.records=10\n"),
            "config error: worker.properties: line 1: \"max.poll.records\" is a consumer key: a worker passes it "
            "to its tasks' consumers as \"consumer.max.poll.records\"");
  EXPECT_EQ(error("worker", "offset.flush.interval.ms=0\n"),
            "config error: worker.properties: line 1: offset.flush.interval.ms: expected an integer from 1 to "
            "2147483647, found 0");
  EXPECT_EQ(error("producer", "acks=2\n"),
            "config error: producer.properties: line 1: acks: expected one of \"all\" \"-1\" \"1\" \"0\", found 2");
}

}  // namespace
