#include "models/pipeline/config.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "models/keeper/closed_loop.h"
#include "models/pipeline/real_keys.h"
#include "models/sink/jdbc_properties.h"
#include "sim/config/duration.h"
#include "sim/engine/random.h"

namespace pipesim::pipeline {

using nlohmann::json;
using sim::ConfigError;
using sim::OptionReader;
using sim::Time;

namespace {

const std::vector<std::string> kSections = {"workload", "producer", "app",        "kafka",
                                            "connect",  "operator", "connector",  "clickhouse",
                                            "keeper",   "faults",   "run"};

// The errors of one config, gathered so that all of a file's errors come out
// at once (up to kMaxErrors shown), each as its own line.
class ErrorList {
 public:
  static constexpr std::size_t kMaxErrors = 20;
  void add(const std::string& message) {
    if (messages_.size() < kMaxErrors) {
      messages_.push_back(message);
    } else {
      truncated_ = true;
    }
  }
  // Reading stopped with errors left unread.
  void truncate() { truncated_ = true; }
  [[nodiscard]] bool full() const { return messages_.size() >= kMaxErrors; }
  // Runs f; a ConfigError it throws is kept and the reading goes on.
  template <class F>
  void attempt(F&& f) {
    try {
      f();
    } catch (const ConfigError& e) {
      add(e.what());
    }
  }
  void throw_if_any() const {
    if (messages_.empty()) return;
    std::string text;
    for (const auto& m : messages_) text += (text.empty() ? "" : "\n") + m;
    if (truncated_) text += "\n(further config errors not shown: the first " + std::to_string(kMaxErrors) + " are above)";
    throw ConfigError(text);
  }

 private:
  std::vector<std::string> messages_;
  bool truncated_ = false;
};

// Reads `object` with its visit() declaration into `options`. A bad key is
// kept in `errors` and the object read again without it, so every bad key of
// a section is reported, not only the first.
template <class Options>
void visit_collecting(const json& object, const std::string& where, bool strings_allowed,
                      const std::string& real_section, Options& options, std::vector<std::string>& ignored,
                      ErrorList& errors) {
  json remaining = object;
  std::string last;
  for (;;) {
    Options attempt = options;
    OptionReader reader(remaining, where, strings_allowed);
    if (!real_section.empty()) {
      reader.real_keys([real_section](std::string_view key) { return real_key(real_section, key); },
                       real_key_candidates(real_section));
    }
    try {
      visit(reader, attempt);
    } catch (const ConfigError& e) {
      if (e.what() == last) return;  // the same error again: not a key's own
      last = e.what();
      errors.add(last);
      const std::string key = reader.failed_key();
      if (key.empty() || !remaining.contains(key)) return;
      if (errors.full()) {
        errors.truncate();  // re-reading a huge object key by key would take long: stop here
        return;
      }
      remaining.erase(key);
      continue;
    }
    options = attempt;
    ignored.insert(ignored.end(), reader.ignored_found().begin(), reader.ignored_found().end());
    return;
  }
}

// Reads one section with its visit() declaration.
template <class Options>
void read_section(const json& raw, const std::string& name, Options& options,
                  std::vector<std::string>& ignored, ErrorList& errors) {
  const auto it = raw.find(name);
  if (it == raw.end()) return;
  if (!it->is_object()) {
    errors.add("config error at " + name + ": expected an object, found " + sim::describe_json_value(*it));
    return;
  }
  const bool real = name == "producer" || name == "connect";
  visit_collecting(*it, name, false, real ? name : std::string(), options, ignored, errors);
}

std::string target_prefix(const std::string& kind) {
  if (kind == "worker_crash") return "worker-";
  if (kind == "task_restart") return "task-";
  if (kind == "broker_crash") return "broker-";
  // insert_timeout may target one replica (only inserts routed to it hang).
  if (kind == "replica_crash" || kind == "keeper_session_loss" || kind == "insert_timeout") return "replica-";
  return "";
}

// A partition number: a non-negative integer (a JSON file gives it unsigned,
// a config built in code may give it signed).
bool is_partition_number(const json& p) {
  return p.is_number_unsigned() || (p.is_number_integer() && p.get<std::int64_t>() >= 0);
}

std::string check_partitions(const json& v) {
  if (v == "all") return "";
  if (is_partition_number(v)) return "";
  if (v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), is_partition_number)) return "";
  return "\"all\", a partition number or a list of partition numbers";
}

