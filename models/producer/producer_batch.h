// What the producer sends: one record batch of one partition
// (kafka-clients ProducerBatch).
//
// Model: a batch holds records of consecutive ids with one copy cause, at
// most records_per_batch() of them; it is created by its first record
// (createdMs: that record's arrival, from which linger.ms and
// delivery.timeout.ms count) and takes records until it is full or drained.
// Once sent it has one sequence range and is retried, expired,
// acknowledged or failed as a whole, so the broker's dedup of the last 5
// batches works on it exactly as on the real batches.
#pragma once

#include <cstdint>
#include <vector>

#include "models/ledger/copy_cause.h"
#include "sim/engine/invariant.h"
#include "sim/engine/time.h"

namespace pipesim::producer {

struct ProducerBatch {
  int partition = 0;
  std::int64_t first_id = 0;
  std::int64_t records = 0;
  ledger::CopyCause cause = ledger::CopyCause::ORIGINAL;
  int resends = 0;      // application re-sends behind these records
  sim::Time created{};  // ProducerBatch.createdMs: delivery.timeout.ms counts from here
  // Idempotence (assigned when the batch is first drained).
  std::int64_t producer_id = -1;
  int epoch = 0;
  std::int64_t base_sequence = -1;  // -1: no sequence yet
  bool sequence_reset = false;      // rewritten by an epoch bump
  int attempts = 0;                 // retries so far (ProducerBatch.attempts)
  sim::Time retry_at{};             // backing off until (retry.backoff.ms)
  bool in_retry = false;            // re-enqueued at least once
  // Ground truth the client does not know: an attempt of it was appended,
  // under this epoch and base sequence.
  bool appended = false;
  int appended_epoch = -1;
  std::int64_t appended_sequence = -1;
  bool done = false;        // completed or failed; an expired batch may still sit in a request
  bool in_request = false;  // part of an unanswered request

  [[nodiscard]] bool has_sequence() const { return base_sequence >= 0; }
  // An epoch bump gave it new numbers after an attempt of it was written.
  [[nodiscard]] bool resequenced_since_written() const {
    return appended && (epoch != appended_epoch || base_sequence != appended_sequence);
  }
  [[nodiscard]] std::int64_t last_sequence() const { return base_sequence + records - 1; }
  [[nodiscard]] std::int64_t end_id() const { return first_id + records; }
};

// The live batches, addressed by a stable id.
class BatchPool {
 public:
  std::uint32_t add(const ProducerBatch& batch) {
    if (!free_.empty()) {
      const std::uint32_t id = free_.back();
      free_.pop_back();
      slots_[id] = batch;
      return id;
    }
    slots_.push_back(batch);
    return static_cast<std::uint32_t>(slots_.size() - 1);
  }
  ProducerBatch& operator[](std::uint32_t id) { return slots_[id]; }
  const ProducerBatch& operator[](std::uint32_t id) const { return slots_[id]; }
  void release(std::uint32_t id) {
    PIPESIM_INVARIANT(!slots_[id].in_request, "released a batch still in a request");
    free_.push_back(id);
  }

 private:
  std::vector<ProducerBatch> slots_;
  std::vector<std::uint32_t> free_;
};

}  // namespace pipesim::producer
