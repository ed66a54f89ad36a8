#include "models/pipeline/regime.h"

#include <algorithm>

#include "models/pipeline/sink_aggregate.h"

namespace pipesim::pipeline {

Regime::Regime(sim::Simulation& sim, bool exact, sim::Time sink_preroll, producer::Producer& producer,
               producer::DirectFeed& feed, broker::KafkaCluster& kafka,
               connect::ConnectCluster& connect, clickhouse::ReplicatedTable& table,
               keeper::Keeper& keeper)
    : sim_(sim),
      exact_(exact),
      sink_preroll_(sink_preroll),
      table_(table),
      keeper_(keeper),
      producer_(producer),
      feed_(feed),
      kafka_(kafka),
      connect_(connect),
      id_(sim.add_component(this)) {
  producer_.set_observer(this);
  connect_.set_plans(this);
}

bool Regime::touches_producer(const std::string& kind) {
  return kind == "leader_change" || kind == "leader_flapping" || kind == "response_loss" ||
         kind == "broker_crash" || kind == "producer_restart" || kind == "manual_resend";
}

void Regime::plan(const std::vector<sim::FaultOccurrence>& schedule,
                  const std::vector<sim::FaultSpec>& specs) {
  for (const auto& f : schedule) {
    if (touches_producer(specs[f.spec].kind)) producer_window(f.at - kProducerPreroll, f.at + f.duration);
    sink_window(f.at - sink_preroll_, f.at + f.duration);
  }
}

void Regime::sink_window(sim::Time from, sim::Time to) {
  if (exact_) return;
  const sim::Time now = sim_.now();
  from = std::max(from, now);
  sim_.schedule(from, id_, kSinkOpen);
  sim_.schedule(std::max(to, from), id_, kSinkClose);
  sink_starts_.insert(std::upper_bound(sink_starts_.begin(), sink_starts_.end(), from), from);
}

bool Regime::sink_may_aggregate(sim::Time now) const {
  if (exact_ || open_sink_windows_ > 0 || !sink_settled_ || !feed_.active()) return false;
  const auto next = std::upper_bound(sink_starts_.begin(), sink_starts_.end(), now);
  return next == sink_starts_.end() || *next - now >= kMinStretch;
}

void Regime::try_settle() {
  if (exact_ || open_sink_windows_ > 0 || sink_settled_) return;
  const sim::Time now = sim_.now();
  const auto next = std::upper_bound(sink_starts_.begin(), sink_starts_.end(), now);
  const bool far = next == sink_starts_.end() || *next - now >= kMinStretch;
  const bool quiet = connect_.settled() && connect_.next_planned_change() - now >= kMinStretch;
  if (far && quiet && feed_.active() && table_.healthy() && keeper_.healthy(now)) {
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
  if (!kafka_.healthy() || !producer_.quiescent()) {
    schedule_check();
    return;
  }
  producer_.run_sender();  // takes what arrived up to now
  std::vector<std::int64_t> next;
  for (int p = 0; p < kafka_.partition_count(); ++p) next.push_back(producer_.next_id(p));
  producer_.stop_taking();
  ++counters_.producer_direct_switches;
  direct_since_ = sim_.now();
  connect_.before_view_change();
  feed_.start(sim_.now(), next);
  connect_.after_view_change();
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
