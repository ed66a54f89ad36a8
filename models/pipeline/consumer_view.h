// What the brokers show the sink tasks' consumers (connect::LogView): the
// leaders' logs up to their high watermarks, with the healthy producer's
// direct feed written as far as it is due whenever a consumer looks.
#pragma once

#include <algorithm>
#include <vector>

#include "models/broker/kafka_cluster.h"
#include "models/broker/partition_log.h"
#include "models/connect/consumer_group.h"
#include "models/connect/fetcher.h"
#include "models/pipeline/config.h"
#include "models/producer/direct_feed.h"
#include "sim/engine/simulation.h"

namespace pipesim::pipeline {

// The sink tasks' consumers' fetch settings from the config, in records.
inline connect::FetchSettings fetch_settings(const Config& c) {
  // Bytes on the wire per record: the value and ~18 bytes of framing
  // (DefaultRecord); the batch headers are left out.
  const std::int64_t size = c.workload.record_bytes + 18;
  connect::FetchSettings f;
  f.latency = c.connect.fetch_latency;
  f.max_wait = c.connect.fetch_max_wait;
  f.min_records = (c.connect.fetch_min_bytes + size - 1) / size;
  if (f.min_records == 0) {
    // fetch.min.bytes=0: the broker answers at once, empty or not, just
    // as with fetch.max.wait.ms=0.
    f.min_records = 1;
    f.max_wait = sim::Time{0};
  }
  f.max_partition_records = std::max<std::int64_t>(1, c.connect.max_partition_fetch_bytes / size);
  f.max_response_records = std::max<std::int64_t>(1, c.connect.fetch_max_bytes / size);
  return f;
}

class ConsumerView final : public connect::LogView, public connect::GroupCoordinator {
 public:
  ConsumerView(sim::Simulation& sim, broker::KafkaCluster& cluster,
               std::vector<broker::PartitionLog>& logs, producer::DirectFeed& feed)
      : sim_(sim), cluster_(cluster), logs_(logs), feed_(feed) {}

  [[nodiscard]] std::int64_t high_watermark(int partition) const override {
    feed_.materialize(partition, sim_.now());
    return logs_[static_cast<std::size_t>(partition)].high_watermark();
  }
  [[nodiscard]] std::int64_t log_start(int partition) const override {
    return logs_[static_cast<std::size_t>(partition)].log_start_offset();
  }
  [[nodiscard]] int leader(int partition) const override {
    // A dead leader that the controller has not fenced yet is still named
    // by the metadata, but answers nothing: no fetch goes anywhere useful.
    const int l = cluster_.leader(partition);
    return l >= 0 && cluster_.alive(l) ? l : -1;
  }
  [[nodiscard]] sim::Time visible_at(int partition, std::int64_t offset) const override {
    return feed_.visible_at(partition, offset);
  }
  [[nodiscard]] std::int64_t high_watermark_at(int partition, sim::Time t) const override {
    feed_.materialize(partition, sim_.now());
    return feed_.high_watermark_at(partition, t);
  }
  [[nodiscard]] bool group_coordinator_available(int offsets_partition) const override {
    return cluster_.group_coordinator_available(offsets_partition);
  }

 private:
  sim::Simulation& sim_;
  broker::KafkaCluster& cluster_;
  std::vector<broker::PartitionLog>& logs_;
  producer::DirectFeed& feed_;
};

}  // namespace pipesim::pipeline