// Windows that need a length when the config gives none: model defaults,
// written out by --print (0 for kinds whose fault is an instant).
Time default_window(const std::string& kind) {
  if (kind == "response_loss") return Time::seconds(30);
  if (kind == "broker_crash") return Time::minutes(1);
  if (kind == "leader_flapping") return Time::minutes(10);
  return Time{0};
}

sim::FaultSpec read_fault(const json& f, const std::string& path) {
  if (!f.is_object()) sim::throw_config_error(path, "expected an object, found " + sim::describe_json_value(f));
  sim::FaultSpec spec;
  const auto kind = f.find("kind");
  if (kind == f.end()) sim::throw_config_error(path, "missing \"kind\"");
  std::string expected_kinds = "one of";
  for (const auto& k : fault_kinds()) expected_kinds += " " + k;
  if (!kind->is_string()) {
    sim::throw_config_error(path + ".kind", "expected " + expected_kinds + ", found " +
                                                sim::describe_json_value(*kind));
  }
  spec.kind = kind->get<std::string>();
  if (std::find(fault_kinds().begin(), fault_kinds().end(), spec.kind) == fault_kinds().end()) {
    const std::string hint = sim::closest_key(spec.kind, fault_kinds());
    sim::throw_config_error(path + ".kind", "unknown fault kind \"" + spec.kind + "\"" +
                                                (hint.empty() ? "; expected " + expected_kinds
                                                              : "; did you mean \"" + hint + "\"?"));
  }
  OptionReader r(f, path);
  std::string kind_text = spec.kind;
  r.text("kind", kind_text, "");
  Time at = Time::max();
  r.duration("at", at, Time{0}, Time::days(3650), "");
  if (at != Time::max()) spec.at = at;
  r.real("rate_per_day", spec.rate_per_day, 0, 1e7, "");
  r.duration("duration", spec.duration, Time{0}, Time::days(365), "");
  r.duration("duration_mean", spec.duration_mean, Time{0}, Time::days(365), "");
  r.text("target", spec.target, "");
  const bool has_at = f.contains("at");
  const bool has_rate = f.contains("rate_per_day");
  if (has_at == has_rate) {
    sim::throw_config_error(path, "a fault needs exactly one of \"at\" (scheduled) or "
                                  "\"rate_per_day\" (Poisson)");
  }
  if (f.contains("duration") && f.contains("duration_mean")) {
    sim::throw_config_error(path, "give \"duration\" or \"duration_mean\", not both");
  }
  // Kind-specific parameters; kept as JSON for the model that acts on them.
  const auto keep = [&](const char* key, auto value) {
    if (f.contains(key)) spec.params[key] = value;
  };
  if (spec.kind == "insert_timeout") {
    double server_commits = 1.0;
    r.real("server_commits", server_commits, 0, 1, "");
    keep("server_commits", server_commits);
  } else if (spec.kind == "rebalance") {
    std::int64_t mpr = 0;
    r.integer("max.poll.records", mpr, 1, 2147483647, "");
    keep("max.poll.records", mpr);
  } else if (spec.kind == "leader_change" || spec.kind == "leader_flapping") {
    json partitions = "all";
    r.any("partitions", partitions, check_partitions, "");
    keep("partitions", partitions);
    bool controlled = true;
    r.boolean("controlled", controlled, "");
    keep("controlled", controlled);
    if (spec.kind == "leader_flapping") {
      Time period = Time::seconds(20);
      r.duration("period", period, Time::millis(1), Time::days(1), "");
      keep("period", sim::format_duration(period));
    }
  } else if (spec.kind == "response_loss") {
    double p = 1.0;
    r.real("probability", p, 0, 1, "");
    keep("probability", p);
    // How the client learns of a lost answer (producer.h): the connection
    // stalls silently (default) or is reset.
    std::string connection = "stall";
    r.choice("connection", connection, {"stall", "reset"}, "");
    keep("connection", connection);
  } else if (spec.kind == "manual_resend") {
    std::string policy = "blind";
    r.choice("resend_policy", policy, {"blind", "check_by_key"}, "");
    keep("resend_policy", policy);
  } else if (spec.kind == "keeper_backlog") {
    double factor = 0.25;
    r.real("capacity_factor", factor, 0.0001, 1, "");
    keep("capacity_factor", factor);
    // Extra load is a named client of its own threads (a runaway mutation, a
    // replica re-syncing), each waiting for its answer: Keeper is closed-loop.
    if (f.contains("extra_ops_per_s")) {
      sim::throw_config_error(path + ".extra_ops_per_s",
                              "an open-loop rate is not how Keeper is loaded: give the extra client's "
                              "threads (\"extra_clients\") and the pause between their requests "
                              "(\"extra_client_think\", e.g. \"0ms\")");
    }
    std::int64_t threads = 0;
    r.integer("extra_clients", threads, 0, 1000000, "");
    keep("extra_clients", threads);
    Time think{0};
    r.duration("extra_client_think", think, Time{0}, Time::hours(1), "");
    keep("extra_client_think", sim::format_duration(think));
    std::string name = "extra";
    r.text("extra_client", name, "");
    keep("extra_client", name);
  } else if (spec.kind == "keeper_election") {
    double applied = 0.5;
    r.real("commit_applied", applied, 0, 1, "");
    keep("commit_applied", applied);
  } else if (spec.kind == "replica_crash") {
    bool hang = false;
    r.boolean("hang", hang, "");
    keep("hang", hang);
  }
  r.finish();
  if (!f.contains("duration") && !f.contains("duration_mean")) spec.duration = default_window(spec.kind);
  return spec;
}

