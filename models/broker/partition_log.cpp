#include "models/broker/partition_log.h"

#include <algorithm>

#include "sim/engine/invariant.h"

namespace pipesim::broker {

PartitionLog::PartitionLog(std::int64_t records_per_segment_file)
    : records_per_file_(std::max<std::int64_t>(1, records_per_segment_file)) {}

std::int64_t PartitionLog::append(std::int64_t first_id, std::int64_t count,
                                  ledger::CopyCause cause, sim::Time at,
                                  const std::function<sim::Time(std::int64_t)>* append_time) {
  PIPESIM_INVARIANT(count > 0, "empty append");
  const std::int64_t base = end_;
  note_files(base, count, at, append_time);
  if (!segments_.empty() && !seal_last_) {
    Segment& last = segments_.back();
    if (last.cause == cause && last.first_id + last.count == first_id) {
      last.count += count;
      end_ += count;
      return base;
    }
  }
  seal_last_ = false;
  segments_.push_back(Segment{base, count, first_id, cause, next_uid_++});
  end_ += count;
  return base;
}

void PartitionLog::note_files(std::int64_t base, std::int64_t count, sim::Time at,
                              const std::function<sim::Time(std::int64_t)>* append_time) {
  // LogSegment rolls when the active file is full (log.segment.bytes); an
  // append is split at the file boundaries here, where Kafka would roll
  // before a batch that does not fit (a difference of one batch per file).
  if (files_.empty()) files_.push_back(SegmentFile{base, at});
  std::int64_t offset = base;
  const std::int64_t end = base + count;
  while (offset < end) {
    SegmentFile& active = files_.back();
    const std::int64_t file_end = active.base_offset + records_per_file_;
    if (offset >= file_end) {
      files_.push_back(SegmentFile{offset, append_time ? (*append_time)(offset) : at});
      continue;
    }
    const std::int64_t last = std::min(end, file_end);
    active.newest = std::max(active.newest, append_time ? (*append_time)(last - 1) : at);
    offset = last;
  }
}

bool PartitionLog::advance_high_watermark(std::int64_t offset) {
  const std::int64_t hw = std::min(offset, end_);
  if (hw <= high_watermark_) return false;
  high_watermark_ = hw;
  return true;
}

void PartitionLog::truncate(std::int64_t new_end, std::vector<IdPiece>& removed) {
  PIPESIM_INVARIANT(new_end >= log_start_, "truncation below the log start");
  if (new_end >= end_) return;
  translate(new_end, end_ - 1, removed);
  truncated_.clear();
  while (!segments_.empty() && segments_.back().base_offset >= new_end) {
    truncated_.insert(truncated_.begin(), segments_.back());
    segments_.pop_back();
  }
  if (!segments_.empty() && segments_.back().end_offset() > new_end) {
    Segment& last = segments_.back();
    const std::int64_t keep = new_end - last.base_offset;
    Segment cut = last;
    cut.base_offset = new_end;
    cut.first_id += keep;
    cut.count -= keep;
    truncated_.insert(truncated_.begin(), cut);
    last.count = keep;
  }
  end_ = new_end;
  high_watermark_ = std::min(high_watermark_, new_end);
  seal_last_ = true;  // new records at reused offsets are another copy: a new uid
  while (files_.size() > 1 && files_.back().base_offset >= new_end) files_.pop_back();
}

std::int64_t PartitionLog::delete_segment_files_before(sim::Time cutoff, std::vector<IdPiece>& deleted) {
  // Never the active file (the last), and never past the high watermark
  // (UnifiedLog.deleteOldSegments only deletes below it).
  while (files_.size() > 1 && files_.front().newest < cutoff &&
         files_[1].base_offset <= high_watermark_) {
    files_.pop_front();
  }
  const std::int64_t new_start = files_.empty() ? log_start_ : std::max(log_start_, files_.front().base_offset);
  if (new_start > log_start_) {
    translate(log_start_, new_start - 1, deleted);
    log_start_ = new_start;
  }
  return log_start_;
}

void PartitionLog::translate_in(const std::vector<Segment>& segments, std::int64_t last,
                                std::vector<IdPiece>& out, std::int64_t& offset) {
  // The first segment whose end is past `offset`.
  auto it = std::upper_bound(segments.begin(), segments.end(), offset,
                             [](std::int64_t o, const Segment& s) { return o < s.end_offset(); });
  for (; it != segments.end() && offset <= last; ++it) {
    if (it->base_offset > offset) break;
    const std::int64_t take_end = std::min(last + 1, it->end_offset());
    const std::int64_t delta = offset - it->base_offset;
    out.push_back(IdPiece{offset, ledger::IdRange{it->first_id + delta, take_end - offset}, it->cause, it->uid});
    offset = take_end;
  }
}

void PartitionLog::translate(std::int64_t first, std::int64_t last, std::vector<IdPiece>& out) const {
  PIPESIM_INVARIANT(first >= 0 && first <= last, "translate of an empty or negative range");
  std::int64_t offset = first;
  translate_in(segments_, std::min(last, end_ - 1), out, offset);
  if (offset <= last) translate_in(truncated_, last, out, offset);
  PIPESIM_INVARIANT(offset == last + 1, "offset range not covered by segments");
}

}  // namespace pipesim::broker
