// A lagging task in aggregate: its catch-up (a backlog after a fault, or
// arrivals above what it can put) counted, not simulated.
//
// A task whose every poll comes back full (max.poll.records, or a fetch's
// per-partition cap) puts one batch per cycle as fast as its inserts allow.
// Its records are always there: a partition's next fetch goes out once its
// buffered records are consumed (Kafka 3.7 AbstractFetch.fetchablePartitions
// skips a partition with buffered data), with the poll of the fetch's tail,
// and is back before that small put ends (polls of 500, 500, 6 at the
// defaults), so the cycle is the puts alone. connect::lagging_cycle_cached
// runs that cycle on the real Fetcher and the insert's cost, which gives the
// records it puts a second by partition, its inserts and their latencies.
// The aggregate advances each partition's put position at that rate
// (corrected for Keeper's request time, as a caught-up stretch's inserts
// are), inserts what the position passes once, commits every
// offset.flush.interval.ms the position then, and lets the task go back to
// events when its first partition comes within kCatchUpPolls batches of the
// records visible (the last polls and the catch-up itself run exactly; the
// caught-up aggregate may follow). A window (a fault's pre-roll, a planned
// change) ends it as it ends a caught-up stretch.
#include <algorithm>
#include <cmath>

#include "models/pipeline/regime.h"
#include "models/pipeline/sink_aggregate.h"

namespace pipesim::pipeline {

namespace {
// A lagging stretch ends this many of a partition's batches before its
// catch-up, and is only entered with at least kEnterPolls to go.
constexpr double kCatchUpPolls = 20;
constexpr double kEnterPolls = 100;
constexpr sim::Time kLaggingHour = sim::Time::hours(1);
}  // namespace

bool SinkAggregate::lag_worth_aggregating(const connect::WorkerSinkTask& task, sim::Time now) {
  const connect::SteadyCycle& s = lagging(task, now);
  if (s.inserts_per_s <= 0) return false;
  // The puts until its first partition is predicted to come within
  // kCatchUpPolls batches (the arrivals' rate against the put rate, as
  // catch_up_at), and at least kEnterPolls batches to go on each.
  const double arrivals = parts_.workload.partition_rate_at(now);
  const double margin = kCatchUpPolls * s.rows_per_insert;
  double seconds = 1e18;
  const std::vector<int>& partitions = task.partitions();
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    const double lag = parts_.feed.expected_high_watermark_at(partitions[i], now) -
                       static_cast<double>(task.put_position_of(partitions[i]));
    if (lag < kEnterPolls * s.rows_per_insert) return false;
    const double closing = s.rows_per_s[i] - arrivals;
    if (closing > 0) seconds = std::min(seconds, (lag - margin) / closing);
  }
  return seconds * s.inserts_per_s >= Regime::kMinLaggingPuts;
}