void check_targets(const Config& c) {
  for (std::size_t i = 0; i < c.faults.size(); ++i) {
    const auto& spec = c.faults[i];
    if (spec.target.empty()) continue;
    const std::string prefix = target_prefix(spec.kind);
    const std::string path = "faults[" + std::to_string(i) + "].target";
    if (prefix.empty()) {
      sim::throw_config_error(path, "fault kind \"" + spec.kind + "\" takes no target");
    }
    std::int64_t count = 0;
    if (spec.kind == "worker_crash") count = c.connect.workers;
    if (spec.kind == "task_restart") count = c.connect.tasks_max;
    if (spec.kind == "broker_crash") count = c.kafka.brokers;
    if (spec.kind == "replica_crash" || spec.kind == "keeper_session_loss" || spec.kind == "insert_timeout") {
      count = c.clickhouse.replicas;
    }
    const std::string expected =
        "\"" + prefix + "0\" to \"" + prefix + std::to_string(count - 1) + "\"";
    const std::string& t = spec.target;
    if (t.rfind(prefix, 0) != 0) sim::throw_config_error(path, "expected " + expected + ", found \"" + t + "\"");
    const std::string digits = t.substr(prefix.size());
    if (digits.empty() || digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) ||
        std::stoll(digits) >= count) {
      sim::throw_config_error(path, "expected " + expected + ", found \"" + t + "\"");
    }
  }
}

// A scheduled fault at or after run.duration never fires (faults come while
// the workload runs; the drain has none): refused rather than silently dropped.
void check_fault_times(const Config& c) {
  for (std::size_t i = 0; i < c.faults.size(); ++i) {
    const auto& at = c.faults[i].at;
    if (at && *at >= c.run.duration) {
      sim::throw_config_error("faults[" + std::to_string(i) + "].at",
                              "expected a time before run.duration (" + sim::format_duration(c.run.duration) +
                                  "): faults come while the workload runs, found \"" + sim::format_duration(*at) +
                                  "\"");
    }
  }
}

void check_fault_partitions(const Config& c) {
  for (std::size_t i = 0; i < c.faults.size(); ++i) {
    const auto it = c.faults[i].params.find("partitions");
    if (it == c.faults[i].params.end() || *it == "all") continue;
    const json list = it->is_array() ? *it : json::array({*it});
    for (const auto& p : list) {
      // Compared unsigned: a number above 2^63 must not wrap to a negative partition.
      if (p.get<std::uint64_t>() >= static_cast<std::uint64_t>(c.kafka.num_partitions)) {
        sim::throw_config_error("faults[" + std::to_string(i) + "].partitions",
                                "expected partitions from 0 to " +
                                    std::to_string(c.kafka.num_partitions - 1) + ", found " + p.dump());
      }
    }
  }
}

