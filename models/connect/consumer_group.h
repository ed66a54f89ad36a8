// The sink's consumer group connect-<name> (docs/model.md §4.2, §4.3): committed
// offsets (what __consumer_offsets holds, surviving any crash) and the
// partition assignment of the consumer's default eager RangeAssignor.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/time.h"

namespace pipesim::connect {

// The broker hosting the group (its coordinator), as the consumers see it.
class GroupCoordinator {
 public:
  virtual ~GroupCoordinator() = default;
  [[nodiscard]] virtual bool group_coordinator_available(int offsets_partition) const = 0;
};

class ConsumerGroup {
 public:
  explicit ConsumerGroup(int partitions)
      : committed_(static_cast<std::size_t>(partitions), 0),
        committed_at_(static_cast<std::size_t>(partitions)),
        delivered_(static_cast<std::size_t>(partitions), 0) {}

  // The largest lag seen (high watermark - committed offset): it peaks just
  // before a commit, so the committing task reports the high watermark then.
  void note_high_watermark(int p, std::int64_t hw) {
    max_lag_ = std::max(max_lag_, hw - committed(p));
  }
  [[nodiscard]] std::int64_t max_lag() const { return max_lag_; }

  // auto.offset.reset=earliest: a partition without a commit starts at 0.
  [[nodiscard]] std::int64_t committed(int p) const {
    return committed_[static_cast<std::size_t>(p)];
  }
  void commit(int p, std::int64_t offset, sim::Time at);
  [[nodiscard]] sim::Time committed_at(int p) const {
    return committed_at_[static_cast<std::size_t>(p)];
  }

  // The group's coordinator: the leader of __consumer_offsets partition
  // offsets_partition(group.id). None set: always available.
  void set_coordinator(const GroupCoordinator* coordinator, int offsets_partition) {
    coordinator_ = coordinator;
    offsets_partition_ = offsets_partition;
  }
  [[nodiscard]] bool coordinator_available() const {
    return coordinator_ == nullptr || coordinator_->group_coordinator_available(offsets_partition_);
  }
  [[nodiscard]] int offsets_partition() const { return offsets_partition_; }
  // GroupCoordinator.partitionFor (Kafka 3.7 GroupMetadataManager):
  // Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions, with
  // java.lang.String.hashCode over the UTF-16 code units.
  static int offsets_partition_for(const std::string& group_id, std::int64_t partitions);

  // Ground truth, not Kafka state: one past the highest offset of the
  // partition ever handed to put(). Offsets below it are a replay.
  [[nodiscard]] std::int64_t delivered(int p) const {
    return delivered_[static_cast<std::size_t>(p)];
  }
  void note_delivered(int p, std::int64_t end_offset);
  // An unclean leader election cut the log at `end_offset`: offsets past it
  // will hold other records (KIP-320 resets consumers to the divergence point).
  void truncate(int p, std::int64_t end_offset);

  // RangeAssignor for one topic: members sorted by member id, each gets
  // partitions/members and the first partitions%members get one more.
  static std::vector<std::vector<int>> range_assign(int partitions,
                                                    const std::vector<std::string>& member_ids);
  // The client id Connect gives a sink task's consumer; member ids start
  // with it, so "...-10" sorts before "...-2" as in a real group.
  static std::string member_id(const std::string& connector, int task);

 private:
  std::vector<std::int64_t> committed_;
  std::vector<sim::Time> committed_at_;
  std::vector<std::int64_t> delivered_;
  std::int64_t max_lag_ = 0;
  const GroupCoordinator* coordinator_ = nullptr;
  int offsets_partition_ = 0;
};

}  // namespace pipesim::connect
