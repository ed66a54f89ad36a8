// The ground truth (docs/model.md §3): for every logical record, where its copies are
// and why each was made. Records that share a fate share an entry, so memory
// follows the number of distinct fates, never the number of records.
//
// Logical ids are numbered per partition (the business key hashes to one
// partition, and every copy of a record stays in it), so a partition's ids
// are 0, 1, 2, ... in the order the service emitted them.
//
// Invariants: rows and marks lie within [0, produced) of their partition;
// after settle(), every produced id is in exactly one terminal class.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/ledger/copy_cause.h"

namespace pipesim::ledger {

struct IdRange {
  std::int64_t first = 0;
  std::int64_t count = 0;
  [[nodiscard]] std::int64_t end() const { return first + count; }
};

// A run of ClickHouse rows: ids [first, first+count) inserted from Kafka
// segment `segment_uid` (one Kafka copy of each id) by one insert.
struct RowRange {
  IdRange ids;
  std::uint32_t segment_uid = 0;
  CopyCause cause = CopyCause::ORIGINAL;
  InsertTag tag = InsertTag::NORMAL;
  std::uint64_t insert_serial = 0;  // global insert order
  // The ClickHouse table partition the rows went to: a FINAL query folds rows
  // with the same sorting key (the business key) within one partition only.
  std::uint32_t table_partition = 0;
};

struct Mark {
  IdRange ids;
  LossCause cause = LossCause::DLQ_ONLY;
};

// Terminal classes after drain.
struct Settlement {
  std::int64_t produced = 0;
  std::int64_t ok = 0;          // exactly one row
  std::int64_t duplicated = 0;  // ids with more than one row
  std::int64_t lost = 0;
  std::int64_t pending = 0;
  std::int64_t rows = 0;
  std::int64_t duplicate_rows = 0;
  // What SELECT ... FINAL on a ReplacingMergeTree still shows beyond the first
  // row of a key: copies in different table partitions are not folded.
  std::int64_t final_duplicate_rows = 0;
  std::array<std::int64_t, static_cast<int>(EntryPoint::COUNT)> duplicates_by_entry{};
  std::array<std::int64_t, static_cast<int>(LossCause::COUNT)> lost_by_cause{};
  // The producer_retry duplicates split by the path that let the copy in.
  std::array<std::int64_t, static_cast<int>(ProducerPath::COUNT)> producer_retry_by_path{};
  // ... of which the send had also failed to the application (its callback
  // got an exception: a retry table holds the record although Kafka has it
  // twice), by the same path.
  std::array<std::int64_t, static_cast<int>(ProducerPath::COUNT)> producer_duplicates_also_failed{};
  std::int64_t dlq_records_in_clickhouse = 0;
  std::int64_t dlq_records_missing = 0;
};

// A run of consecutive ids of one partition that share their terminal class
// (for `pipesim explain`): "records [6000, 9099] of partition 0 written twice".
struct FateGroup {
  int partition = 0;
  IdRange ids;
  std::string fate;    // "duplicated", "lost", "pending"
  std::string detail;  // entry point(s) of the extra rows, or the loss cause
  std::int64_t rows_per_id = 0;
};

class Ledger {
 public:
  explicit Ledger(int partitions);

  // The service emitted `count` new records on `partition`; returns their first id.
  std::int64_t emit(int partition, std::int64_t count);
  // ClickHouse committed rows for these ids (from one Kafka segment).
  void record_rows(int partition, const RowRange& rows);
  // Records sent to the DLQ (they may also be in ClickHouse).
  void record_dlq(int partition, IdRange ids);
  // A loss cause that applies to these ids if they never reach ClickHouse.
  void record_mark(int partition, IdRange ids, LossCause cause);
  // The producer failed these ids to the application (an exception in the
  // send callback), whatever became of them.
  void record_failed_send(int partition, IdRange ids);

  [[nodiscard]] std::int64_t produced(int partition) const { return partitions_[partition].produced; }
  // The ids of `ids` that have at least one ClickHouse row, as sorted
  // disjoint ranges (what a lookup by business key would find).
  [[nodiscard]] std::vector<IdRange> ids_with_rows(int partition, IdRange ids) const;
  [[nodiscard]] std::int64_t rows_recorded() const { return rows_recorded_; }
  [[nodiscard]] std::uint64_t next_insert_serial() { return ++insert_serial_; }

  // Classifies every produced id; checks conservation (throws
  // sim::InvariantViolation on a violation).
  [[nodiscard]] Settlement settle(std::vector<FateGroup>* groups = nullptr) const;

 private:
  struct PartitionFates {
    std::int64_t produced = 0;
    std::vector<RowRange> rows;
    std::vector<IdRange> dlq;
    std::vector<Mark> marks;
    std::vector<IdRange> failed_sends;
  };
  void settle_partition(int partition, const PartitionFates& p, Settlement& s,
                        std::vector<FateGroup>* groups) const;

  std::vector<PartitionFates> partitions_;
  std::int64_t rows_recorded_ = 0;
  std::uint64_t insert_serial_ = 0;
};

}  // namespace pipesim::ledger
