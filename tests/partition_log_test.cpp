// PartitionLog: segments of ids, truncation on failover, retention by
// segment file, the high watermark.
#include <gtest/gtest.h>

#include <vector>

#include "models/broker/partition_log.h"

namespace pipesim::broker {
namespace {

using ledger::CopyCause;

std::vector<IdPiece> pieces(const PartitionLog& log, std::int64_t first, std::int64_t last) {
  std::vector<IdPiece> out;
  log.translate(first, last, out);
  return out;
}

TEST(PartitionLog, ContiguousAppendsOfOneCauseShareASegment) {
  PartitionLog log;
  EXPECT_EQ(log.append(0, 100, CopyCause::ORIGINAL), 0);
  EXPECT_EQ(log.append(100, 100, CopyCause::ORIGINAL), 100);
  EXPECT_EQ(log.append(100, 16, CopyCause::RETRY_NOT_IDEMPOTENT), 200);  // a retry: another copy
  const auto p = pieces(log, 0, 215);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].ids.count, 200);
  EXPECT_EQ(p[1].offset, 200);
  EXPECT_EQ(p[1].ids.first, 100);
  EXPECT_EQ(p[1].cause, CopyCause::RETRY_NOT_IDEMPOTENT);
  EXPECT_NE(p[0].segment_uid, p[1].segment_uid);
}

TEST(PartitionLog, TruncationRemovesTheTailAndReusedOffsetsGetANewUid) {
  PartitionLog log;
  log.append(0, 100, CopyCause::ORIGINAL);
  log.append(100, 100, CopyCause::ORIGINAL);  // coalesced: one segment [0, 200)
  log.advance_high_watermark(100);
  std::vector<IdPiece> removed;
  log.truncate(150, removed);
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0].offset, 150);
  EXPECT_EQ(removed[0].ids.first, 150);
  EXPECT_EQ(removed[0].ids.count, 50);
  EXPECT_EQ(log.log_end_offset(), 150);
  EXPECT_EQ(log.high_watermark(), 100);  // below the cut: unchanged
  const std::uint32_t old_uid = pieces(log, 0, 0)[0].segment_uid;
  // The producer's retry of ids 150..199 lands at the same offsets: another copy.
  EXPECT_EQ(log.append(150, 50, CopyCause::ORIGINAL), 150);
  const auto p = pieces(log, 140, 160);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].segment_uid, old_uid);
  EXPECT_NE(p[1].segment_uid, old_uid);
  EXPECT_EQ(p[1].ids.first, 150);
}

TEST(PartitionLog, TruncationBelowTheHighWatermarkLowersIt) {
  PartitionLog log;
  log.append(0, 100, CopyCause::ORIGINAL);
  log.advance_high_watermark(100);
  std::vector<IdPiece> removed;
  log.truncate(60, removed);  // an unclean election
  EXPECT_EQ(log.high_watermark(), 60);
  EXPECT_FALSE(log.advance_high_watermark(80));  // never past the end
  EXPECT_EQ(log.high_watermark(), 60);
}

TEST(PartitionLog, OffsetsCutAndNotWrittenAgainStillMapOntoTheOldRecords) {
  // A consumer that read [90, 99] before an unclean election still holds them.
  PartitionLog log;
  log.append(0, 100, CopyCause::ORIGINAL);
  std::vector<IdPiece> removed;
  log.truncate(80, removed);
  const auto p = pieces(log, 70, 99);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].ids.count, 10);
  EXPECT_EQ(p[1].offset, 80);
  EXPECT_EQ(p[1].ids.first, 80);
  EXPECT_EQ(p[1].ids.count, 20);
}

TEST(PartitionLog, RetentionDeletesWholeClosedFilesOlderThanTheCutoff) {
  // Files of 100 records; appends of 100 at 0 s, 1 s, ..., 4 s.
  PartitionLog log(100);
  for (int k = 0; k < 5; ++k) log.append(100 * k, 100, CopyCause::ORIGINAL, sim::Time::seconds(k));
  log.advance_high_watermark(500);
  std::vector<IdPiece> deleted;
  // Newest records: file k at k s. Cutoff 2.5 s: files 0, 1, 2.
  EXPECT_EQ(log.delete_segment_files_before(sim::Time::millis(2500), deleted), 300);
  EXPECT_EQ(log.log_start_offset(), 300);
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_EQ(deleted[0].ids.count, 300);
  // The active file is never deleted, however old.
  deleted.clear();
  EXPECT_EQ(log.delete_segment_files_before(sim::Time::hours(1), deleted), 400);
  EXPECT_EQ(log.records(), 100);
  // Deleted records stay mappable for a consumer that still holds them.
  EXPECT_EQ(pieces(log, 0, 9)[0].ids.first, 0);
}

TEST(PartitionLog, RetentionDoesNotDeletePastTheHighWatermark) {
  PartitionLog log(100);
  for (int k = 0; k < 5; ++k) log.append(100 * k, 100, CopyCause::ORIGINAL, sim::Time::seconds(k));
  log.advance_high_watermark(150);
  std::vector<IdPiece> deleted;
  // Only file 0 ends at or below the high watermark.
  EXPECT_EQ(log.delete_segment_files_before(sim::Time::hours(1), deleted), 100);
}

TEST(PartitionLog, AnAppendSpanningFilesUpdatesEachFilesNewestRecord) {
  PartitionLog log(100);
  log.append(0, 50, CopyCause::ORIGINAL, sim::Time::seconds(1));
  log.append(50, 200, CopyCause::ORIGINAL, sim::Time::seconds(10));  // files 0, 1 and 2
  log.append(250, 100, CopyCause::ORIGINAL, sim::Time::seconds(20));
  log.advance_high_watermark(350);
  std::vector<IdPiece> deleted;
  // File 0's newest record is at 10 s (the second append reached into it).
  EXPECT_EQ(log.delete_segment_files_before(sim::Time::seconds(5), deleted), 0);
  EXPECT_EQ(log.delete_segment_files_before(sim::Time::seconds(11), deleted), 200);
}

}  // namespace
}  // namespace pipesim::broker
