// The records of one partition that put() hands to the connector.
#pragma once

#include <vector>

#include "models/ledger/copy_cause.h"
#include "models/sink/decision.h"

namespace pipesim::sink {

struct PartitionBatch {
  int partition = 0;
  OffsetRange offsets;  // every offset of the range, once
  ledger::InsertTag tag = ledger::InsertTag::NORMAL;  // why the framework delivers them
  // Ranges within `offsets` held once more, in order (a v1.3.9 buffer that
  // appended a re-put batch again, models/sink/put_buffer.h); usually none.
  std::vector<OffsetRange> again;
  [[nodiscard]] std::int64_t records() const {
    std::int64_t n = offsets.count();
    for (const auto& r : again) n += r.count();
    return n;
  }
};

}  // namespace pipesim::sink
