// One partition's log on its leader (SPEC §4.2): append-only, contiguous
// offsets, stored as segments of consecutive records that share a fate
// (base offset, count, first logical id, copy cause), never one entry per record.
//
// Invariants: segments are sorted by base offset and contiguous; the log end
// offset equals the last segment's end; log start <= end.
#pragma once

#include <cstdint>
#include <vector>

#include "models/ledger/copy_cause.h"
#include "models/ledger/ledger.h"

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
  // Appends ids [first_id, first_id+count) and returns the base offset.
  std::int64_t append(std::int64_t first_id, std::int64_t count, ledger::CopyCause cause);

  [[nodiscard]] std::int64_t log_start_offset() const { return log_start_; }
  [[nodiscard]] std::int64_t log_end_offset() const { return end_; }
  [[nodiscard]] std::int64_t records() const { return end_ - log_start_; }

  // Maps offsets [first, last] (inclusive, within the log) onto id pieces.
  void translate(std::int64_t first, std::int64_t last, std::vector<IdPiece>& out) const;

 private:
  std::vector<Segment> segments_;
  std::int64_t log_start_ = 0;
  std::int64_t end_ = 0;
  std::uint32_t next_uid_ = 1;

};

}  // namespace pipesim::broker
