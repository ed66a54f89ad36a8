// The faults section of a config: each fault read and checked (kind, rate or
// time, window, target, partitions, the kind's own parameters), the fault
// kinds, and the production baseline's default fault mix.
#include "models/pipeline/config_detail.h"

#include <algorithm>

#include "sim/config/duration.h"

namespace pipesim::pipeline {

using nlohmann::json;
using sim::ConfigError;
using sim::OptionReader;
using sim::Time;

namespace {

std::string target_prefix(const std::string& kind) {
  if (kind == "worker_crash") return "worker-";
  if (kind == "task_restart") return "task-";
  if (kind == "broker_crash") return "broker-";
  // insert_timeout may target one replica (only inserts routed to it hang).
  if (kind == "replica_crash" || kind == "keeper_session_loss" || kind == "insert_timeout")
    return "replica-";
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

sim::FaultSpec poisson(const std::string& kind, double rate, Time duration = Time{0}) {
  sim::FaultSpec s;
  s.kind = kind;
  s.rate_per_day = rate;
  s.duration = duration;
  return s;
}

}  // namespace

namespace config_detail {

// Windows that need a length when the config gives none: model defaults,
// written out by --print (0 for kinds whose fault is an instant).
Time default_window(const std::string& kind) {
  if (kind == "response_loss") return Time::seconds(30);
  if (kind == "broker_crash") return Time::minutes(1);
  if (kind == "leader_flapping") return Time::minutes(10);
  // Long enough to pass operation_timeout_ms (10 s) and end every session:
  // the case keeper_stall is for (a shorter one only delays requests).
  if (kind == "keeper_stall") return Time::seconds(15);
  return Time{0};
}

sim::FaultSpec read_fault(const json& f, const std::string& path) {
  if (!f.is_object())
    sim::throw_config_error(path, "expected an object, found " + sim::describe_json_value(f));
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
    sim::throw_config_error(
        path + ".kind",
        "unknown fault kind \"" + spec.kind + "\"" +
            (hint.empty() ? "; expected " + expected_kinds : "; did you mean \"" + hint + "\"?"));
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
    sim::throw_config_error(path,
                            "a fault needs exactly one of \"at\" (scheduled) or "
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
    // What a lost segment does (producer.h): it is retransmitted on the live
    // connection (the default; Linux's tcp_rto_min and tcp_retries2), or the
    // way back stalls silently, or the connection is reset.
    std::string connection = "retransmit";
    r.choice("connection", connection, {"retransmit", "stall", "reset"}, "");
    keep("connection", connection);
    if (connection == "retransmit") {
      Time rto_min = Time::millis(200);
      r.duration("tcp_rto_min", rto_min, Time::millis(1), Time::seconds(120), "");
      keep("tcp_rto_min", sim::format_duration(rto_min));
      std::int64_t retries2 = 15;
      r.integer("tcp_retries2", retries2, 1, 255, "");
      keep("tcp_retries2", retries2);
    }
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
      sim::throw_config_error(
          path + ".extra_ops_per_s",
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
  if (!f.contains("duration") && !f.contains("duration_mean"))
    spec.duration = default_window(spec.kind);
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
    if (spec.kind == "replica_crash" || spec.kind == "keeper_session_loss" ||
        spec.kind == "insert_timeout") {
      count = c.clickhouse.replicas;
    }
    const std::string expected =
        "\"" + prefix + "0\" to \"" + prefix + std::to_string(count - 1) + "\"";
    const std::string& t = spec.target;
    if (t.rfind(prefix, 0) != 0)
      sim::throw_config_error(path, "expected " + expected + ", found \"" + t + "\"");
    const std::string digits = t.substr(prefix.size());
    if (digits.empty() || digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(),
                     [](char ch) { return ch >= '0' && ch <= '9'; }) ||
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
                              "expected a time before run.duration (" +
                                  sim::format_duration(c.run.duration) +
                                  "): faults come while the workload runs, found \"" +
                                  sim::format_duration(*at) + "\"");
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
                                    std::to_string(c.kafka.num_partitions - 1) + ", found " +
                                    p.dump());
      }
    }
  }
}

}  // namespace config_detail

const std::vector<std::string>& fault_kinds() {
  static const std::vector<std::string> kinds = {
      "leader_change", "leader_flapping", "response_loss", "broker_crash", "producer_restart",
      "worker_crash", "task_restart", "rebalance", "insert_timeout", "keeper_backlog",
      "keeper_election", "replica_crash", "state_wipe", "manual_resend",
      // docs/model.md §4.6: a ClickHouse server's Keeper session expires (tables read-only).
      "keeper_session_loss",
      // docs/model.md §4.6: Keeper answers nothing for a while (every session ends past the operation timeout).
      "keeper_stall"};
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

}  // namespace pipesim::pipeline