// ProducerConfig.postProcessAndValidateIdempotenceConfigs and
// KafkaProducer.configureDeliveryTimeout (kafka-clients 3.4): a conflict
// with an explicitly set property is an error; otherwise the client quietly
// disables idempotence or raises delivery.timeout.ms, and so do we (the
// effective config then shows the value the client runs with).
void apply_producer_rules(const json& raw, Config& c) {
  const json* given = raw.contains("producer") && raw["producer"].is_object() ? &raw["producer"] : nullptr;
  const bool explicit_idempotence = given && given->contains("enable.idempotence");
  auto& p = c.producer;
  if (p.enable_idempotence) {
    const auto conflict = [&](const std::string& what) {
      if (explicit_idempotence) {
        sim::throw_config_error("producer.enable.idempotence",
                                "the idempotent producer needs " + what + " (kafka-clients refuses this "
                                "configuration), found enable.idempotence=true");
      }
      p.enable_idempotence = false;
    };
    if (p.retries == 0) conflict("retries > 0");
    if (p.enable_idempotence && p.acks != "all" && p.acks != "-1") conflict("acks=all");
    if (p.enable_idempotence && p.max_in_flight_requests_per_connection > 5) {
      conflict("max.in.flight.requests.per.connection <= 5");
    }
  }
  const Time floor = p.linger + p.request_timeout;
  if (p.delivery_timeout < floor) {
    if (given && given->contains("delivery.timeout.ms")) {
      sim::throw_config_error("producer.delivery.timeout.ms",
                              "expected at least linger.ms + request.timeout.ms (" +
                                  std::to_string(floor.us / 1000) + "), found " +
                                  std::to_string(p.delivery_timeout.us / 1000));
    }
    p.delivery_timeout = floor;
  }
}

void check_consistency(const Config& c, bool lint) {
  if (c.clickhouse.parts_to_delay_insert > 0 && c.clickhouse.parts_to_throw_insert > 0 &&
      c.clickhouse.parts_to_delay_insert >= c.clickhouse.parts_to_throw_insert) {
    // MergeTreeData::delayInsertOrThrowIfNeeded divides by their difference.
    sim::throw_config_error("clickhouse.parts_to_delay_insert",
                            "must be below clickhouse.parts_to_throw_insert (" +
                                std::to_string(c.clickhouse.parts_to_throw_insert) + "), or 0");
  }
  if (c.clickhouse.async_insert) {
    // ClickHouse 25.3: an async insert is buffered with others and flushed
    // later; its block ids then depend on async_insert_deduplicate (off by
    // default: no dedup of a redelivery) and its answer on
    // wait_for_async_insert (0: success before anything is written, so a
    // server crash loses it). pipesim models neither: refused, not ignored.
    sim::throw_config_error("clickhouse.async_insert",
                            "async_insert=1 is not modelled (buffered inserts change what a redelivery "
                            "and a crash do: async_insert_deduplicate, wait_for_async_insert); "
                            "expected 0, found 1");
  }
  if (!lint && c.connector.exactly_once && c.connector.buffer_count > 0) {
    // v1.3.9 refuses to start with both (ClickHouseSinkConfig validation).
    sim::throw_config_error("connector.bufferCount",
                            "bufferCount > 0 cannot be combined with exactlyOnce=true "
                            "(the connector refuses this configuration), found " +
                                std::to_string(c.connector.buffer_count));
  }
  if (c.kafka.replication_factor > c.kafka.brokers) {
    sim::throw_config_error("kafka.replication.factor",
                            "expected at most kafka.brokers (" + std::to_string(c.kafka.brokers) +
                                "), found " + std::to_string(c.kafka.replication_factor));
  }
  if (c.kafka.min_insync_replicas > c.kafka.replication_factor) {
    sim::throw_config_error("kafka.min.insync.replicas",
                            "expected at most kafka.replication.factor (" +
                                std::to_string(c.kafka.replication_factor) + "), found " +
                                std::to_string(c.kafka.min_insync_replicas));
  }
  // The background threads must be able to send their healthy rate to a
  // healthy leader: fewer than capacity, and enough threads that each, never
  // pausing, would send it (Keeper: the closed loop's away time >= round trip).
  const auto& k = c.keeper;
  if (k.background_ops_per_s > 0 && k.background_clients > 0) {
    if (k.background_ops_per_s >= k.capacity_ops_per_s) {
      sim::throw_config_error("keeper.background_ops_per_s",
                              "expected less than keeper.capacity_ops_per_s (" +
                                  std::to_string(k.capacity_ops_per_s) + "), found " +
                                  std::to_string(k.background_ops_per_s));
    }
    const double mu = static_cast<double>(k.capacity_ops_per_s);
    const double most = keeper::ClosedLoop::throughput_of(mu, k.background_clients,
                                                          static_cast<double>(k.latency.us) / 1e6);
    if (most < static_cast<double>(k.background_ops_per_s)) {
      sim::throw_config_error("keeper.background_clients",
                              std::to_string(k.background_clients) + " threads with a " +
                                  sim::format_duration(k.latency) + " round trip send at most " +
                                  std::to_string(static_cast<std::int64_t>(most)) +
                                  " requests/s, fewer than keeper.background_ops_per_s (" +
                                  std::to_string(k.background_ops_per_s) + "): give more threads");
    }
  }
  if (c.clickhouse.insert_quorum > c.clickhouse.replicas) {
    sim::throw_config_error("clickhouse.insert_quorum",
                            "expected at most clickhouse.replicas (" +
                                std::to_string(c.clickhouse.replicas) + "), found " +
                                std::to_string(c.clickhouse.insert_quorum));
  }
}

