// The broker's idempotence state of one partition (Kafka 3.7
// ProducerStateManager, ProducerStateEntry, ProducerAppendInfo.checkSequence):
// per producer id, its epoch and the metadata of its last batches. A batch
// whose (epoch, first sequence, last sequence) matches one of the last
// NUM_BATCHES_TO_RETAIN = 5 is a duplicate: the broker answers it with the
// original offset and appends nothing. Otherwise it must be the next
// sequence (or sequence 0 of a newer epoch), else OUT_OF_ORDER_SEQUENCE_NUMBER.
// A producer id with no state (new, expired after producer.id.expiration.ms,
// or deleted by retention) is accepted with any sequence.
//
// Followers build the same state from the replicated log, so one instance
// per partition stands for every replica; a truncation forgets the batches
// it removed (the real broker reloads the state from its snapshot and log).
#pragma once

#include <cstdint>
#include <deque>
#include <map>

#include "sim/engine/time.h"

namespace pipesim::broker {

enum class SequenceCheck : std::uint8_t { APPEND, DUPLICATE, OUT_OF_ORDER, FENCED_EPOCH };

class ProducerStateManager {
 public:
  // NUM_BATCHES_TO_RETAIN of ProducerStateEntry.
  static constexpr std::size_t kBatchesToRetain = 5;

  ProducerStateManager(sim::Time producer_id_expiration, sim::Time expiration_check_interval)
      : expiration_(producer_id_expiration), check_interval_(expiration_check_interval) {}

  // Checks a batch of an idempotent producer arriving at `now`; for a
  // duplicate, `duplicate_offset` is the offset of the original append.
  SequenceCheck check(std::int64_t producer_id, int epoch, std::int64_t first_seq,
                      std::int64_t last_seq, sim::Time now, std::int64_t& duplicate_offset);
  void on_append(std::int64_t producer_id, int epoch, std::int64_t first_seq, std::int64_t last_seq,
                 std::int64_t first_offset, sim::Time batch_timestamp);
  // Forgets the batches at offsets >= new_end.
  void truncate(std::int64_t new_end);
  // Producers whose last batch lies below the new log start are removed.
  void truncate_head(std::int64_t log_start);

  [[nodiscard]] std::size_t producers() const { return producers_.size(); }

 private:
  struct BatchMetadata {
    std::int64_t first_seq = 0;
    std::int64_t last_seq = 0;
    std::int64_t first_offset = 0;
    int epoch = 0;
  };
  struct Entry {
    std::deque<BatchMetadata> batches;  // oldest first; the last kBatchesToRetain are checked
    sim::Time last_timestamp{};
  };
  // Deeper than kBatchesToRetain so that the state before a truncation can be
  // rebuilt (the real broker replays its log for that).
  static constexpr std::size_t kHistory = 16;

  // removeExpiredProducers runs every producer.id.expiration.check.interval.ms
  // and drops producers idle for producer.id.expiration.ms.
  [[nodiscard]] bool expired(const Entry& e, sim::Time now) const;

  sim::Time expiration_;
  sim::Time check_interval_;
  std::map<std::int64_t, Entry> producers_;
};

}  // namespace pipesim::broker
