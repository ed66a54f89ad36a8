#include "models/broker/producer_state.h"

#include <algorithm>

namespace pipesim::broker {

bool ProducerStateManager::expired(const Entry& e, sim::Time now) const {
  // The first periodic check (at k * interval, k >= 1) at which the producer
  // has been idle for the expiration time.
  const std::int64_t due = e.last_timestamp.us + expiration_.us;
  const std::int64_t interval = std::max<std::int64_t>(1, check_interval_.us);
  std::int64_t check = ((due + interval - 1) / interval) * interval;
  if (check < interval) check = interval;
  return check <= now.us;
}

SequenceCheck ProducerStateManager::check(std::int64_t producer_id, int epoch, std::int64_t first_seq,
                                          std::int64_t last_seq, sim::Time now,
                                          std::int64_t& duplicate_offset, sim::Time& duplicate_appended_at) {
  const auto it = producers_.find(producer_id);
  if (it == producers_.end()) return SequenceCheck::APPEND_UNKNOWN_PRODUCER;
  if (expired(it->second, now)) {
    producers_.erase(it);
    expired_ids_.insert(producer_id);
    return SequenceCheck::APPEND_EXPIRED_PRODUCER;
  }
  const Entry& e = it->second;
  const BatchMetadata& last = e.batches.back();
  if (epoch < last.epoch) return SequenceCheck::FENCED_EPOCH;
  if (epoch > last.epoch) return first_seq == 0 ? SequenceCheck::APPEND_NEW_EPOCH : SequenceCheck::OUT_OF_ORDER;
  // findDuplicateBatch: only the retained batches of the current epoch.
  const std::size_t n = e.batches.size();
  for (std::size_t i = n > kBatchesToRetain ? n - kBatchesToRetain : 0; i < n; ++i) {
    const BatchMetadata& b = e.batches[i];
    if (b.epoch == epoch && b.first_seq == first_seq && b.last_seq == last_seq) {
      duplicate_offset = b.first_offset;
      duplicate_appended_at = b.appended_at;
      return SequenceCheck::DUPLICATE;
    }
  }
  return first_seq == last.last_seq + 1 ? SequenceCheck::APPEND : SequenceCheck::OUT_OF_ORDER;
}

void ProducerStateManager::on_append(std::int64_t producer_id, int epoch, std::int64_t first_seq,
                                     std::int64_t last_seq, std::int64_t first_offset,
                                     sim::Time batch_timestamp, sim::Time appended_at) {
  Entry& e = producers_[producer_id];
  e.batches.push_back(BatchMetadata{first_seq, last_seq, first_offset, epoch, appended_at});
  if (e.batches.size() > kHistory) {
    e.floor = e.batches.front();
    e.has_floor = true;
    e.batches.pop_front();
  }
  e.last_timestamp = std::max(e.last_timestamp, batch_timestamp);
}

void ProducerStateManager::truncate(std::int64_t new_end) {
  for (auto it = producers_.begin(); it != producers_.end();) {
    Entry& e = it->second;
    auto& batches = e.batches;
    while (!batches.empty() && batches.back().first_offset >= new_end) batches.pop_back();
    if (batches.empty() && e.has_floor && e.floor.first_offset < new_end) {
      // Every remembered batch was cut: the reload finds an older one.
      batches.push_back(e.floor);
      e.has_floor = false;
    }
    // A producer with nothing left in the log is unknown to the new leader.
    it = batches.empty() ? producers_.erase(it) : std::next(it);
  }
}

}  // namespace pipesim::broker