sim::FaultSpec poisson(const std::string& kind, double rate, Time duration = Time{0}) {
  sim::FaultSpec s;
  s.kind = kind;
  s.rate_per_day = rate;
  s.duration = duration;
  return s;
}

}  // namespace

const std::vector<std::string>& fault_kinds() {
  static const std::vector<std::string> kinds = {
      "leader_change", "leader_flapping", "response_loss",  "broker_crash",  "producer_restart",
      "worker_crash",  "task_restart",    "rebalance",      "insert_timeout", "keeper_backlog",
      "keeper_election", "replica_crash", "state_wipe",     "manual_resend",
      // docs/model.md §4.6: a ClickHouse server's Keeper session expires (tables read-only).
      "keeper_session_loss"};
  return kinds;
}

std::vector<sim::FaultSpec> default_faults() {
  std::vector<sim::FaultSpec> f;
  f.push_back(poisson("worker_crash", 1));
  f.push_back(poisson("rebalance", 2));
  auto leader = poisson("leader_change", 1);
  leader.params["controlled"] = true;
  f.push_back(leader);
  auto timeout = poisson("insert_timeout", 1, Time::seconds(40));
  timeout.params["server_commits"] = 1.0;
  f.push_back(timeout);
  f.push_back(poisson("keeper_backlog", 1.0 / 7.0, Time::hours(1)));
  return f;
}

