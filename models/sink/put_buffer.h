// The record buffer of ClickHouseSinkTask v1.3.9 (bufferCount > 0): put()
// appends the framework's batch (buffer.addAll) and flushes the whole buffer
// through ProxySinkTask.put once it holds bufferCount records, or when
// bufferFlushTime has passed since the last flush (checked only inside put(),
// which the framework also calls with an empty batch when a poll returns
// nothing). preCommit then returns the flushed offsets only, and clears them;
// close() drops the buffered records of the closed partitions.
//
// A flush that throws leaves the buffer as it was, and the framework puts the
// same batch again: addAll appends it a second time, so the next flush holds
// those records twice (ClickHouseSinkTask.flushBuffer clears the buffer only
// after putDirect returned). The buffer keeps, per partition, the span of
// offsets it holds and the ranges it holds once more (`again`).
#pragma once

#include <cstdint>
#include <vector>

#include "models/sink/partition_batch.h"
#include "sim/engine/time.h"

namespace pipesim::sink {

class PutBuffer {
 public:
  // A new task instance: an empty buffer; lastFlushTime is the start.
  void reset(sim::Time now);
  // buffer.addAll(records).
  void add(const std::vector<PartitionBatch>& batch);
  // Records held, copies included (buffer.size()).
  [[nodiscard]] std::int64_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  // The size or the time threshold of ClickHouseSinkTask.put.
  [[nodiscard]] bool flush_due(std::int64_t buffer_count, sim::Time flush_time, sim::Time now) const;
  // Partitions in the order their first record entered the buffer.
  [[nodiscard]] const std::vector<PartitionBatch>& contents() const { return entries_; }
  // putDirect returned: the flushed offsets move past every flushed record,
  // the buffer is empty and lastFlushTime is now.
  void flushed(sim::Time now);
  // preCommit: the flushed offset of `partition` (-1 when none); preCommit
  // then clears them all.
  [[nodiscard]] std::int64_t flushed_offset(int partition) const;
  void clear_flushed() { flushed_.clear(); }
  // close(partitions): their buffered records and flushed offsets go.
  void close();

 private:
  struct Flushed {
    int partition = 0;
    std::int64_t offset = 0;
  };
  std::vector<PartitionBatch> entries_;
  std::vector<Flushed> flushed_;
  std::int64_t size_ = 0;
  sim::Time last_flush_{};
};

}  // namespace pipesim::sink
