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
#include <limits>

#include "models/pipeline/regime.h"
#include "models/pipeline/sink_aggregate.h"

namespace pipesim::pipeline {

namespace {
// A lagging stretch ends this many of a partition's batches before its
// catch-up, and is only entered with at least kEnterPolls to go.
constexpr double kCatchUpPolls = 20;
constexpr double kEnterPolls = 100;
}  // namespace

bool SinkAggregate::lag_worth_aggregating(const connect::WorkerSinkTask& task, sim::Time now) {
  const connect::SteadyCycle& s = lagging(task, now);
  if (s.inserts_per_s <= 0) return false;
  // At least kEnterPolls batches to go on each partition, and the puts
  // until its predicted catch-up.
  std::vector<double> position;
  for (const int p : task.partitions()) {
    position.push_back(static_cast<double>(task.put_position_of(p)));
    if (parts_.feed.expected_high_watermark_at(p, now) - position.back() <
        kEnterPolls * s.rows_per_insert)
      return false;
  }
  return catch_up_seconds(task, position, s, 1.0, now) * s.inserts_per_s >= Regime::kMinLaggingPuts;
}

double SinkAggregate::catch_up_seconds(const connect::WorkerSinkTask& task,
                                       const std::vector<double>& position,
                                       const connect::SteadyCycle& s, double scale,
                                       sim::Time now) const {
  // Within the hour the arrivals' rate is constant and so is the lagging
  // rate: each partition's lag shrinks (or grows) linearly.
  const double margin = kCatchUpPolls * s.rows_per_insert;
  const double arrivals = parts_.workload.partition_rate_at(now);
  double seconds = std::numeric_limits<double>::infinity();
  const std::vector<int>& partitions = task.partitions();
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    const double lag = parts_.feed.expected_high_watermark_at(partitions[i], now) - position[i];
    if (lag <= margin) return 0;
    const double closing = s.rows_per_s[i] * scale - arrivals;
    if (closing > 0) seconds = std::min(seconds, (lag - margin) / closing);
  }
  return seconds;
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
    const sim::Time b = std::min(now, sim::Time{(a.us / kHourLength.us + 1) * kHourLength.us});
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
    const auto visible =
        std::min(static_cast<std::int64_t>(parts_.feed.expected_high_watermark_at(p, now)),
                 parts_.logs[static_cast<std::size_t>(p)].high_watermark());
    m.position[i] = std::min(m.position[i], static_cast<double>(visible));
    put_through(task, p, static_cast<std::int64_t>(m.position[i]), now, pieces);
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
  hand_over(inserts, s, map_queries);
  m.done_to = now;
}

sim::Time SinkAggregate::catch_up_at(const Member& m, sim::Time now) {
  const connect::SteadyCycle& s = lagging(*m.task, now);
  const double scale = s.inserts_per_s > 0 ? inserts_per_s(s) / s.inserts_per_s : 0.0;
  const double seconds = catch_up_seconds(*m.task, m.position, s, scale, now);
  if (seconds == 0) return now;
  if (seconds >= 1e6) return sim::Time::max();
  return now + sim::Time{std::max<std::int64_t>(1, std::llround(seconds * 1e6))};
}

void SinkAggregate::schedule_catch_up() {
  if (catch_up_pending_) return;
  const sim::Time now = sim_.now();
  const sim::Time hour_end{(now.us / kHourLength.us + 1) * kHourLength.us};
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
