#include "models/pipeline/fault_timeline.h"

#include <algorithm>

#include "sim/config/duration.h"

namespace pipesim::pipeline {

std::vector<std::string> fault_targets(const Config& config, const std::string& kind) {
  std::vector<std::string> t;
  const auto add = [&t](const std::string& prefix, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) t.push_back(prefix + std::to_string(i));
  };
  if (kind == "worker_crash") add("worker-", config.connect.workers);
  if (kind == "task_restart") add("task-", config.connect.tasks_max);
  if (kind == "broker_crash") add("broker-", config.kafka.brokers);
  if (kind == "replica_crash" || kind == "keeper_session_loss")
    add("replica-", config.clickhouse.replicas);
  return t;
}

int fault_target_index(const std::string& target) {
  const auto dash = target.rfind('-');
  return dash == std::string::npos ? 0 : std::stoi(target.substr(dash + 1));
}

std::vector<int> fault_partitions(const nlohmann::json& params, int partitions) {
  std::vector<int> out;
  const auto it = params.find("partitions");
  if (it == params.end() || *it == "all") {
    for (int p = 0; p < partitions; ++p) out.push_back(p);
  } else if (it->is_array()) {
    for (const auto& p : *it) out.push_back(p.get<int>());
  } else {
    out.push_back(it->get<int>());
  }
  return out;
}

std::vector<sim::FaultOccurrence> fault_schedule(const Config& config, std::uint64_t seed) {
  return sim::build_fault_schedule(
      config.faults, seed, config.run.duration,
      [&config](const std::string& kind) { return fault_targets(config, kind); });
}

std::vector<std::string> poisson_fault_kinds(const Config& config) {
  std::vector<std::string> kinds;
  for (const auto& f : config.faults) {
    if (!f.at && f.rate_per_day > 0 && std::find(kinds.begin(), kinds.end(), f.kind) == kinds.end())
      kinds.push_back(f.kind);
  }
  return kinds;
}

Config tilted_config(const Config& real, const sim::Tilt& tilt) {
  Config c = real;
  c.faults = sim::tilt_specs(real.faults, tilt);
  return c;
}

double importance_weight(const Config& real, const sim::Tilt& tilt, std::uint64_t seed) {
  if (tilt.empty()) return 1.0;
  return sim::likelihood_ratio(real.faults, tilt, fault_schedule(tilted_config(real, tilt), seed),
                               real.run.duration);
}

producer::ResponseLoss response_loss_window(const sim::FaultSpec& spec, sim::Time from, sim::Time until) {
  const std::string connection = spec.params.value("connection", std::string("retransmit"));
  producer::ResponseLoss loss;
  loss.probability = spec.params.value("probability", 1.0);
  loss.mode = connection == "reset"   ? producer::LossMode::RESET
              : connection == "stall" ? producer::LossMode::STALL
                                      : producer::LossMode::RETRANSMIT;
  loss.tcp_rto_min = sim::parse_duration(spec.params.value("tcp_rto_min", std::string("200ms")))
                         .value_or(sim::Time::millis(200));
  loss.tcp_retries2 = spec.params.value("tcp_retries2", std::int64_t{15});
  loss.from = from;
  loss.until = until;
  return loss;
}

}  // namespace pipesim::pipeline
