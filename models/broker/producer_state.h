// The broker's idempotence state of one partition (Kafka 3.7
// ProducerStateManager, ProducerStateEntry, ProducerAppendInfo.checkSequence):
// per producer id, its epoch and the metadata of its last batches. A batch
// whose (epoch, first sequence, last sequence) matches one of the last
// NUM_BATCHES_TO_RETAIN = 5 is a duplicate: the broker answers it with the
// original offset and appends nothing. Otherwise it must be the next
// sequence (or sequence 0 of a newer epoch), else OUT_OF_ORDER_SEQUENCE_NUMBER.
// A producer id with no state (new, or expired after producer.id.expiration.ms)
// is accepted with any sequence. Retention does not drop a producer's state
// (3.7 ProducerStateManager.onLogStartOffsetIncremented keeps it; only
// expiration removes it).
//
// Followers build the same state from the replicated log, so one instance
// per partition stands for every replica. A truncation rebuilds the state
// from what stays in the log (UnifiedLog.truncateTo -> ProducerStateManager.
// truncateAndReload): each producer's last batch below the new end, so the
// next batch of a producer whose tail was cut is OUT_OF_ORDER_SEQUENCE_NUMBER
// (its sequence is past the reloaded last one) and the client bumps its epoch.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>

#include "sim/engine/time.h"

namespace pipesim::broker {

enum class SequenceCheck : std::uint8_t {
  APPEND,                   // the next sequence of the producer's epoch
  APPEND_NEW_EPOCH,         // sequence 0 of a newer epoch
  APPEND_UNKNOWN_PRODUCER,  // no state: a new producer id (or its whole history truncated)
  APPEND_EXPIRED_PRODUCER,  // the state was dropped by producer.id.expiration.ms
  DUPLICATE,
  OUT_OF_ORDER,
  FENCED_EPOCH,
};
[[nodiscard]] inline bool appends(SequenceCheck c) {
  return c == SequenceCheck::APPEND || c == SequenceCheck::APPEND_NEW_EPOCH ||
         c == SequenceCheck::APPEND_UNKNOWN_PRODUCER || c == SequenceCheck::APPEND_EXPIRED_PRODUCER;
}

class ProducerStateManager {
 public:
  // NUM_BATCHES_TO_RETAIN of ProducerStateEntry.
  static constexpr std::size_t kBatchesToRetain = 5;

  ProducerStateManager(sim::Time producer_id_expiration, sim::Time expiration_check_interval)
      : expiration_(producer_id_expiration), check_interval_(expiration_check_interval) {}

  // Checks a batch of an idempotent producer arriving at `now`; for a
  // duplicate, `duplicate_offset` is the offset of the original append and
  // `duplicate_appended_at` the time it was appended.
  SequenceCheck check(std::int64_t producer_id, int epoch, std::int64_t first_seq,
                      std::int64_t last_seq, sim::Time now, std::int64_t& duplicate_offset,
                      sim::Time& duplicate_appended_at);
  SequenceCheck check(std::int64_t producer_id, int epoch, std::int64_t first_seq, std::int64_t last_seq,
                      sim::Time now, std::int64_t& duplicate_offset) {
    sim::Time appended_at{};
    return check(producer_id, epoch, first_seq, last_seq, now, duplicate_offset, appended_at);
  }
  void on_append(std::int64_t producer_id, int epoch, std::int64_t first_seq, std::int64_t last_seq,
                 std::int64_t first_offset, sim::Time batch_timestamp, sim::Time appended_at);
  // truncateAndReload: forgets the batches at offsets >= new_end; a
  // producer keeps its last batch below new_end.
  void truncate(std::int64_t new_end);

  [[nodiscard]] std::size_t producers() const { return producers_.size(); }
  // The state of this producer id was dropped by producer.id.expiration.ms
  // at some point (what it holds now was rebuilt by later appends).
  [[nodiscard]] bool expired_once(std::int64_t producer_id) const { return expired_ids_.count(producer_id) > 0; }

 private:
  struct BatchMetadata {
    std::int64_t first_seq = 0;
    std::int64_t last_seq = 0;
    std::int64_t first_offset = 0;
    int epoch = 0;
    sim::Time appended_at{};
  };
  struct Entry {
    std::deque<BatchMetadata> batches;  // oldest first; the last kBatchesToRetain are checked
    // The newest batch that fell out of `batches`: what a truncation that
    // cuts all of `batches` reloads (model: the real broker replays its log
    // and finds the producer's last batch below the cut, which may be older).
    BatchMetadata floor;
    bool has_floor = false;
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
  std::set<std::int64_t> expired_ids_;
};

}  // namespace pipesim::broker
