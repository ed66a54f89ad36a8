// A worker's, a producer's and a consumer's own .properties files as config
// input (`--worker-properties`, `--producer-properties`,
// `--consumer-properties`): each key goes where it means what it means in
// the real system.
//   worker.properties   offset.flush.interval.ms, scheduled.rebalance.max.delay.ms,
//                       task.shutdown.graceful.timeout.ms -> connect.*;
//                       session.timeout.ms (the worker group's) ->
//                       connect.worker.session.timeout.ms; consumer.K (the
//                       worker passes it to every task's consumer) as K of a
//                       consumer.properties;
//   consumer.properties the tasks' consumer: max.poll.records,
//                       session.timeout.ms, heartbeat.interval.ms,
//                       max.poll.interval.ms, fetch.* -> connect.*;
//   producer.properties the service's producer -> the producer section.
// Any other key the real ConfigDef defines is ignored (listed, naming the
// file), and so is a worker key Kafka removed (listed with what replaced it:
// Connect only logs it as unused); a key it does not define is an error
// naming the file and line, as is a bad value of a modelled key.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipesim::pipeline {

struct PropertiesFiles {
  std::string worker;
  std::string producer;
  std::string consumer;
  [[nodiscard]] bool empty() const { return worker.empty() && producer.empty() && consumer.empty(); }
};

// Sets the files' modelled keys in `raw` (a config document), over what it
// holds; returns the ignored keys as "FILE: key". Throws sim::ConfigError.
std::vector<std::string> apply_properties_files(nlohmann::json& raw, const PropertiesFiles& files);

}  // namespace pipesim::pipeline
