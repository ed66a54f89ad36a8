// The keys the real systems define, from their ConfigDefs (data/configdefs/:
// Kafka 3.7.1's ConsumerConfig, ProducerConfig, WorkerConfig + DistributedConfig,
// ConnectorConfig + SinkConnectorConfig, and ClickHouseSinkConfig of the sink
// v1.3.9), compiled into the binary. A key a section does not model but the
// real system defines is accepted and listed as ignored; any other is an error.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pipesim::pipeline {

// The .tsv text of one list ("consumer", "producer", "worker", "connector",
// "clickhouse_sink"); empty for another name. Generated at build time.
std::string_view configdef_tsv(std::string_view name);

// The keys of one list, sorted.
const std::vector<std::string>& configdef_keys(std::string_view name);
bool configdef_has(std::string_view name, std::string_view key);

// Whether the real system knows `key` in a section of pipesim's config:
//   "producer"  ProducerConfig;
//   "connect"   the worker (WorkerConfig, DistributedConfig), the tasks'
//               consumer (ConsumerConfig, plain or "consumer."-prefixed, as a
//               worker passes them on), and the worker's prefixed families
//               (producer.*, admin.*, key.converter.*, config.providers.*, ...);
//   "connector" ConnectorConfig, SinkConnectorConfig and ClickHouseSinkConfig,
//               the connector's override families (consumer.override.* of a
//               consumer key, producer.override.*, admin.override.*) and
//               alias-named ones (transforms.*, predicates.*, key.converter.*).
bool real_key(std::string_view section, std::string_view key);
// The real keys of a section, for did-you-mean hints.
std::vector<std::string> real_key_candidates(std::string_view section);

}  // namespace pipesim::pipeline
