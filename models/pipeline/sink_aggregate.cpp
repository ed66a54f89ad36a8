#include "models/pipeline/sink_aggregate.h"

#include <algorithm>
#include <cmath>

#include "models/pipeline/regime.h"
#include "sim/engine/invariant.h"

namespace pipesim::pipeline {

namespace {
// Keeper request times are looked up in steps of this much (the rate is
// corrected linearly within a step).
constexpr std::int64_t kKeeperStepUs = 25;
}  // namespace

SinkAggregate::SinkAggregate(sim::Simulation& sim, const Parts& parts)
    : sim_(sim), parts_(parts), id_(sim.add_component(this)) {
  parts_.table.set_aggregate_source(this);
  for (const auto& t : parts_.connect.tasks()) t->set_aggregate_host(this);
}

const connect::SteadyCycle& SinkAggregate::steady(const connect::WorkerSinkTask& task, sim::Time t) {
  return connect::steady_cycle_cached(cycle_inputs(task, t));
}

const connect::SteadyCycle& SinkAggregate::lagging(const connect::WorkerSinkTask& task,
                                                   sim::Time t) {
  return connect::lagging_cycle_cached(cycle_inputs(task, t));
}

connect::SteadyInputs SinkAggregate::cycle_inputs(const connect::WorkerSinkTask& task,
                                                  sim::Time t) const {
  const Config& c = parts_.config;
  connect::SteadyInputs in;
  // Only which partitions share a leader matters (one fetch per broker):
  // brokers are numbered in order of first appearance.
  std::vector<int> seen;
  for (const int p : task.partitions()) {
    const int leader = parts_.kafka.leader(p);
    const auto it = std::find(seen.begin(), seen.end(), leader);
    in.leaders.push_back(static_cast<int>(it - seen.begin()));
    if (it == seen.end()) seen.push_back(leader);
  }
  in.rate_per_partition = parts_.workload.partition_rate_at(t);
  in.evenly_spaced = c.workload.arrivals == "fixed";
  in.fetch = parts_.fetch;
  in.max_poll_records = task.max_poll_records();
  in.insert_base = c.clickhouse.insert_base_latency;
  in.insert_per_row = c.clickhouse.insert_latency_per_row;
  in.insert_sigma = c.clickhouse.insert_latency_sigma;
  const sim::Time k = keeper_request_time();
  in.keeper_request = sim::Time{(k.us + kKeeperStepUs / 2) / kKeeperStepUs * kKeeperStepUs};
  // Writes take Raft's commit on top (ReplicatedTable::plan_keeper_phase):
  // allocateBlockNumber and the commit multi; checkQuorumPrecondition's 3 reads.
  // A write's commit beyond a read's time, in the same steps (not corrected
  // within one: at most 12.5 us of a write's ~1.7 ms).
  const sim::Time extra = parts_.keeper.write_extra();
  in.keeper_commit = sim::Time{(extra.us + kKeeperStepUs / 2) / kKeeperStepUs * kKeeperStepUs};
  in.keeper_requests_per_insert = parts_.table.quorum() ? 5 : 2;
  in.keeper_writes_per_insert = 2;
  if (parts_.table.quorum()) {
    in.quorum_fetch = c.clickhouse.replication_fetch_latency;
    in.quorum_keeper_requests = static_cast<int>(c.clickhouse.keeper_requests_per_fetch);
    in.quorum_keeper_writes = static_cast<int>(parts_.table.keeper_writes_of_a_fetch());
  }
  // StorageKeeperMap: the state read (1 request), the BEFORE and AFTER writes
  // (2 each: exists(), then the multi, a write).
  in.keeper_map_requests = c.connector.exactly_once ? 5 : 0;
  in.keeper_map_writes = c.connector.exactly_once ? 2 : 0;
  // The queries' connections, round trips and overheads, as the event path
  // charges them (ReplicatedTable::begin_insert, KeeperMapTable::send).
  const clickhouse::QueryCosts& costs = parts_.table.costs();
  const sink::ClickHouseSinkTask& sink = task.connector();
  in.insert_overhead = costs.overhead;
  in.insert_path = costs.fixed(sink.path_of_insert()) - costs.overhead;
  if (c.connector.exactly_once) {
    in.keeper_map_fixed = costs.fixed(sink.path_of_state_read()) +
                          costs.fixed(sink.path_of_state_write()) * 2;
  }
  return in;
}

sim::Time SinkAggregate::keeper_request_time() const {
  // The regime's, not the instant's: materialized in the middle of a cleanup
  // iteration (its bursts' threads still queued), the instant's would price
  // the whole stretch with that transient, which the held share prices already.
  return parts_.keeper.regime_request_time();
}

double SinkAggregate::inserts_per_s(const connect::SteadyCycle& s) const {
  const sim::Time k = keeper_request_time();
  const std::int64_t bucket = (k.us + kKeeperStepUs / 2) / kKeeperStepUs * kKeeperStepUs;
  // The cleanup threads' bursts hold Keeper's leader a share f of the time
  // (ReplicatedTable::cleanup_held_share). A task that needs Keeper every
  // insert cycle c meets each hold with its next request and waits for most
  // of it: f x c a cycle, spread over the cycle's Keeper requests; the cycle's
  // own sensitivity to Keeper time says what that costs it (nothing for a
  // task that waits for its records).
  double extra_us = 0;
  if (s.inserts_per_s > 0) {
    const double requests =
        (parts_.table.quorum() ? 5.0 : 2.0) + (parts_.config.connector.exactly_once ? 5.0 : 0.0);
    extra_us = parts_.table.cleanup_held_share() * 1e6 / s.inserts_per_s / requests;
  }
  return std::max(0.0, s.inserts_per_s + s.inserts_per_s_per_keeper_us *
                                             (static_cast<double>(k.us - bucket) + extra_us));
}

bool SinkAggregate::may_aggregate(const connect::WorkerSinkTask& task) {
  const Config& c = parts_.config;
  const sim::Time now = sim_.now();
  if (c.run.exact || regime_ == nullptr) return false;
  if (task.lagging()) {
    double backlog = 0;
    for (const int p : task.partitions()) {
      backlog += std::max(0.0, parts_.feed.expected_high_watermark_at(p, now) -
                                   static_cast<double>(task.put_position_of(p)));
    }
    if (!regime_->sink_may_aggregate_lagging(now, backlog, lagging(task, now).rows_per_insert))
      return false;
  } else if (!regime_->sink_may_aggregate(now)) {
    return false;
  }
  // Not modelled in aggregate (yet): they change what a put inserts.
  if (c.connector.buffer_count > 0 || c.connector.ignore_partitions_when_batching) return false;
  if (!parts_.feed.active() || !parts_.table.healthy() || !parts_.keeper.healthy(now)) return false;
  for (const int p : task.partitions()) {
    if (parts_.feed.held(p) || parts_.kafka.leader(p) < 0) return false;
  }
  if (task.lagging()) return lag_worth_aggregating(task, now);
  return steady(task, now).caught_up;
}

void SinkAggregate::entered(connect::WorkerSinkTask& task) {
  const sim::Time now = sim_.now();
  materialize(now);
  Member m;
  m.task = &task;
  m.since = m.done_to = now;
  if (task.lagging()) {
    m.lagging = true;
    for (const int p : task.partitions())
      m.position.push_back(static_cast<double>(task.put_position_of(p)));
  }
  members_.push_back(std::move(m));
  ++counters_.entries;
  update_rates();
  schedule_hour();
  // Its catch-up may come before the one planned.
  ++catch_up_generation_;
  catch_up_pending_ = false;
  schedule_catch_up();
}

void SinkAggregate::leaving(connect::WorkerSinkTask& task) {
  const sim::Time now = sim_.now();
  const auto it = std::find_if(members_.begin(), members_.end(),
                               [&](const Member& m) { return m.task == &task; });
  PIPESIM_INVARIANT(it != members_.end(), "a task left an aggregate it was not in");
  it->leaving = true;
  materialize(now);
  counters_.task_seconds += (now - it->since).as_seconds();
  if (it->lagging) counters_.lagging_task_seconds += (now - it->since).as_seconds();
  // The stored state is the last batch put: about one cycle's records.
  const connect::SteadyCycle& s = it->lagging ? lagging(task, now) : steady(task, now);
  const auto last_batch = std::max<std::int64_t>(1, std::llround(s.rows_per_insert));
  sink::SinkStateStore& state = task.connector().state();
  for (const int p : task.partitions()) {
    const std::int64_t put = task.put_position_of(p);
    if (put <= 0) continue;
    const std::int64_t lo = std::max<std::int64_t>(
        std::max<std::int64_t>(0, put - last_batch),
        state.get(p).state == sink::ProcessingState::NONE ? 0 : state.get(p).range.max + 1);
    if (lo > put - 1) continue;
    state.set(p, sink::StateRecord{sink::ProcessingState::AFTER_PROCESSING, sink::OffsetRange{lo, put - 1}});
  }
  members_.erase(it);
  update_rates();
}

void SinkAggregate::leave_all() {
  while (!members_.empty()) members_.front().task->leave_aggregate();
}

void SinkAggregate::finish(sim::Time now) {
  // The end of the run: every count to the instant, as if the tasks left.
  for (auto& m : members_) m.leaving = true;
  materialize(now);
  for (auto& m : members_) {
    m.leaving = false;
    counters_.task_seconds += (now - m.since).as_seconds();
    if (m.lagging) counters_.lagging_task_seconds += (now - m.since).as_seconds();
    m.since = now;
  }
}

void SinkAggregate::count_before_forgetting(sim::Time horizon, sim::Time now) {
  for (auto& m : members_) {
    if (m.task->next_commit() < horizon) advance(m, now);
  }
}

void SinkAggregate::materialize(sim::Time now) {
  for (auto& m : members_) advance(m, now);
}

void SinkAggregate::advance(Member& m, sim::Time now) {
  // Counted to now already; a task that leaves still needs its exact positions.
  if (now <= m.done_to && !m.leaving) return;
  if (m.lagging) {
    advance_lagging(m, now);
    return;
  }
  connect::WorkerSinkTask& task = *m.task;
  const Config& c = parts_.config;
  // The inserts, hour by hour (the rate is constant within an hour).
  const sim::Time stop = parts_.workload.stop();
  for (sim::Time a = m.done_to; a < now;) {
    sim::Time b = std::min(now, sim::Time{(a.us / kHourLength.us + 1) * kHourLength.us});
    if (a < stop && stop < b) b = stop;  // no arrivals from the stop on: no inserts
    const connect::SteadyCycle& s = steady(task, a);
    const double seconds = (b - a).as_seconds();
    m.inserts += inserts_per_s(s) * seconds;
    m.map_queries += s.keeper_map_queries_per_s * seconds;
    a = b;
  }
  const auto inserts = static_cast<std::int64_t>(m.inserts);
  m.inserts -= static_cast<double>(inserts);
  const auto map_queries = static_cast<std::int64_t>(m.map_queries);
  m.map_queries -= static_cast<double>(map_queries);
  // The steady state of the last records' rate (after the stop none arrive,
  // but those of the last cycle are still being put).
  const connect::SteadyCycle& s = steady(task, std::min(now, stop - sim::Time::micros(1)));
  const sim::Time cycle{std::llround(s.cycle_s * 1e6)};
  const sim::Time age{std::llround(s.position_age_s * 1e6)};

  // The put position follows the visible records at the steady state's
  // distance; what it passes is inserted once.
  connect::ConsumerGroup& group = task.group();
  std::vector<broker::IdPiece> pieces;
  for (const int p : task.partitions()) {
    // Counts only, from the arrival blocks (no instant drawn), unless the
    // task leaves now: then exactly as a put that just returned.
    std::int64_t target;
    if (m.leaving) {
      parts_.feed.materialize(p, now);
      target = parts_.feed.high_watermark_at(p, now - age);
    } else {
      parts_.feed.materialize_coarse(p, now);
      target = static_cast<std::int64_t>(parts_.feed.expected_high_watermark_at(p, now - age));
    }
    put_through(task, p,
                std::min(target, parts_.logs[static_cast<std::size_t>(p)].high_watermark()), now,
                pieces);
  }
  // Commits that fell due: the first poll after the due time commits the
  // position of the puts that returned by then.
  while (task.next_commit() <= now) {
    const sim::Time at = task.next_commit();
    for (const int p : task.partitions()) {
      const auto hw = static_cast<std::int64_t>(parts_.feed.expected_high_watermark_at(p, at));
      group.note_high_watermark(p, hw);
      const auto put = static_cast<std::int64_t>(parts_.feed.expected_high_watermark_at(p, at - age));
      group.commit(p, std::clamp(put, group.committed(p), task.put_position_of(p)), at);
    }
    ++parts_.connect.counters().commits;
    task.set_next_commit(at + c.connect.offset_flush_interval + sim::Time{cycle.us / 2});
  }
  hand_over(inserts, s, map_queries);
  m.done_to = now;
}

void SinkAggregate::put_through(connect::WorkerSinkTask& task, int p, std::int64_t target,
                                sim::Time now, std::vector<broker::IdPiece>& pieces) {
  const std::int64_t old = task.put_position_of(p);
  if (target <= old) return;
  pieces.clear();
  parts_.logs[static_cast<std::size_t>(p)].translate(old, target - 1, pieces);
  const std::uint64_t serial = parts_.ledger.next_insert_serial();
  for (const auto& piece : pieces) {
    parts_.ledger.record_rows(
        p, ledger::RowRange{piece.ids, piece.segment_uid, piece.cause, ledger::InsertTag::NORMAL,
                            serial, parts_.table.partition_at(now)});
  }
  task.group().note_delivered(p, target);
  task.set_put_position(p, target);
}

void SinkAggregate::hand_over(std::int64_t inserts, const connect::SteadyCycle& s,
                              std::int64_t map_queries) {
  parts_.table.add_aggregate_inserts(inserts, s.insert_latency_us, map_queries);
  parts_.sink_counters.classifications[1][static_cast<std::size_t>(sink::RangeState::NEW)] += inserts;
  parts_.sink_counters.keeper_map_ops += map_queries;
}

void SinkAggregate::update_rates() {
  double inserts = 0;
  double map_requests = 0;
  double rows = 0;
  const int requests_per_batch = parts_.config.connector.exactly_once ? 5 : 0;
  for (const auto& m : members_) {
    const connect::SteadyCycle& cycle =
        m.lagging ? lagging(*m.task, sim_.now()) : steady(*m.task, sim_.now());
    const double rate = inserts_per_s(cycle);
    inserts += rate;
    rows += rate * cycle.rows_per_insert;
    map_requests += rate * requests_per_batch;
  }
  parts_.table.set_aggregate_rate(inserts, map_requests, inserts > 0 ? rows / inserts : 1.0);
}

void SinkAggregate::schedule_hour() {
  if (hour_pending_ || members_.empty()) return;
  hour_pending_ = true;
  sim::Time next{(sim_.now().us / kHourLength.us + 1) * kHourLength.us};
  // The rate also changes when the workload stops.
  if (parts_.workload.stop() > sim_.now()) next = std::min(next, parts_.workload.stop());
  sim_.schedule(next, id_, kHour);
}

void SinkAggregate::handle(const sim::Event& event) {
  if (event.type == kCatchUp) {
    if (event.arg != catch_up_generation_) return;
    catch_up_pending_ = false;
    materialize(sim_.now());
    leave_caught_up();
    schedule_catch_up();
    return;
  }
  if (event.type != kHour) return;
  hour_pending_ = false;
  materialize(sim_.now());
  // A new hour, a new rate: a task that would not keep up goes back to
  // events (it may come back as a lagging one), and a lagging one may now
  // catch up at another time.
  std::vector<connect::WorkerSinkTask*> leavers;
  for (const auto& m : members_) {
    if (!m.lagging && !steady(*m.task, sim_.now()).caught_up) leavers.push_back(m.task);
  }
  for (auto* t : leavers) t->leave_aggregate();
  update_rates();
  schedule_hour();
  ++catch_up_generation_;
  catch_up_pending_ = false;
  schedule_catch_up();
}

}  // namespace pipesim::pipeline
