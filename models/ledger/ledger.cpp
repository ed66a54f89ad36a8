#include "models/ledger/ledger.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "sim/engine/invariant.h"

namespace pipesim::ledger {

std::string_view to_string(LossCause c) {
  switch (c) {
    case LossCause::DLQ_ONLY: return "dlq_only";
    case LossCause::DROPPED_NO_DLQ: return "dropped_no_dlq";
    case LossCause::KAFKA_TRUNCATED: return "kafka_truncated";
    case LossCause::RETENTION_EXPIRED: return "retention_expired";
    case LossCause::SEND_FAILED_NOT_RESENT: return "send_failed_not_resent";
    case LossCause::INSERT_LOST: return "insert_lost";
    case LossCause::COUNT: break;
  }
  return "?";
}

std::string_view to_string(EntryPoint e) {
  switch (e) {
    case EntryPoint::PRODUCER_RETRY: return "producer_retry";
    case EntryPoint::INSERT_TIMEOUT_REDELIVERY: return "insert_timeout_redelivery";
    case EntryPoint::TASK_RESTART_REPLAY: return "task_restart_replay";
    case EntryPoint::MANUAL_RESEND: return "manual_resend";
    case EntryPoint::STATE_RESET: return "state_reset";
    case EntryPoint::COUNT: break;
  }
  return "?";
}

std::string_view to_string(ProducerPath p) {
  switch (p) {
    case ProducerPath::NOT_IDEMPOTENT: return "not_idempotent";
    case ProducerPath::EPOCH_BUMP_RESEND: return "epoch_bump_resend";
    case ProducerPath::PRODUCER_ID_EXPIRED: return "producer_id_expired";
    case ProducerPath::APPLICATION_RESEND: return "application_resend";
    case ProducerPath::AFTER_TRUNCATION: return "after_truncation";
    case ProducerPath::COUNT: break;
  }
  return "?";
}

ProducerPath producer_path(CopyCause c) {
  switch (c) {
    case CopyCause::RETRY_NOT_IDEMPOTENT: return ProducerPath::NOT_IDEMPOTENT;
    case CopyCause::RETRY_EPOCH_BUMP: return ProducerPath::EPOCH_BUMP_RESEND;
    case CopyCause::RETRY_PRODUCER_ID_EXPIRED: return ProducerPath::PRODUCER_ID_EXPIRED;
    case CopyCause::APPLICATION_RESEND: return ProducerPath::APPLICATION_RESEND;
    case CopyCause::RETRY_AFTER_TRUNCATION: return ProducerPath::AFTER_TRUNCATION;
    case CopyCause::PRODUCER_RETRY:
      PIPESIM_INVARIANT(false, "a producer retry copy whose path the broker did not name");
      break;
    case CopyCause::ORIGINAL:
    case CopyCause::MANUAL_RESEND: break;
  }
  return ProducerPath::COUNT;
}

Ledger::Ledger(int partitions) : partitions_(static_cast<std::size_t>(partitions)) {}

std::int64_t Ledger::emit(int partition, std::int64_t count) {
  PartitionFates& p = partitions_[static_cast<std::size_t>(partition)];
  const std::int64_t first = p.produced;
  p.produced += count;
  return first;
}

void Ledger::record_rows(int partition, const RowRange& rows) {
  if (rows.ids.count <= 0) return;
  PartitionFates& p = partitions_[static_cast<std::size_t>(partition)];
  PIPESIM_INVARIANT(rows.ids.first >= 0 && rows.ids.end() <= p.produced,
                    "rows for ids that were never produced on partition " + std::to_string(partition));
  rows_recorded_ += rows.ids.count;
  // Extending the partition's latest run keeps the relative insert order of
  // every pair of runs, which attribution relies on (see settle_partition).
  if (!p.rows.empty()) {
    RowRange& last = p.rows.back();
    if (last.ids.end() == rows.ids.first && last.segment_uid == rows.segment_uid &&
        last.cause == rows.cause && last.tag == rows.tag &&
        last.table_partition == rows.table_partition) {
      last.ids.count += rows.ids.count;
      return;
    }
  }
  p.rows.push_back(rows);
}

void Ledger::record_dlq(int partition, IdRange ids) {
  if (ids.count <= 0) return;
  PartitionFates& p = partitions_[static_cast<std::size_t>(partition)];
  PIPESIM_INVARIANT(ids.first >= 0 && ids.end() <= p.produced, "DLQ ids out of range");
  if (!p.dlq.empty() && p.dlq.back().end() == ids.first) {
    p.dlq.back().count += ids.count;
    return;
  }
  p.dlq.push_back(ids);
}

void Ledger::record_failed_send(int partition, IdRange ids) {
  if (ids.count <= 0) return;
  auto& f = partitions_[static_cast<std::size_t>(partition)].failed_sends;
  if (!f.empty() && f.back().end() == ids.first) {
    f.back().count += ids.count;
    return;
  }
  f.push_back(ids);
}

void Ledger::record_mark(int partition, IdRange ids, LossCause cause) {
  if (ids.count <= 0) return;
  PartitionFates& p = partitions_[static_cast<std::size_t>(partition)];
  PIPESIM_INVARIANT(ids.first >= 0 && ids.end() <= p.produced, "loss mark ids out of range");
  if (!p.marks.empty() && p.marks.back().ids.end() == ids.first && p.marks.back().cause == cause) {
    p.marks.back().ids.count += ids.count;
    return;
  }
  p.marks.push_back(Mark{ids, cause});
}

std::vector<IdRange> Ledger::ids_with_rows(int partition, IdRange ids) const {
  const PartitionFates& p = partitions_[static_cast<std::size_t>(partition)];
  std::vector<IdRange> hits;
  for (const auto& r : p.rows) {
    const std::int64_t first = std::max(r.ids.first, ids.first);
    const std::int64_t end = std::min(r.ids.end(), ids.end());
    if (first < end) hits.push_back(IdRange{first, end - first});
  }
  std::sort(hits.begin(), hits.end(), [](const IdRange& a, const IdRange& b) { return a.first < b.first; });
  std::vector<IdRange> merged;
  for (const auto& h : hits) {
    if (!merged.empty() && h.first <= merged.back().end()) {
      merged.back().count = std::max(merged.back().end(), h.end()) - merged.back().first;
    } else {
      merged.push_back(h);
    }
  }
  return merged;
}

namespace {

struct Attribution {
  EntryPoint entry = EntryPoint::COUNT;
  ProducerPath path = ProducerPath::COUNT;  // for producer_retry: which path
};

// The entry point of a row that is not the first row of its id (docs/model.md §3):
// the first insert of an extra Kafka copy is a producer-side duplicate; a
// further insert of an already-inserted copy is a sink-side duplicate, named
// by why the sink inserted it again. `again` is that reason: the row's own
// tag, or, for a first delivery that committed after a re-insert of the same
// copy (an insert that timed out, was redelivered, and then committed late
// on the server), the re-insert's.
Attribution attribute(const RowRange& first_row, const RowRange& row, bool copy_seen_before, InsertTag again) {
  if (!copy_seen_before) {
    const CopyCause extra = row.cause != CopyCause::ORIGINAL ? row.cause : first_row.cause;
    if (extra == CopyCause::MANUAL_RESEND) return {EntryPoint::MANUAL_RESEND};
    return {EntryPoint::PRODUCER_RETRY, producer_path(extra)};
  }
  switch (again) {
    case InsertTag::REDELIVERY: return {EntryPoint::INSERT_TIMEOUT_REDELIVERY};
    case InsertTag::STATE_RESET: return {EntryPoint::STATE_RESET};
    case InsertTag::NORMAL:
    case InsertTag::REPLAY: break;
  }
  return {EntryPoint::TASK_RESTART_REPLAY};
}

}  // namespace

namespace {

void add_group(std::vector<FateGroup>* groups, int partition, std::int64_t lo, std::int64_t length,
               const std::string& fate, const std::string& detail, std::int64_t rows) {
  if (groups == nullptr) return;
  if (!groups->empty()) {
    FateGroup& last = groups->back();
    if (last.partition == partition && last.ids.end() == lo && last.fate == fate &&
        last.detail == detail && last.rows_per_id == rows) {
      last.ids.count += length;
      return;
    }
  }
  groups->push_back(FateGroup{partition, IdRange{lo, length}, fate, detail, rows});
}

}  // namespace

void Ledger::settle_partition(int partition, const PartitionFates& p, Settlement& s,
                              std::vector<FateGroup>* groups) const {
  std::vector<std::int64_t> bounds = {0, p.produced};
  for (const auto& r : p.rows) {
    bounds.push_back(r.ids.first);
    bounds.push_back(r.ids.end());
  }
  for (const auto& d : p.dlq) {
    bounds.push_back(d.first);
    bounds.push_back(d.end());
  }
  for (const auto& m : p.marks) {
    bounds.push_back(m.ids.first);
    bounds.push_back(m.ids.end());
  }
  for (const auto& f : p.failed_sends) {
    bounds.push_back(f.first);
    bounds.push_back(f.end());
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());

  // Rows enter the sweep in the order of their first id and leave in the
  // order of their end; the active ones are kept in insert order (the order
  // attribution reads them in), with a count per table partition. A range
  // inserted again and again (a redelivery loop) stays active over many
  // bounds: each step is O(log n), never a pass over every active row.
  std::vector<const RowRange*> rows_by_start;
  for (const auto& r : p.rows) rows_by_start.push_back(&r);
  std::stable_sort(rows_by_start.begin(), rows_by_start.end(),
                   [](const RowRange* a, const RowRange* b) { return a->ids.first < b->ids.first; });
  std::vector<const RowRange*> rows_by_end(rows_by_start);
  std::stable_sort(rows_by_end.begin(), rows_by_end.end(),
                   [](const RowRange* a, const RowRange* b) { return a->ids.end() < b->ids.end(); });
  std::vector<IdRange> dlq = p.dlq;
  std::sort(dlq.begin(), dlq.end(), [](const IdRange& a, const IdRange& b) { return a.first < b.first; });
  std::vector<Mark> marks = p.marks;
  std::stable_sort(marks.begin(), marks.end(),
                   [](const Mark& a, const Mark& b) { return a.ids.first < b.ids.first; });
  std::vector<IdRange> failed = p.failed_sends;
  std::sort(failed.begin(), failed.end(), [](const IdRange& a, const IdRange& b) { return a.first < b.first; });
  std::vector<IdRange> active_failed;
  std::size_t next_failed = 0;

  // Insert order; rows of one insert (same serial) in the order they were recorded.
  const auto by_insert = [](const RowRange* a, const RowRange* b) {
    return a->insert_serial != b->insert_serial ? a->insert_serial < b->insert_serial : a < b;
  };
  std::set<const RowRange*, decltype(by_insert)> active_rows(by_insert);
  std::map<std::uint32_t, std::int64_t> active_table_partitions;  // table partition -> active rows
  struct CopySeen {
    InsertTag first_again = InsertTag::NORMAL;  // the first earlier row's tag that is not NORMAL
  };
  std::map<std::uint32_t, CopySeen> copies;  // segment_uid -> what earlier rows of it said
  std::vector<IdRange> active_dlq;
  std::vector<Mark> active_marks;
  std::size_t next_row = 0, next_end = 0, next_dlq = 0, next_mark = 0;
  std::int64_t classified = 0;

  for (std::size_t k = 0; k + 1 < bounds.size(); ++k) {
    const std::int64_t lo = bounds[k];
    const std::int64_t length = bounds[k + 1] - lo;
    while (next_end < rows_by_end.size() && rows_by_end[next_end]->ids.end() <= lo) {
      const RowRange* r = rows_by_end[next_end++];
      if (active_rows.erase(r) == 0) continue;  // empty: never entered
      if (--active_table_partitions[r->table_partition] == 0) active_table_partitions.erase(r->table_partition);
    }
    std::erase_if(active_dlq, [lo](const IdRange& d) { return d.end() <= lo; });
    std::erase_if(active_marks, [lo](const Mark& m) { return m.ids.end() <= lo; });
    std::erase_if(active_failed, [lo](const IdRange& f) { return f.end() <= lo; });
    while (next_failed < failed.size() && failed[next_failed].first == lo) {
      active_failed.push_back(failed[next_failed++]);
    }
    while (next_row < rows_by_start.size() && rows_by_start[next_row]->ids.first == lo) {
      const RowRange* r = rows_by_start[next_row++];
      active_rows.insert(r);
      ++active_table_partitions[r->table_partition];
    }
    while (next_dlq < dlq.size() && dlq[next_dlq].first == lo) active_dlq.push_back(dlq[next_dlq++]);
    while (next_mark < marks.size() && marks[next_mark].ids.first == lo) {
      active_marks.push_back(marks[next_mark++]);
    }
    if (lo >= p.produced) break;
    classified += length;

    const auto n = static_cast<std::int64_t>(active_rows.size());
    s.rows += n * length;
    const auto dlq_sends = static_cast<std::int64_t>(active_dlq.size());
    if (n > 0) {
      s.dlq_records_in_clickhouse += dlq_sends * length;
    } else {
      s.dlq_records_missing += dlq_sends * length;
    }
    if (n == 1) {
      s.ok += length;
    } else if (n > 1) {
      s.duplicated += length;
      s.duplicate_rows += (n - 1) * length;
      // A FINAL query folds the copies within a table partition only.
      const auto partitions = static_cast<std::int64_t>(active_table_partitions.size());
      s.final_duplicate_rows += (partitions - 1) * length;
      std::string entries;
      copies.clear();
      const RowRange* first = *active_rows.begin();
      for (const RowRange* row : active_rows) {
        const auto [it, fresh] = copies.try_emplace(row->segment_uid);
        if (row != first) {
          // `again`: the row's own tag, or else the first non-NORMAL tag of an
          // earlier insert of the same Kafka copy.
          const InsertTag again = row->tag != InsertTag::NORMAL ? row->tag : it->second.first_again;
          const Attribution a = attribute(*first, *row, !fresh, again);
          const EntryPoint e = a.entry;
          s.duplicates_by_entry[static_cast<int>(e)] += length;
          if (a.path != ProducerPath::COUNT) {
            s.producer_retry_by_path[static_cast<int>(a.path)] += length;
            if (!active_failed.empty()) s.producer_duplicates_also_failed[static_cast<int>(a.path)] += length;
          }
          if (groups) entries += (entries.empty() ? "" : ", ") + std::string(to_string(e));
        }
        if (it->second.first_again == InsertTag::NORMAL) it->second.first_again = row->tag;
      }
      add_group(groups, partition, lo, length, "duplicated", entries, n);
    } else if (dlq_sends > 0 || !active_marks.empty()) {
      LossCause cause = dlq_sends > 0 ? LossCause::DLQ_ONLY : LossCause::COUNT;
      for (const auto& m : active_marks) cause = std::min(cause, m.cause);
      s.lost += length;
      s.lost_by_cause[static_cast<int>(cause)] += length;
      add_group(groups, partition, lo, length, "lost", std::string(to_string(cause)), 0);
    } else {
      s.pending += length;
      add_group(groups, partition, lo, length, "pending", "", 0);
    }
  }
  PIPESIM_INVARIANT(classified == p.produced, "not every produced id was classified");
}

Settlement Ledger::settle(std::vector<FateGroup>* groups) const {
  Settlement s;
  for (std::size_t i = 0; i < partitions_.size(); ++i) {
    s.produced += partitions_[i].produced;
    settle_partition(static_cast<int>(i), partitions_[i], s, groups);
  }
  PIPESIM_INVARIANT(s.ok + s.duplicated + s.lost + s.pending == s.produced,
                    "conservation: ok + duplicated + lost + pending != produced");
  PIPESIM_INVARIANT(s.rows == rows_recorded_, "rows counted by the sweep differ from rows recorded");
  PIPESIM_INVARIANT(s.rows == s.ok + s.duplicated + s.duplicate_rows,
                    "rows != distinct ids in ClickHouse + duplicate rows");
  std::int64_t attributed = 0;
  for (const auto d : s.duplicates_by_entry) attributed += d;
  PIPESIM_INVARIANT(attributed == s.duplicate_rows, "a duplicate row without an entry point");
  std::int64_t by_path = 0;
  for (const auto d : s.producer_retry_by_path) by_path += d;
  PIPESIM_INVARIANT(by_path == s.duplicates_by_entry[static_cast<int>(EntryPoint::PRODUCER_RETRY)],
                    "a producer_retry duplicate without a path");
  std::int64_t lost = 0;
  for (const auto l : s.lost_by_cause) lost += l;
  PIPESIM_INVARIANT(lost == s.lost, "a lost record without a cause");
  return s;
}

}  // namespace pipesim::ledger