std::string read_config_text(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError("config error: cannot read " + path + ": Is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError("config error: cannot read " + path + ": " + std::strerror(errno));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

json read_config_file(const std::string& path) {
  return connect_rest_document(parse_config_text_not_null(read_config_text(path), path));
}

json parse_config_text_not_null(const std::string& text, const std::string& path) {
  json raw = parse_config_text(text, path);
  // A file holding `null` is not an empty config (the production baseline is
  // the absence of a file): it is a file that is not an object.
  if (raw.is_null()) sim::throw_config_error("(top level)", "expected an object with sections, found null");
  return raw;
}

json connect_rest_document(json raw) {
  if (!raw.is_object()) return raw;
  const bool has_section = std::any_of(kSections.begin(), kSections.end(),
                                       [&](const std::string& s) { return raw.contains(s); });
  if (has_section) return raw;
  // POST /connectors {"name", "config"}, or GET /connectors/NAME {"name", "config", "tasks", "type"}.
  if (raw.contains("name") && raw.contains("config")) return json{{"connector", std::move(raw)}};
  // PUT /connectors/NAME/config: the flat map of the connector's properties.
  if (raw.contains("connector.class")) return json{{"connector", json{{"config", std::move(raw)}}}};
  return raw;
}

namespace {

// A config is a few levels deep; a document nested deeper is refused while
// parsing, before anything walks it recursively (printing a 200,000-deep
// array in a message overflowed the stack: a fuzzing finding).
constexpr int kMaxNesting = 64;

json parse_limited(const std::string& text, const std::string& where) {
  // A key given twice in one object: nlohmann keeps the last silently, a
  // typo-like mistake the user should hear of. The path is kept as the
  // parser goes (a frame per open object or array).
  struct Frame {
    bool array = false;
    std::size_t index = 0;        // an array's next element
    std::set<std::string> keys;   // an object's keys so far (a set: objects may be huge)
    std::string key;              // the object's current key
  };
  std::vector<Frame> frames;
  const auto path = [&frames] {
    std::string p;
    for (const auto& f : frames) {
      if (f.array) {
        p += "[" + std::to_string(f.index) + "]";
      } else if (!f.key.empty()) {
        p += (p.empty() ? "" : ".") + f.key;
      }
    }
    return p;
  };
  const json::parser_callback_t limit = [&](int depth, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    if ((event == E::object_start || event == E::array_start) && depth >= kMaxNesting) {
      throw ConfigError(where + "JSON nested deeper than " + std::to_string(kMaxNesting) + " levels");
    }
    if (event == E::object_start || event == E::array_start) {
      frames.push_back(Frame{event == E::array_start, 0, {}, {}});
    } else if (event == E::key && !frames.empty()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      Frame& f = frames.back();
      f.key = key;
      if (!f.keys.insert(key).second) {
        throw ConfigError(where + "duplicate key \"" + key + "\" at " + path() +
                          " (JSON keeps only the last: give it once)");
      }
    } else if (event == E::object_end || event == E::array_end || event == E::value) {
      if (event != E::value && !frames.empty()) frames.pop_back();
      if (!frames.empty() && frames.back().array) ++frames.back().index;
    }
    return true;
  };
  // nlohmann's lexer takes a NUL byte for the end of the input and would
  // ignore everything after it: a JSON text has none.
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
    throw ConfigError(where + "malformed JSON at line " + std::to_string(line) +
                      ": a NUL byte (a JSON text has none)");
  }
  return json::parse(text, limit);
}

// nlohmann's message without its "[json.exception.out_of_range.406] " prefix.
std::string without_prefix(const std::string& what) {
  const auto bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

}  // namespace

json parse_config_text(const std::string& text, const std::string& path) {
  try {
    return parse_limited(text, "config error: " + path + ": ");
  } catch (const json::out_of_range& e) {
    // A number beyond double's range (1e400): nlohmann throws out_of_range,
    // not parse_error, and it escaped as an abort (a fuzzing finding).
    throw ConfigError("config error: " + path + ": " + without_prefix(e.what()));
  } catch (const json::parse_error& e) {
    // Turn the byte offset into line and column, which editors show.
    std::size_t line = 1;
    std::size_t column = 1;
    const std::size_t end = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    for (std::size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = e.what();
    const auto colon = what.find("syntax error");
    if (colon != std::string::npos) what = what.substr(colon);
    throw ConfigError("config error: " + path + ": malformed JSON at line " +
                      std::to_string(line) + ", column " + std::to_string(column) + ": " + what);
  }
}

void apply_override(json& raw, const std::string& assignment) {
  const auto eq = assignment.find('=');
  const auto dot = assignment.find('.');
  const std::string bad = "bad --set \"" + assignment + "\": ";
  if (eq == std::string::npos) throw ConfigError(bad + "expected section.key=value");
  if (dot == std::string::npos || dot > eq) {
    const std::string section = assignment.substr(0, eq);
    if (section != "faults") throw ConfigError(bad + "expected section.key=value");
  }
  // Raw bytes from the command line: a value that is not UTF-8 could not be
  // printed back as JSON (an abort in the first message naming it: a fuzzing finding).
  try {
    (void)json(assignment).dump();
  } catch (const json::type_error&) {
    throw ConfigError("bad --set: not valid UTF-8");
  }
  // The file's top level must be an object for any override to apply; the
  // error is the one load_config gives. (faults=... on a file holding a plain
  // number aborted with nlohmann's type_error, and section.key=... silently
  // replaced a non-object file with {}: a fuzzing finding.)
  if (raw.is_null()) raw = json::object();
  if (!raw.is_object()) {
    sim::throw_config_error("(top level)", "expected an object with sections, found " +
                                               sim::describe_json_value(raw));
  }
  const std::string value_text = assignment.substr(eq + 1);
  json value;
  try {
    value = parse_limited(value_text, bad);
  } catch (const json::exception&) {
    // Not JSON (or a number beyond double's range, out_of_range): a string.
    value = value_text;
  }
  if (dot == std::string::npos || dot > eq) {  // faults=[...]
    raw["faults"] = value;
    return;
  }
  const std::string section = assignment.substr(0, dot);
  const std::string key = assignment.substr(dot + 1, eq - dot - 1);
  if (section == "faults") {
    throw ConfigError(bad + "\"faults\" is a list: set it whole, e.g. --set 'faults=[{\"kind\": "
                            "\"worker_crash\", \"at\": \"1h\"}]'");
  }
  if (std::find(kSections.begin(), kSections.end(), section) == kSections.end()) {
    const std::string hint = sim::closest_key(section, kSections);
    throw ConfigError(bad + "unknown section \"" + section + "\"" +
                      (hint.empty() ? "" : "; did you mean \"" + hint + "\"?"));
  }
  if (key.empty()) throw ConfigError(bad + "expected section.key=value");
  json& target = raw[section];
  if (!target.is_object()) target = json::object();
  // A connector pasted in Connect REST form keeps its properties under "config".
  if (section == "connector" && target.contains("config") && target["config"].is_object()) {
    const json text = value.is_string() ? value : json(value.dump());
    if (key == "name") {
      target["name"] = text;
      if (target["config"].contains("name")) target["config"]["name"] = text;
    } else {
      target["config"][key] = text;
    }
  } else {
    target[key] = value;
  }
}

Config load_config(const json& raw, bool lint) {
  if (!raw.is_object()) {
    sim::throw_config_error("(top level)", "expected an object with sections, found " +
                                               sim::describe_json_value(raw));
  }
  ErrorList errors;
  for (const auto& [key, value] : raw.items()) {
    if (std::find(kSections.begin(), kSections.end(), key) != kSections.end()) continue;
    if (key == "sweep") continue;  // the grid of `pipesim sweep`; other commands run the base config
    const std::string hint = sim::closest_key(key, kSections);
    errors.add("config error at " + key + ": unknown section" +
               (hint.empty() ? std::string() : "; did you mean \"" + hint + "\"?"));
  }
  Config c;
  read_section(raw, "workload", c.workload, c.ignored, errors);
  read_section(raw, "producer", c.producer, c.ignored, errors);
  read_section(raw, "app", c.app, c.ignored, errors);
  read_section(raw, "kafka", c.kafka, c.ignored, errors);
  read_section(raw, "connect", c.connect, c.ignored, errors);
  read_section(raw, "operator", c.operator_options, c.ignored, errors);
  read_section(raw, "clickhouse", c.clickhouse, c.ignored, errors);
  read_section(raw, "keeper", c.keeper, c.ignored, errors);
  read_section(raw, "run", c.run, c.ignored, errors);

  if (const auto it = raw.find("connector"); it != raw.end()) errors.attempt([&] {
    if (!it->is_object()) {
      sim::throw_config_error("connector", "expected an object, found " + sim::describe_json_value(*it));
    }
    const bool rest_form = it->contains("config");
    json props = rest_form ? (*it)["config"] : *it;
    const std::string path = rest_form ? "connector.config" : "connector";
    if (!props.is_object()) {
      sim::throw_config_error(path, "expected an object, found " + sim::describe_json_value(props));
    }
    if (rest_form) {
      for (const auto& [key, value] : it->items()) {
        if (key != "name" && key != "config" && key != "tasks" && key != "type") {
          sim::throw_config_error("connector." + key,
                                  "unknown key in a Connect REST connector (expected \"name\" and "
                                  "\"config\", and \"tasks\" and \"type\" of a GET)");
        }
      }
      // GET /connectors/NAME's "type": this sink, not a source connector.
      if (it->contains("type") && (*it)["type"] != "sink") {
        sim::throw_config_error("connector.type", "expected \"sink\" (the ClickHouse sink connector), found " +
                                                      sim::describe_json_value((*it)["type"]));
      }
      if (it->contains("name")) {
        const json& name = (*it)["name"];
        if (!name.is_string()) {
          sim::throw_config_error("connector.name", "expected a string, found " + sim::describe_json_value(name));
        }
        // The Connect REST API refuses a config whose name differs from the connector's.
        if (props.contains("name") && props["name"] != name) {
          sim::throw_config_error("connector.config.name",
                                  "expected the connector's name " + name.dump() + ", found " +
                                      sim::describe_json_value(props["name"]));
        }
        props["name"] = name;
      }
    }
    // Properties of the framework that a connector config carries map onto
    // the connect section: tasks.max, and consumer.override.* of the
    // consumer properties pipesim models (Connect's per-connector override of
    // the tasks' consumer, AbstractHerder's connector client config override
    // policy permitting); given in both places they must agree.
    connect::ConnectOptions from_connector = c.connect;
    {
      json framework = json::object();
      std::vector<std::pair<std::string, std::string>> given;  // (key as given, key in connect)
      if (props.contains("tasks.max")) given.emplace_back("tasks.max", "tasks.max");
      for (const char* key : {"max.poll.records", "session.timeout.ms", "heartbeat.interval.ms",
                              "max.poll.interval.ms", "fetch.max.wait.ms", "fetch.min.bytes",
                              "max.partition.fetch.bytes", "fetch.max.bytes"}) {
        const std::string override_key = std::string("consumer.override.") + key;
        if (props.contains(override_key)) given.emplace_back(override_key, key);
      }
      OptionReader reader(framework, path, rest_form);
      for (const auto& [as_given, key] : given) {
        framework[as_given] = props[as_given];
        props.erase(as_given);
        if (as_given != key) reader.alias(as_given, key);
      }
      visit(reader, from_connector);
      const json* connect_raw = raw.contains("connect") ? &raw["connect"] : nullptr;
      nlohmann::ordered_json mine, theirs;
      sim::OptionWriter write_mine(mine), write_theirs(theirs);
      visit(write_mine, from_connector);
      visit(write_theirs, c.connect);
      for (const auto& [as_given, key] : given) {
        if (connect_raw && connect_raw->contains(key) && mine[key] != theirs[key]) {
          sim::throw_config_error(path + "." + as_given, "expected the same value as connect." + key + " (" +
                                                             theirs[key].dump() + "), found " + mine[key].dump());
        }
      }
    }
    visit_collecting(props, path, rest_form, "connector", c.connector, c.ignored, errors);
    const sink::JdbcProperties jdbc =
        sink::parse_jdbc_properties(c.connector.jdbc_connection_properties, path + ".jdbcConnectionProperties");
    c.connector.socket_timeout = jdbc.socket_timeout;
    c.ignored.insert(c.ignored.end(), jdbc.ignored.begin(), jdbc.ignored.end());
    c.connect = from_connector;
  });

  if (const auto it = raw.find("faults"); it != raw.end()) {
    if (!it->is_array()) {
      errors.add("config error at faults: expected a list of faults, found " + sim::describe_json_value(*it));
    } else {
      for (std::size_t i = 0; i < it->size(); ++i) {
        errors.attempt([&] { c.faults.push_back(read_fault((*it)[i], "faults[" + std::to_string(i) + "]")); });
      }
    }
  } else {
    c.faults = default_faults();
  }
  // The checks across sections read the values above: only once they are all good.
  errors.throw_if_any();
  apply_producer_rules(raw, c);
  check_consistency(c, lint);
  check_targets(c);
  check_fault_times(c);
  check_fault_partitions(c);
  return c;
}

nlohmann::ordered_json effective_config(const Config& config) {
  Config c = config;  // the writer visits non-const fields
  nlohmann::ordered_json out;
  const auto section = [&out](const char* name, auto& options) {
    nlohmann::ordered_json s = nlohmann::ordered_json::object();
    sim::OptionWriter w(s);
    visit(w, options);
    out[name] = s;
  };
  section("workload", c.workload);
  section("producer", c.producer);
  section("app", c.app);
  section("kafka", c.kafka);
  section("connect", c.connect);
  section("operator", c.operator_options);
  section("connector", c.connector);
  section("clickhouse", c.clickhouse);
  section("keeper", c.keeper);
  nlohmann::ordered_json faults = nlohmann::ordered_json::array();
  for (const auto& f : c.faults) {
    nlohmann::ordered_json o;
    o["kind"] = f.kind;
    if (f.at) o["at"] = sim::format_duration(*f.at);
    if (!f.at) o["rate_per_day"] = f.rate_per_day;
    // An explicit "0s" window of a kind with a default must be printed, or
    // the printed config would load with the default (a swarm finding).
    if (f.duration.us > 0 || (f.duration_mean.us == 0 && default_window(f.kind).us > 0)) {
      o["duration"] = sim::format_duration(f.duration);
    }
    if (f.duration_mean.us > 0) o["duration_mean"] = sim::format_duration(f.duration_mean);
    if (!f.target.empty()) o["target"] = f.target;
    for (const auto& [k, v] : f.params.items()) o[k] = v;
    faults.push_back(o);
  }
  out["faults"] = faults;
  section("run", c.run);
  return out;
}

std::string config_reference_markdown() {
  Config c;
  std::string out;
  const auto section = [&out](const char* name, auto& options) {
    sim::OptionLister lister;
    visit(lister, options);
    out += std::string("### `") + name + "`\n\n| key | default | meaning |\n|---|---|---|\n";
    for (const auto& row : lister.rows()) {
      out += "| `" + row.key + "` | `" + row.default_value + "` | " + row.doc + " |\n";
    }
    out += "\n";
  };
  section("workload", c.workload);
  section("producer", c.producer);
  section("app", c.app);
  section("kafka", c.kafka);
  section("connect", c.connect);
  section("operator", c.operator_options);
  section("connector", c.connector);
  section("clickhouse", c.clickhouse);
  section("keeper", c.keeper);
  section("run", c.run);
  return out;
}

std::string config_digest(const Config& config) {
  static const char* kHex = "0123456789abcdef";
  std::uint64_t h = sim::fnv1a64(effective_config(config).dump());
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i) {
    s[static_cast<std::size_t>(i)] = kHex[h & 0xF];
    h >>= 4;
  }
  return s;
}

}  // namespace pipesim::pipeline
