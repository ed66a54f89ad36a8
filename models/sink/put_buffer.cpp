#include "models/sink/put_buffer.h"

#include <algorithm>

namespace pipesim::sink {

namespace {

// Why the buffer's records are inserted, when several batches make it up: a
// batch put again after a failed flush makes the whole next flush a
// redelivery (as WorkerSinkTask's redelivery of one batch is); records read
// again after a restart make it a replay.
ledger::InsertTag combine(ledger::InsertTag held, ledger::InsertTag added) {
  using ledger::InsertTag;
  if (held == InsertTag::REDELIVERY || added == InsertTag::REDELIVERY) return InsertTag::REDELIVERY;
  if (held == InsertTag::REPLAY || added == InsertTag::REPLAY) return InsertTag::REPLAY;
  return held;
}

}  // namespace

void PutBuffer::reset(sim::Time now) {
  entries_.clear();
  flushed_.clear();
  size_ = 0;
  last_flush_ = now;
}

void PutBuffer::add(const std::vector<PartitionBatch>& batch) {
  for (const PartitionBatch& pb : batch) {
    size_ += pb.offsets.count();
    auto it = std::find_if(entries_.begin(), entries_.end(),
                           [&](const PartitionBatch& e) { return e.partition == pb.partition; });
    if (it == entries_.end()) {
      entries_.push_back(PartitionBatch{pb.partition, pb.offsets, pb.tag, {}});
      continue;
    }
    PartitionBatch& held = *it;
    held.tag = combine(held.tag, pb.tag);
    // The part of the new records the buffer already holds is held again.
    const std::int64_t lo = std::max(held.offsets.min, pb.offsets.min);
    const std::int64_t hi = std::min(held.offsets.max, pb.offsets.max);
    if (lo <= hi) held.again.push_back(OffsetRange{lo, hi});
    // Consumption is contiguous, except after a seek back (a truncated log):
    // the span grows to cover what is new on either side.
    held.offsets.min = std::min(held.offsets.min, pb.offsets.min);
    held.offsets.max = std::max(held.offsets.max, pb.offsets.max);
  }
}

bool PutBuffer::flush_due(std::int64_t buffer_count, sim::Time flush_time, sim::Time now) const {
  const bool size_threshold = size_ >= buffer_count;
  const bool time_threshold =
      flush_time > sim::Time{} && now - last_flush_ >= flush_time && !empty();
  return size_threshold || time_threshold;
}

void PutBuffer::flushed(sim::Time now) {
  for (const PartitionBatch& e : entries_) {
    auto it = std::find_if(flushed_.begin(), flushed_.end(),
                           [&](const Flushed& f) { return f.partition == e.partition; });
    if (it == flushed_.end()) {
      flushed_.push_back(Flushed{e.partition, e.offsets.max + 1});
    } else {
      it->offset = std::max(it->offset, e.offsets.max + 1);
    }
  }
  entries_.clear();
  size_ = 0;
  last_flush_ = now;
}

std::int64_t PutBuffer::flushed_offset(int partition) const {
  for (const Flushed& f : flushed_) {
    if (f.partition == partition) return f.offset;
  }
  return -1;
}

void PutBuffer::close() {
  // The framework closes every partition at once (an eager revocation, a
  // lost assignment, a stop), so nothing of the buffer stays.
  entries_.clear();
  flushed_.clear();
  size_ = 0;
}

}  // namespace pipesim::sink
