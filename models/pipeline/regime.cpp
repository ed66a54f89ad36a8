#include "models/pipeline/regime.h"

#include <algorithm>
#include <limits>

#include "models/pipeline/sink_aggregate.h"

namespace pipesim::pipeline {

Regime::Regime(sim::Simulation& sim, bool exact, sim::Time producer_preroll, sim::Time sink_preroll,
               double producer_capacity, std::uint64_t seed, const Parts& parts)
    : sim_(sim),
      exact_(exact),
      producer_preroll_(std::max(producer_preroll, kProducerPreroll)),
      sink_preroll_(sink_preroll),
      producer_capacity_(producer_capacity),
      jitter_(seed, "regime/preroll"),
      table_(parts.table),
      keeper_(parts.keeper),
      workload_(parts.workload),
      producer_(parts.producer),
      feed_(parts.feed),
      kafka_(parts.kafka),
      connect_(parts.connect),
      id_(sim.add_component(this)) {
  producer_.set_observer(this);
  connect_.set_plans(this);
}

double Regime::producer_capacity(std::int64_t records_per_batch, sim::Time round_trip,
                                 sim::Time broker_hold, std::int64_t max_in_flight, bool acks_none) {
  if (acks_none) return std::numeric_limits<double>::infinity();
  const double per_request_s = std::max(broker_hold.as_seconds(),
                                        (round_trip + broker_hold).as_seconds() /
                                            static_cast<double>(max_in_flight));
  return per_request_s > 0 ? static_cast<double>(records_per_batch) / per_request_s
                           : std::numeric_limits<double>::infinity();
}

bool Regime::keeps_up(sim::Time t) const {
  return workload_.partition_rate_at(t) <= kMaxProducerLoad * producer_capacity_;
}

sim::Time Regime::overload_from(sim::Time now, sim::Time until) const {
  // The profile's rate changes only at whole hours.
  const sim::Time hour = sim::Time::hours(1);
  for (sim::Time t{(now.us / hour.us + 1) * hour.us}; t < until; t = t + hour) {
    if (!keeps_up(t)) return t;
  }
  return until;
}

bool Regime::touches_producer(const std::string& kind) {
  return kind == "leader_change" || kind == "leader_flapping" || kind == "response_loss" ||
         kind == "broker_crash" || kind == "producer_restart" || kind == "manual_resend";
}

void Regime::plan(const std::vector<sim::FaultOccurrence>& schedule,
                  const std::vector<sim::FaultSpec>& specs) {
  for (const auto& f : schedule) {
    const sim::Time jitter{static_cast<std::int64_t>(jitter_.uniform01() * 1e6)};
    if (touches_producer(specs[f.spec].kind)) {
      producer_window(f.at - producer_preroll_ - jitter, f.at + f.duration);
    }
    sink_window(f.at - sink_preroll_ - jitter, f.at + f.duration);
  }
}

void Regime::add_start(std::multiset<sim::Time>& starts, sim::Time at) {
  // Only starts after now matter (worth_it looks for the next one): the past
  // ones go. A day of ~100,000 faults plans as many windows: each in O(log n).
  starts.erase(starts.begin(), starts.upper_bound(sim_.now()));
  starts.insert(at);
}

bool Regime::worth_it(const std::multiset<sim::Time>& starts, sim::Time now, sim::Time min_stretch,
                      double min_records, double backlog) const {
  const auto next = starts.upper_bound(now);
  sim::Time until = next == starts.end() ? workload_.stop() : *next;
  // A lagging task's stretch puts its backlog too, after the stop as well
  // (the run's drain): with no window ahead it lasts until the run ends.
  if (backlog > 0 && next == starts.end()) until = sim::Time::max();
  const double arrivals = now < workload_.stop()
                              ? workload_.expected_records(now, std::min(until, workload_.stop()))
                              : 0.0;
  return until - now >= min_stretch && arrivals + backlog >= min_records;
}

void Regime::sink_window(sim::Time from, sim::Time to) {
  if (exact_) return;
  const sim::Time now = sim_.now();
  from = std::max(from, now);
  sim_.schedule(from, id_, kSinkOpen);
  sim_.schedule(std::max(to, from), id_, kSinkClose);
  add_start(sink_starts_, from);
}

bool Regime::sink_open() const {
  return !exact_ && open_sink_windows_ == 0 && sink_settled_ && feed_.active();
}

bool Regime::sink_may_aggregate(sim::Time now) const {
  return sink_open() && worth_it(sink_starts_, now, kMinStretch, kMinRecords);
}

bool Regime::sink_may_aggregate_lagging(sim::Time now, double backlog, double rows_per_put) const {
  return sink_open() &&
         worth_it(sink_starts_, now, kMinStretch, kMinLaggingPuts * rows_per_put, backlog);
}

void Regime::try_settle() {
  if (exact_ || open_sink_windows_ > 0 || sink_settled_) return;
  const sim::Time now = sim_.now();
  const bool quiet = connect_.settled() && connect_.next_planned_change() - now >= kMinStretch;
  // Whether a stretch is worth it is each task's question (sink_may_aggregate):
  // a lagging one's backlog counts, and outlives the workload's stop.
  if (quiet && feed_.active() && table_.healthy() && keeper_.healthy(now)) {
    sink_settled_ = true;
    return;
  }
  schedule_sink_check();
}

void Regime::schedule_sink_check() {
  if (exact_ || sink_check_pending_) return;
  sink_check_pending_ = true;
  sim_.schedule_in(kQuiescenceCheck, id_, kSinkCheck);
}

void Regime::start() {
  producer_.start_taking(std::vector<std::int64_t>(static_cast<std::size_t>(kafka_.partition_count()), 0));
  producer_.run_sender();
  schedule_check();
  schedule_sink_check();
}

void Regime::producer_window(sim::Time from, sim::Time to) {
  if (exact_) return;
  const sim::Time now = sim_.now();
  sim_.schedule(std::max(from, now), id_, kOpen);
  sim_.schedule(std::max(to, now), id_, kClose);
  add_start(producer_starts_, std::max(from, now));
  // The sink tasks cannot be in aggregate without the direct feed.
  sink_window(from, to);
}

void Regime::handle(const sim::Event& event) {
  switch (event.type) {
    case kOpen:
      ++open_windows_;
      if (feed_.active()) to_exact();
      return;
    case kClose:
      --open_windows_;
      schedule_check();
      return;
    case kCheck:
      check_pending_ = false;
      try_direct();
      return;
    case kOverload:
      if (event.arg != overload_generation_ || !feed_.active()) return;
      to_exact();
      schedule_check();
      return;
    case kSinkOpen:
      ++open_sink_windows_;
      sink_settled_ = false;
      if (aggregate_) aggregate_->leave_all();
      return;
    case kSinkClose:
      --open_sink_windows_;
      try_settle();
      return;
    case kSinkCheck:
      sink_check_pending_ = false;
      try_settle();
      return;
    default:
      break;
  }
}

void Regime::to_exact() {
  ++overload_generation_;  // a planned overload switch is moot
  sink_settled_ = false;
  if (aggregate_) aggregate_->leave_all();
  const sim::Time now = sim_.now();
  counters_.producer_direct_time += now - direct_since_;
  ++counters_.producer_exact_switches;
  connect_.before_view_change();
  const std::vector<std::int64_t> next = feed_.stop(now);
  // Consumers waiting on the feed's instants hear of what it wrote now.
  for (int p = 0; p < kafka_.partition_count(); ++p) connect_.on_data(p);
  connect_.after_view_change();
  producer_.start_taking(next);
  producer_.run_sender();
}

void Regime::try_direct() {
  if (exact_ || open_windows_ > 0 || feed_.active()) return;
  const sim::Time now = sim_.now();
  if (!keeps_up(now)) {
    // Looked at again when the hour changes.
    const sim::Time hour = sim::Time::hours(1);
    if (!check_pending_ && now < workload_.stop()) {
      check_pending_ = true;
      sim_.schedule(sim::Time{(now.us / hour.us + 1) * hour.us}, id_, kCheck);
    }
    return;
  }
  // Checked again when a window closes.
  if (!worth_it(producer_starts_, now, kProducerMinStretch, kProducerMinRecords)) return;
  const auto next = producer_starts_.upper_bound(now);
  const sim::Time until = overload_from(now, next == producer_starts_.end() ? workload_.stop() : *next);
  if (until - now < kProducerMinStretch || workload_.expected_records(now, until) < kProducerMinRecords) {
    if (until < workload_.stop() && !check_pending_) {
      check_pending_ = true;
      sim_.schedule(until + sim::Time::hours(1), id_, kCheck);
    }
    return;
  }
  if (!kafka_.healthy() || !producer_.quiescent()) {
    schedule_check();
    return;
  }
  producer_.run_sender();  // takes what arrived up to now
  std::vector<std::int64_t> next_ids;
  for (int p = 0; p < kafka_.partition_count(); ++p) next_ids.push_back(producer_.next_id(p));
  producer_.stop_taking();
  ++counters_.producer_direct_switches;
  direct_since_ = now;
  connect_.before_view_change();
  feed_.start(now, next_ids);
  connect_.after_view_change();
  // An hour the producer cannot carry runs exactly from its start.
  if (until < workload_.stop()) sim_.schedule(until, id_, kOverload, ++overload_generation_);
}

void Regime::schedule_check() {
  if (exact_ || check_pending_ || open_windows_ > 0 || feed_.active()) return;
  check_pending_ = true;
  sim_.schedule_in(kQuiescenceCheck, id_, kCheck);
}

void Regime::sender_ran() {
  if (!feed_.active()) return;
  const std::vector<int> released = feed_.release_drained(sim_.now());
  if (released.empty()) return;
  for (const int p : released) connect_.on_data(p);
  connect_.after_view_change();
}

}  // namespace pipesim::pipeline
