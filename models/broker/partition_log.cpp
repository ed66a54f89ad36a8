#include "models/broker/partition_log.h"

#include <algorithm>

#include "sim/engine/invariant.h"

namespace pipesim::broker {

std::int64_t PartitionLog::append(std::int64_t first_id, std::int64_t count,
                                  ledger::CopyCause cause) {
  PIPESIM_INVARIANT(count > 0, "empty append");
  const std::int64_t base = end_;
  if (!segments_.empty()) {
    Segment& last = segments_.back();
    if (last.cause == cause && last.first_id + last.count == first_id) {
      last.count += count;
      end_ += count;
      return base;
    }
  }
  segments_.push_back(Segment{base, count, first_id, cause, next_uid_++});
  end_ += count;
  return base;
}

void PartitionLog::translate(std::int64_t first, std::int64_t last,
                             std::vector<IdPiece>& out) const {
  PIPESIM_INVARIANT(first >= log_start_ && last < end_ && first <= last,
                    "translate outside the log");
  // The first segment whose end is past `first`.
  auto it = std::upper_bound(segments_.begin(), segments_.end(), first,
                             [](std::int64_t offset, const Segment& s) { return offset < s.end_offset(); });
  std::int64_t offset = first;
  for (; it != segments_.end() && offset <= last; ++it) {
    const std::int64_t take_end = std::min(last + 1, it->end_offset());
    const std::int64_t delta = offset - it->base_offset;
    out.push_back(IdPiece{offset, ledger::IdRange{it->first_id + delta, take_end - offset}, it->cause, it->uid});
    offset = take_end;
  }
  PIPESIM_INVARIANT(offset == last + 1, "offset range not covered by segments");
}

}  // namespace pipesim::broker