void SinkAggregate::advance_lagging(Member& m, sim::Time now) {
  connect::WorkerSinkTask& task = *m.task;
  const Config& c = parts_.config;
  const std::vector<int>& partitions = task.partitions();
  const sim::Time from = m.done_to;
  const std::vector<double> start = m.position;
  // Hour by hour: Keeper's request time and the cycle it sets are looked up
  // at each hour's start (the arrivals do not change a lagging cycle).
  for (sim::Time a = from; a < now;) {
    const sim::Time b = std::min(now, sim::Time{(a.us / kLaggingHour.us + 1) * kLaggingHour.us});
    const connect::SteadyCycle& s = lagging(task, a);
    const double rate = inserts_per_s(s);
    const double scale = s.inserts_per_s > 0 ? rate / s.inserts_per_s : 0.0;
    const double seconds = (b - a).as_seconds();
    m.inserts += rate * seconds;
    m.map_queries += s.keeper_map_queries_per_s * scale * seconds;
    for (std::size_t i = 0; i < partitions.size(); ++i)
      m.position[i] += s.rows_per_s[i] * scale * seconds;
    a = b;
  }
  const auto inserts = static_cast<std::int64_t>(m.inserts);
  m.inserts -= static_cast<double>(inserts);
  const auto map_queries = static_cast<std::int64_t>(m.map_queries);
  m.map_queries -= static_cast<double>(map_queries);
  const connect::SteadyCycle& s = lagging(task, now);

  // What the positions passed is inserted once; a position never passes
  // the records visible (the catch-up event comes kCatchUpPolls before).
  connect::ConsumerGroup& group = task.group();
  std::vector<broker::IdPiece> pieces;
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    const int p = partitions[i];
    if (m.leaving) {
      parts_.feed.materialize(p, now);
    } else {
      parts_.feed.materialize_coarse(p, now);
    }
    const std::int64_t old = task.put_position_of(p);
    const auto visible =
        std::min(static_cast<std::int64_t>(parts_.feed.expected_high_watermark_at(p, now)),
                 parts_.logs[static_cast<std::size_t>(p)].high_watermark());
    m.position[i] = std::min(m.position[i], static_cast<double>(visible));
    const std::int64_t target = std::max(old, static_cast<std::int64_t>(m.position[i]));
    if (target > old) {
      pieces.clear();
      parts_.logs[static_cast<std::size_t>(p)].translate(old, target - 1, pieces);
      const std::uint64_t serial = parts_.ledger.next_insert_serial();
      for (const auto& piece : pieces) {
        parts_.ledger.record_rows(
            p, ledger::RowRange{piece.ids, piece.segment_uid, piece.cause,
                                ledger::InsertTag::NORMAL, serial, parts_.table.partition_at(now)});
      }
      group.note_delivered(p, target);
      task.set_put_position(p, target);
    }
  }
  // Commits that fell due: the first poll after the due time commits the
  // position of the puts that returned by then (the positions between
  // `from` and `now` advance evenly).
  const sim::Time cycle{std::llround(s.cycle_s * 1e6)};
  while (task.next_commit() <= now) {
    const sim::Time at = task.next_commit();
    const double share = now > from ? (at - from).as_seconds() / (now - from).as_seconds() : 1.0;
    for (std::size_t i = 0; i < partitions.size(); ++i) {
      const int p = partitions[i];
      const auto hw = static_cast<std::int64_t>(parts_.feed.expected_high_watermark_at(p, at));
      group.note_high_watermark(p, hw);
      const double at_position =
          start[i] + (m.position[i] - start[i]) * std::clamp(share, 0.0, 1.0);
      group.commit(p,
                   std::clamp(static_cast<std::int64_t>(at_position), group.committed(p),
                              task.put_position_of(p)),
                   at);
    }
    ++parts_.connect.counters().commits;
    task.set_next_commit(at + c.connect.offset_flush_interval + sim::Time{cycle.us / 2});
  }
  parts_.table.add_aggregate_inserts(inserts, s.insert_latency_us, map_queries);
  parts_.sink_counters.classifications[1][static_cast<std::size_t>(sink::RangeState::NEW)] +=
      inserts;
  parts_.sink_counters.keeper_map_ops += map_queries;
  m.done_to = now;
}

sim::Time SinkAggregate::catch_up_at(const Member& m, sim::Time now) {
  // Within the hour the arrivals' rate is constant and so is the lagging
  // rate: each partition's lag shrinks (or grows) linearly.
  const connect::SteadyCycle& s = lagging(*m.task, now);
  const double scale = s.inserts_per_s > 0 ? inserts_per_s(s) / s.inserts_per_s : 0.0;
  const double margin = kCatchUpPolls * s.rows_per_insert;
  const double arrivals = parts_.workload.partition_rate_at(now);
  sim::Time at = sim::Time::max();
  const std::vector<int>& partitions = m.task->partitions();
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    const double lag = parts_.feed.expected_high_watermark_at(partitions[i], now) - m.position[i];
    if (lag <= margin) return now;
    const double closing = s.rows_per_s[i] * scale - arrivals;
    if (closing <= 0) continue;
    const double seconds = (lag - margin) / closing;
    if (seconds < 1e6)
      at = std::min(at, now + sim::Time{std::max<std::int64_t>(1, std::llround(seconds * 1e6))});
  }
  return at;
}

void SinkAggregate::schedule_catch_up() {
  if (catch_up_pending_) return;
  const sim::Time now = sim_.now();
  const sim::Time hour_end{(now.us / kLaggingHour.us + 1) * kLaggingHour.us};
  sim::Time at = sim::Time::max();
  for (const auto& m : members_) {
    if (m.lagging) at = std::min(at, catch_up_at(m, now));
  }
  // The hour's event looks again (the rates change with it).
  if (at >= hour_end) return;
  catch_up_pending_ = true;
  sim_.schedule(std::max(at, now), id_, kCatchUp, ++catch_up_generation_);
}

void SinkAggregate::leave_caught_up() {
  const sim::Time now = sim_.now();
  std::vector<connect::WorkerSinkTask*> leavers;
  for (const auto& m : members_) {
    // Within a millisecond of its predicted catch-up (the rounding of the
    // event's instant).
    if (m.lagging && catch_up_at(m, now) <= now + sim::Time::millis(1)) leavers.push_back(m.task);
  }
  for (auto* t : leavers) t->leave_aggregate();
}

}  // namespace pipesim::pipeline
