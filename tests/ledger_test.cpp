// The ledger: terminal classes, attribution of every duplicate row to one
// entry point, loss causes, DLQ composition; checked by hand and against a
// per-id reference model under seeded random histories.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "models/ledger/ledger.h"
#include "sim/engine/invariant.h"
#include "sim/engine/random.h"

namespace pipesim::ledger {
namespace {

RowRange rows(std::int64_t first, std::int64_t count, std::uint32_t uid, std::uint64_t serial,
              InsertTag tag = InsertTag::NORMAL, CopyCause cause = CopyCause::ORIGINAL) {
  return RowRange{IdRange{first, count}, uid, cause, tag, serial};
}

std::int64_t entry(const Settlement& s, EntryPoint e) {
  return s.duplicates_by_entry[static_cast<std::size_t>(e)];
}
std::int64_t loss(const Settlement& s, LossCause c) { return s.lost_by_cause[static_cast<std::size_t>(c)]; }

TEST(Ledger, EveryRecordInsertedOnceIsOk) {
  Ledger l(2);
  l.emit(0, 100);
  l.emit(1, 50);
  l.record_rows(0, rows(0, 100, 1, 1));
  l.record_rows(1, rows(0, 50, 1, 2));
  const Settlement s = l.settle();
  EXPECT_EQ(s.produced, 150);
  EXPECT_EQ(s.ok, 150);
  EXPECT_EQ(s.duplicate_rows, 0);
  EXPECT_EQ(s.pending, 0);
}

TEST(Ledger, ReplayOfTheSameKafkaCopyIsTaskRestartReplay) {
  Ledger l(1);
  l.emit(0, 100);
  l.record_rows(0, rows(0, 100, 1, 1));
  l.record_rows(0, rows(40, 30, 1, 2, InsertTag::REPLAY));  // ids 40..69 again
  const Settlement s = l.settle();
  EXPECT_EQ(s.rows, 130);
  EXPECT_EQ(s.duplicated, 30);
  EXPECT_EQ(s.ok, 70);
  EXPECT_EQ(s.duplicate_rows, 30);
  EXPECT_EQ(entry(s, EntryPoint::TASK_RESTART_REPLAY), 30);
}

TEST(Ledger, SinkSideTagsPickTheEntryPoint) {
  Ledger l(1);
  l.emit(0, 30);
  l.record_rows(0, rows(0, 30, 1, 1));
  l.record_rows(0, rows(0, 10, 1, 2, InsertTag::REDELIVERY));
  l.record_rows(0, rows(10, 10, 1, 3, InsertTag::STATE_RESET));
  l.record_rows(0, rows(20, 10, 1, 4, InsertTag::NORMAL));  // a re-read without a reason: replay
  const Settlement s = l.settle();
  EXPECT_EQ(entry(s, EntryPoint::INSERT_TIMEOUT_REDELIVERY), 10);
  EXPECT_EQ(entry(s, EntryPoint::STATE_RESET), 10);
  EXPECT_EQ(entry(s, EntryPoint::TASK_RESTART_REPLAY), 10);
}

TEST(Ledger, AnInsertThatCommitsAfterItsRedeliveryIsARedeliveryDuplicate) {
  // The first delivery of [0, 9] timed out on the client but committed on the
  // server only after the redelivery had: the later row is the first
  // delivery's, yet the duplicate exists because of the redelivery.
  Ledger l(1);
  l.emit(0, 10);
  l.record_rows(0, rows(0, 10, 1, 1, InsertTag::REDELIVERY));
  l.record_rows(0, rows(0, 10, 1, 2, InsertTag::NORMAL));
  const Settlement s = l.settle();
  EXPECT_EQ(entry(s, EntryPoint::INSERT_TIMEOUT_REDELIVERY), 10);
  EXPECT_EQ(entry(s, EntryPoint::TASK_RESTART_REPLAY), 0);
}

TEST(Ledger, ExtraKafkaCopyIsAProducerSideDuplicate) {
  Ledger l(1);
  l.emit(0, 20);
  l.record_rows(0, rows(0, 20, 1, 1));                                              // original copy
  l.record_rows(0, rows(5, 5, 2, 2, InsertTag::NORMAL, CopyCause::RETRY_EPOCH_BUMP));  // retry copy
  l.record_rows(0, rows(15, 5, 3, 3, InsertTag::NORMAL, CopyCause::MANUAL_RESEND));    // resent copy
  // The retry copy inserted a second time counts as a sink-side replay.
  l.record_rows(0, rows(5, 2, 2, 4, InsertTag::REPLAY, CopyCause::RETRY_EPOCH_BUMP));
  const Settlement s = l.settle();
  EXPECT_EQ(entry(s, EntryPoint::PRODUCER_RETRY), 5);
  EXPECT_EQ(s.producer_retry_by_path[static_cast<std::size_t>(ProducerPath::EPOCH_BUMP_RESEND)], 5);
  EXPECT_EQ(entry(s, EntryPoint::MANUAL_RESEND), 5);
  EXPECT_EQ(entry(s, EntryPoint::TASK_RESTART_REPLAY), 2);
  EXPECT_EQ(s.duplicate_rows, 12);
}

TEST(Ledger, RetryCopyAloneIsNotADuplicate) {
  // The original copy was lost (e.g. truncated) and only the retry reached ClickHouse.
  Ledger l(1);
  l.emit(0, 10);
  l.record_rows(0, rows(0, 10, 2, 1, InsertTag::NORMAL, CopyCause::RETRY_NOT_IDEMPOTENT));
  const Settlement s = l.settle();
  EXPECT_EQ(s.ok, 10);
  EXPECT_EQ(s.duplicate_rows, 0);
}

TEST(Ledger, DlqRecordsSplitByWhetherTheyAreInClickHouse) {
  Ledger l(1);
  l.emit(0, 100);
  l.record_rows(0, rows(0, 50, 1, 1));
  l.record_dlq(0, IdRange{40, 30});  // 40..49 already in ClickHouse, 50..69 not
  const Settlement s = l.settle();
  EXPECT_EQ(s.dlq_records_in_clickhouse, 10);
  EXPECT_EQ(s.dlq_records_missing, 20);
  EXPECT_EQ(loss(s, LossCause::DLQ_ONLY), 20);
  EXPECT_EQ(s.pending, 30);  // 70..99 never reached ClickHouse, no loss cause
}

TEST(Ledger, DlqOnlyWinsOverOtherLossCauses) {
  Ledger l(1);
  l.emit(0, 10);
  l.record_mark(0, IdRange{0, 10}, LossCause::RETENTION_EXPIRED);
  l.record_dlq(0, IdRange{0, 4});
  const Settlement s = l.settle();
  EXPECT_EQ(loss(s, LossCause::DLQ_ONLY), 4);
  EXPECT_EQ(loss(s, LossCause::RETENTION_EXPIRED), 6);
  EXPECT_EQ(s.lost, 10);
}

TEST(Ledger, FinalFoldsCopiesOfAKeyOnlyWithinOneTablePartition) {
  // ids 0..99 inserted in table partition 0; ids 0..39 again in partition 0
  // (folded by FINAL) and ids 20..59 in partition 1 (not folded).
  // By hand: ids 0..19 have 2 rows in one partition -> 0 FINAL duplicates;
  // ids 20..39 have 3 rows in 2 partitions -> 1 each; ids 40..59 have 2 rows
  // in 2 partitions -> 1 each: 40 FINAL duplicate rows, 80 raw ones.
  Ledger l(1);
  l.emit(0, 100);
  RowRange first = rows(0, 100, 1, 1);
  RowRange same_partition = rows(0, 40, 1, 2, InsertTag::REDELIVERY);
  RowRange other_partition = rows(20, 40, 1, 3, InsertTag::REDELIVERY);
  other_partition.table_partition = 1;
  l.record_rows(0, first);
  l.record_rows(0, same_partition);
  l.record_rows(0, other_partition);
  const Settlement s = l.settle();
  EXPECT_EQ(s.duplicate_rows, 80);
  EXPECT_EQ(s.final_duplicate_rows, 40);
}

// A range inserted thousands of times (a put loop that outlives
// max.poll.interval.ms): each copy after the first is attributed once, by the
// first reason an earlier insert of its Kafka copy gave, and FINAL keeps one
// row per table partition. (The sweep compared every pair of copies before:
// the swarm's config with ~112,000 copies of a range never settled.)
TEST(Ledger, ThousandsOfInsertsOfOneRangeAreEachAttributed) {
  Ledger l(1);
  l.emit(0, 10);
  std::uint64_t serial = 0;
  for (int j = 1; j <= 5000; ++j) {
    // First a plain insert, then redeliveries and plain re-reads alternating.
    RowRange r = rows(0, 10, 1, ++serial, j % 2 == 0 ? InsertTag::REDELIVERY : InsertTag::NORMAL);
    r.table_partition = static_cast<std::uint32_t>(j % 3);
    l.record_rows(0, r);
  }
  l.record_rows(0, rows(0, 10, 2, ++serial, InsertTag::NORMAL, CopyCause::RETRY_EPOCH_BUMP));
  const Settlement s = l.settle();
  EXPECT_EQ(s.rows, 5001 * 10);
  EXPECT_EQ(s.duplicate_rows, 5000 * 10);
  // Insert 2 is a redelivery; every later insert of copy 1 follows it.
  EXPECT_EQ(entry(s, EntryPoint::INSERT_TIMEOUT_REDELIVERY), 4999 * 10);
  EXPECT_EQ(entry(s, EntryPoint::PRODUCER_RETRY), 10);
  EXPECT_EQ(s.producer_retry_by_path[static_cast<std::size_t>(ProducerPath::EPOCH_BUMP_RESEND)], 10);
  EXPECT_EQ(s.final_duplicate_rows, 2 * 10);  // table partitions 0, 1 and 2 (copy 2 in 0)
}

TEST(Ledger, RowsForIdsNeverProducedAreAnInvariantViolation) {
  Ledger l(1);
  l.emit(0, 10);
  EXPECT_THROW(l.record_rows(0, rows(5, 10, 1, 1)), sim::InvariantViolation);
}

// Reference model: one entry per id, the obvious way.
struct IdFate {
  std::vector<RowRange> rows;  // count 1 each
  int dlq = 0;
  int best_mark = static_cast<int>(LossCause::COUNT);
};

TEST(Ledger, MatchesAPerIdReferenceModelOnRandomHistories) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    sim::RandomStream rng(seed, "test/ledger");
    const std::int64_t n = 1 + static_cast<std::int64_t>(rng.below(60));
    Ledger l(1);
    l.emit(0, n);
    std::vector<IdFate> ref(static_cast<std::size_t>(n));
    std::uint64_t serial = 0;
    const int ops = static_cast<int>(rng.below(25));
    for (int op = 0; op < ops; ++op) {
      const std::int64_t first = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n)));
      const std::int64_t count = 1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n - first)));
      const auto kind = rng.below(3);
      if (kind == 0) {
        const auto uid = static_cast<std::uint32_t>(1 + rng.below(3));
        const auto cause = uid == 1 ? CopyCause::ORIGINAL
                                    : (uid == 2 ? CopyCause::APPLICATION_RESEND : CopyCause::MANUAL_RESEND);
        const auto tag = static_cast<InsertTag>(rng.below(4));
        const RowRange r = rows(first, count, uid, ++serial, tag, cause);
        l.record_rows(0, r);
        for (std::int64_t id = first; id < first + count; ++id) ref[static_cast<std::size_t>(id)].rows.push_back(r);
      } else if (kind == 1) {
        l.record_dlq(0, IdRange{first, count});
        for (std::int64_t id = first; id < first + count; ++id) ++ref[static_cast<std::size_t>(id)].dlq;
      } else {
        const auto cause = static_cast<LossCause>(rng.below(static_cast<std::uint64_t>(LossCause::COUNT)));
        l.record_mark(0, IdRange{first, count}, cause);
        for (std::int64_t id = first; id < first + count; ++id) {
          auto& b = ref[static_cast<std::size_t>(id)].best_mark;
          b = std::min(b, static_cast<int>(cause));
        }
      }
    }
    Settlement want;
    for (const IdFate& f : ref) {
      const auto k = static_cast<std::int64_t>(f.rows.size());
      want.rows += k;
      if (k > 0) {
        want.dlq_records_in_clickhouse += f.dlq;
      } else {
        want.dlq_records_missing += f.dlq;
      }
      if (k == 1) ++want.ok;
      if (k > 1) {
        ++want.duplicated;
        want.duplicate_rows += k - 1;
        // rows are in insert order already (serials increase)
        for (std::size_t i = 1; i < f.rows.size(); ++i) {
          bool seen = false;
          for (std::size_t j = 0; j < i; ++j) seen = seen || f.rows[j].segment_uid == f.rows[i].segment_uid;
          // A first delivery that lands after a re-insert of its copy is
          // extra because of that re-insert (the earliest one).
          InsertTag why = f.rows[i].tag;
          if (why == InsertTag::NORMAL) {
            const auto earlier = std::find_if(f.rows.begin(), f.rows.begin() + static_cast<long>(i), [&](const RowRange& r) {
              return r.segment_uid == f.rows[i].segment_uid && r.tag != InsertTag::NORMAL;
            });
            if (earlier != f.rows.begin() + static_cast<long>(i)) why = earlier->tag;
          }
          EntryPoint e;
          if (!seen) {
            const CopyCause extra = f.rows[i].cause != CopyCause::ORIGINAL ? f.rows[i].cause : f.rows[0].cause;
            e = extra == CopyCause::MANUAL_RESEND ? EntryPoint::MANUAL_RESEND : EntryPoint::PRODUCER_RETRY;
            if (e == EntryPoint::PRODUCER_RETRY) {
              ++want.producer_retry_by_path[static_cast<std::size_t>(ProducerPath::APPLICATION_RESEND)];
            }
          } else if (why == InsertTag::REDELIVERY) {
            e = EntryPoint::INSERT_TIMEOUT_REDELIVERY;
          } else if (why == InsertTag::STATE_RESET) {
            e = EntryPoint::STATE_RESET;
          } else {
            e = EntryPoint::TASK_RESTART_REPLAY;
          }
          ++want.duplicates_by_entry[static_cast<std::size_t>(e)];
        }
      }
      if (k == 0) {
        if (f.dlq > 0) {
          ++want.lost;
          ++want.lost_by_cause[static_cast<std::size_t>(LossCause::DLQ_ONLY)];
        } else if (f.best_mark < static_cast<int>(LossCause::COUNT)) {
          ++want.lost;
          ++want.lost_by_cause[static_cast<std::size_t>(f.best_mark)];
        } else {
          ++want.pending;
        }
      }
    }
    const Settlement got = l.settle();
    SCOPED_TRACE("seed " + std::to_string(seed));
    EXPECT_EQ(got.rows, want.rows);
    EXPECT_EQ(got.ok, want.ok);
    EXPECT_EQ(got.duplicated, want.duplicated);
    EXPECT_EQ(got.duplicate_rows, want.duplicate_rows);
    EXPECT_EQ(got.duplicates_by_entry, want.duplicates_by_entry);
    EXPECT_EQ(got.producer_retry_by_path, want.producer_retry_by_path);
    EXPECT_EQ(got.lost, want.lost);
    EXPECT_EQ(got.lost_by_cause, want.lost_by_cause);
    EXPECT_EQ(got.pending, want.pending);
    EXPECT_EQ(got.dlq_records_in_clickhouse, want.dlq_records_in_clickhouse);
    EXPECT_EQ(got.dlq_records_missing, want.dlq_records_missing);
  }
}

}  // namespace
}  // namespace pipesim::ledger
