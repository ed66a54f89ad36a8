// The healthy producer in aggregate (a declared shortcut, off with
// run.exact=true): while no fault touches the producer or the brokers, a
// record is appended by its leader one way after it arrives and is
// visible to consumers replication_latency later (when the ISR has it),
// which is what the exact producer's requests do then, less the few
// hundred microseconds by which a request groups records; no request,
// answer or sequence check is simulated. Records stay ranges: the feed
// appends lazily, when someone looks (a consumer, the pipeline before a
// change), as one segment extension per partition.
//
// Hand-over: the feed starts from the exact producer's next ids, but writes
// nothing of a partition until the exact producer has drained it (its last
// batches appended and replicated), so the log keeps id order and the
// broker's sequence checks see no gap. It stops by writing everything that
// arrived before the stop, visible at once (records of the last
// replication_latency become visible up to that much early: declared, and
// the pipeline only stops the feed a pre-roll ahead of any fault).
//
// Idempotence: the feed's records take the producer's next sequences as
// acknowledged batches, and the broker registers them in its producer state,
// so the exact producer continues the sequences when it takes over.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "models/broker/kafka_cluster.h"
#include "models/ledger/ledger.h"
#include "models/producer/producer.h"
#include "models/workload/workload.h"

namespace pipesim::producer {

class DirectFeed {
 public:
  DirectFeed(workload::Workload& workload, ledger::Ledger& ledger, broker::KafkaCluster& cluster,
             std::vector<broker::PartitionLog>& logs, Producer& producer, sim::Time one_way);

  [[nodiscard]] bool active() const { return active_; }
  // Takes over the arrivals from ids `next_ids` on at `now`.
  void start(sim::Time now, const std::vector<std::int64_t>& next_ids);
  // Writes what arrived before `now`, all visible; returns the next ids.
  std::vector<std::int64_t> stop(sim::Time now);

  // Appends and exposes what is due by `now` (every partition / one).
  void materialize(sim::Time now);
  void materialize(int partition, sim::Time now);
  // The same up to the last arrival block boundary only, so that no arrival
  // instant is drawn (what an aggregated stretch needs: counts, not instants).
  void materialize_coarse(int partition, sim::Time now);
  // Partitions still held for the exact producer; releases those it has
  // drained (they are materialised). Returns the partitions released.
  std::vector<int> release_drained(sim::Time now);
  [[nodiscard]] bool held(int partition) const { return hold_[static_cast<std::size_t>(partition)]; }

  // For consumers (connect::LogView): when offset `offset` becomes readable
  // (Time::max(): the feed cannot tell: held, or not its record), and the
  // high watermark at an earlier instant.
  [[nodiscard]] sim::Time visible_at(int partition, std::int64_t offset) const;
  [[nodiscard]] std::int64_t high_watermark_at(int partition, sim::Time t) const;
  // The same from block counts alone (no arrival instant drawn): exact at
  // block boundaries, interpolated in between; for bookkeeping that needs no
  // exact offset (the lag a commit sees in an aggregated stretch).
  [[nodiscard]] double expected_high_watermark_at(int partition, sim::Time t) const;

 private:
  struct Partition {
    std::int64_t first_id = 0;     // the feed's first record
    std::int64_t base_offset = 0;  // its offset
    sim::Time since{};             // released at (nothing is appended before)
    std::int64_t appended = 0;     // next id to append
    std::int64_t exposed = 0;      // next id to expose
    sim::Time replication{};
  };
  // Records of the feed appended / visible by t.
  [[nodiscard]] std::int64_t appended_by(int partition, sim::Time t, bool coarse = false) const;
  [[nodiscard]] std::int64_t visible_by(int partition, sim::Time t, bool coarse = false) const;
  void write(int partition, sim::Time now, bool coarse);
  [[nodiscard]] std::function<sim::Time(std::int64_t)> append_time(int partition) const;
  void release(int partition, sim::Time now);

  workload::Workload& workload_;
  ledger::Ledger& ledger_;
  broker::KafkaCluster& cluster_;
  std::vector<broker::PartitionLog>& logs_;
  Producer& producer_;
  sim::Time one_way_;
  bool active_ = false;
  std::vector<Partition> parts_;
  std::vector<char> hold_;
};

}  // namespace pipesim::producer
