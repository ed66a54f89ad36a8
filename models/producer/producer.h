// The business service's Kafka producer (kafka-clients 3.4, SPEC §4.1), as
// far as the walking skeleton needs it: every arrival quantum, the records
// of each partition are sent to its leader and appended after the produce
// round trip; with no fault, every send succeeds once (acks=all).
// Retries, idempotence and failed sends come with the producer issue.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "models/broker/partition_log.h"
#include "models/ledger/ledger.h"
#include "models/producer/producer_options.h"
#include "models/workload/workload.h"
#include "sim/engine/simulation.h"

namespace pipesim::producer {

struct ProducerCounters {
  std::int64_t records_sent = 0;
  std::int64_t requests = 0;
  std::int64_t kafka_records = 0;
};

class Producer final : public sim::Component {
 public:
  // `on_append(p)` is told when partition p's log grew (the leader answers waiting fetches).
  Producer(sim::Simulation& sim, const ProducerOptions& options, workload::Workload& workload,
           std::vector<broker::PartitionLog>& logs, ledger::Ledger& ledger,
           sim::Time produce_latency, std::function<void(int)> on_append);

  // Emits records from now until `stop` (exclusive).
  void start(sim::Time stop);
  void handle(const sim::Event& event) override;
  [[nodiscard]] const ProducerCounters& counters() const { return counters_; }

 private:
  enum EventType : std::uint32_t { kTick = 1, kProduceAnswer = 2 };
  struct InFlight {
    int partition;
    std::int64_t first_id;
    std::int64_t count;
  };
  void tick();
  void answer();

  sim::Simulation& sim_;
  ProducerOptions options_;
  workload::Workload& workload_;
  std::vector<broker::PartitionLog>& logs_;
  ledger::Ledger& ledger_;
  sim::Time produce_latency_;
  std::function<void(int)> on_append_;
  sim::ComponentId id_;
  sim::Time stop_{};
  std::vector<std::int64_t> counts_;
  // Requests answered in send order (constant round trip): a FIFO of the
  // quanta in flight, one request per quantum carrying every partition.
  std::deque<std::vector<InFlight>> in_flight_;
  ProducerCounters counters_;
};

}  // namespace pipesim::producer
