// One partition's log (docs/model.md §4.2): append-only, contiguous offsets, stored as
// segments of consecutive records that share a fate (base offset, count,
// first logical id, copy cause), never one entry per record.
//
// The log is the current leader's copy. Followers are prefixes of it (the
// cluster model tracks how far), so a leader failover that elects a replica
// which lacks the tail is a truncation of this log: the truncated offsets are
// then reused by new appends, under new segment uids.
//
// Beside the id segments, the log keeps Kafka's own segment files (a new file
// every log.segment.bytes), each with the time of its newest record: retention
// (retention.ms) deletes whole closed files, never the active one, as
// UnifiedLog.deleteOldSegments does.
//
// Invariants: id segments are sorted by base offset and contiguous; the log
// end offset equals the last segment's end; log start <= high watermark <= end.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <vector>

#include "models/ledger/copy_cause.h"
#include "models/ledger/ledger.h"
#include "sim/engine/time.h"

namespace pipesim::broker {

struct Segment {
  std::int64_t base_offset = 0;
  std::int64_t count = 0;
  std::int64_t first_id = 0;  // ids first_id .. first_id+count-1, in offset order
  ledger::CopyCause cause = ledger::CopyCause::ORIGINAL;
  std::uint32_t uid = 0;  // unique over the run, never reused (offsets may be, after truncation)
  [[nodiscard]] std::int64_t end_offset() const { return base_offset + count; }
};

// A piece of an offset range mapped onto logical ids.
struct IdPiece {
  std::int64_t offset = 0;
  ledger::IdRange ids;
  ledger::CopyCause cause = ledger::CopyCause::ORIGINAL;
  std::uint32_t segment_uid = 0;
};

class PartitionLog {
 public:
  // `records_per_segment_file`: log.segment.bytes / record size (at least 1).
  explicit PartitionLog(std::int64_t records_per_segment_file = std::numeric_limits<std::int64_t>::max());

  // Appends ids [first_id, first_id+count) at time `at`; returns the base offset.
  // `append_time` (if given) tells when the record at an offset of this
  // append was appended, for appends written after the fact (the direct
  // feed): each segment file then gets its own newest record's time.
  std::int64_t append(std::int64_t first_id, std::int64_t count, ledger::CopyCause cause,
                      sim::Time at = sim::Time{},
                      const std::function<sim::Time(std::int64_t)>* append_time = nullptr);

  [[nodiscard]] std::int64_t log_start_offset() const { return log_start_; }
  [[nodiscard]] std::int64_t log_end_offset() const { return end_; }
  // Consumers read up to here (the leader's high watermark: what the ISR has).
  [[nodiscard]] std::int64_t high_watermark() const { return high_watermark_; }
  [[nodiscard]] std::int64_t records() const { return end_ - log_start_; }

  // The high watermark moves forward only; returns true if it moved.
  bool advance_high_watermark(std::int64_t offset);
  // Removes offsets >= new_end (a failover to a replica that lacks them) and
  // appends what was removed to `removed`. The high watermark follows.
  void truncate(std::int64_t new_end, std::vector<IdPiece>& removed);
  // Retention: deletes the closed segment files whose newest record is older
  // than `cutoff`; appends the deleted records to `deleted`; returns the new
  // log start offset.
  std::int64_t delete_segment_files_before(sim::Time cutoff, std::vector<IdPiece>& deleted);

  // Maps offsets [first, last] (inclusive) onto id pieces. Records deleted by
  // retention stay mappable (a consumer may still hold them); offsets past a
  // truncation that were not written again map onto the truncated records
  // (a consumer that read them before an unclean election still holds them).
  void translate(std::int64_t first, std::int64_t last, std::vector<IdPiece>& out) const;

 private:
  struct SegmentFile {
    std::int64_t base_offset = 0;
    sim::Time newest{};  // time of its newest record
  };
  void note_files(std::int64_t base, std::int64_t count, sim::Time at,
                  const std::function<sim::Time(std::int64_t)>* append_time);
  // Maps [offset, last] within `segments` from `offset` on; advances `offset`.
  static void translate_in(const std::vector<Segment>& segments, std::int64_t last,
                           std::vector<IdPiece>& out, std::int64_t& offset);

  std::vector<Segment> segments_;
  std::vector<Segment> truncated_;  // the segments cut by the last truncation
  std::int64_t log_start_ = 0;
  std::int64_t end_ = 0;
  std::int64_t high_watermark_ = 0;
  std::uint32_t next_uid_ = 1;
  bool seal_last_ = false;  // after a truncation the next append opens a new segment
  std::int64_t records_per_file_;
  std::deque<SegmentFile> files_;  // from the log start; the last one is active
};

}  // namespace pipesim::broker
