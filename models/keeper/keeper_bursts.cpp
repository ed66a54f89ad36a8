// What holds Keeper's leader from the threads' requests: stalls, and bursts,
// many requests sent at once by one thread that then awaits them all
// (keeper.h). ClickHouse 25.x sends them through zkutil's async calls:
// ReplicatedMergeTreeCleanupThread::getBlocksSortedByTime reads the
// stat of every block id it has not cached with ZooKeeper::exists over a
// vector of paths (an asyncExists each, then waits on all), and
// clearOldBlocks sends an asyncTryRemove per outdated block id and then waits
// on all the futures. Each goes into ZooKeeperImpl's send queue at once, so
// the leader's queue takes them all together: thousands in flight from one
// thread, while the threads of the closed loop wait behind them.
#include <algorithm>
#include <cmath>

#include "models/keeper/keeper.h"
#include "models/keeper/keeper_time.h"

namespace pipesim::keeper {

namespace {
constexpr double span_s(sim::Time t) { return static_cast<double>(t.us) / 1e6; }
}  // namespace

double Keeper::Ramp::left_at(sim::Time at) const {
  if (at < first) return count;
  if (at >= last) return 0;
  return count * span_s(last - at) / span_s(last - first);
}

Keeper::BurstAnswer Keeper::burst(sim::Time now, std::int64_t requests, KeeperClient client,
                                  int server, bool writes) {
  advance(now);
  if (requests <= 0) return BurstAnswer{true, sim::Time{}};
  if (!available(now)) {
    // No leader: every one of them gets a connection loss at once.
    ++failed_requests_;
    return BurstAnswer{false, options_.latency};
  }
  count(requests, client);
  // The leader's work for them (one service time each, summed).
  const sim::Time work = to_time(service_time_s(requests, burst_stream_));
  const sim::Time from = take_leader(now, work);
  // Answered at an even pace as the leader serves them; writes once Raft has
  // committed them (the leader's request thread goes on batching meanwhile).
  const sim::Time trip = round_trip(writes);
  return send_burst(
      now, Ramp{from + trip, busy_until_ + trip, static_cast<double>(requests), server}, work);
}

Keeper::BurstAnswer Keeper::multi_read(sim::Time now, std::int64_t paths, KeeperClient client,
                                       int server) {
  if (!options_.multi_read) return burst(now, paths, client, server, false);
  advance(now);
  if (paths <= 0) return BurstAnswer{true, sim::Time{}};
  if (!available(now)) {
    ++failed_requests_;
    return BurstAnswer{false, options_.latency};
  }
  // One request; Keeper does its sub-reads one after another, and answers
  // them all together.
  count(1, client);
  const double per_s = static_cast<double>(options_.multi_read_sub_reads_per_s) * capacity_factor_;
  const sim::Time work = to_time(static_cast<double>(paths) / per_s);
  take_leader(now, work);
  const sim::Time answer = busy_until_ + round_trip(false);
  return send_burst(now, Ramp{answer, answer, 1.0, server}, work);
}

sim::Time Keeper::take_leader(sim::Time now, sim::Time work) {
  sim::Time from;
  if (busy_until_ > now) {
    // Behind a burst still queued or being served: they follow it (the
    // threads' requests that came in meanwhile are taken to wait behind both).
    from = busy_until_;
    busy_until_ += work;
  } else {
    // Behind the requests at the leader now (FCFS): after a stall under way,
    // the leader serves those first, and the threads' requests that arrive
    // from now on queue behind the burst.
    const sim::Time start = held_end(now);
    const double ahead = std::clamp(loop_.mean_at_leader() + shift_at(now), 0.0,
                                    static_cast<double>(loop_.threads()));
    from = start + to_time(ahead / loop_.mu());
    busy_from_ = from;
    busy_until_ = from + work;
  }
  return from;
}

Keeper::BurstAnswer Keeper::send_burst(sim::Time now, const Ramp& ramp, sim::Time work) {
  ramps_.push_back(ramp);
  // Keeper's latency of each: from now until its answer, evenly spread.
  latency_us_.add_uniform((ramp.first - now).us, (ramp.last - now).us,
                          static_cast<std::int64_t>(std::llround(ramp.count)));
  drop_answered(now);
  peak_in_flight_ = std::max(peak_in_flight_, all_in_flight_at(now));
  note_server_peaks(now);
  return BurstAnswer{true, ramp.last - now, work};
}

sim::Time Keeper::held_end(sim::Time at) const {
  // Each step moves to the end of a span, so this stops (a stall and a
  // burst at most, one after the other).
  sim::Time end = at;
  for (;;) {
    if (stalled(end)) {
      end = stalled_until_;
    } else if (busy(end)) {
      end = busy_until_;
    } else {
      return end;
    }
  }
}

sim::Time Keeper::next_boundary(sim::Time at) const {
  sim::Time next = sim::Time::max();
  for (const sim::Time b : {stalled_from_, stalled_until_, busy_from_, busy_until_}) {
    if (b > at) next = std::min(next, b);
  }
  return next;
}

double Keeper::bursts_at(sim::Time at) const {
  double left = 0;
  for (const Ramp& r : ramps_) left += r.left_at(at);
  return left;
}

double Keeper::bursts_at(sim::Time at, std::size_t server) const {
  double left = 0;
  for (const Ramp& r : ramps_) {
    if (r.server < 0) {
      left += r.left_at(at) / static_cast<double>(servers_.size());
    } else if (static_cast<std::size_t>(r.server) == server) {
      left += r.left_at(at);
    }
  }
  return left;
}

double Keeper::bursts_integral(sim::Time from, sim::Time to, std::size_t server) const {
  double total = 0;
  for (const Ramp& r : ramps_) {
    if (r.server < 0) {
      total += ramp_integral(r, from, to) / static_cast<double>(servers_.size());
    } else if (static_cast<std::size_t>(r.server) == server) {
      total += ramp_integral(r, from, to);
    }
  }
  return total;
}

double Keeper::bursts_integral(sim::Time from, sim::Time to) const {
  double total = 0;
  for (const Ramp& r : ramps_) total += ramp_integral(r, from, to);
  return total;
}

double Keeper::ramp_integral(const Ramp& r, sim::Time from, sim::Time to) {
  // All of them until the first answer, then a straight line down to 0.
  double total = 0;
  const sim::Time flat_to = std::min(to, r.first);
  if (flat_to > from) total += r.count * span_s(flat_to - from);
  const sim::Time a = std::max(from, r.first);
  const sim::Time b = std::min(to, r.last);
  if (b > a) total += (r.left_at(a) + r.left_at(b)) / 2 * span_s(b - a);
  return total;
}

void Keeper::postpone_bursts(sim::Time at, sim::Time d) {
  if (d <= sim::Time{}) return;
  // The leader's burst work not done at `at` is done `d` later; a burst it
  // was serving stays counted as held through the stall (held either way).
  if (busy_until_ > at) {
    if (busy_from_ >= at) busy_from_ += d;
    busy_until_ += d;
  }
  for (Ramp& r : ramps_) {
    if (r.last <= at) continue;
    if (r.first >= at) {
      r.first += d;
      r.last += d;
    } else {
      // Partly answered: what is left is answered from the stall's end on.
      r = Ramp{at + d, r.last + d, r.left_at(at), r.server};
    }
  }
}

void Keeper::rescale_holds(sim::Time now, double factor) {
  if (factor == 1.0 || busy_until_ <= now) return;
  const sim::Time pivot = stalled(now) ? stalled_until_ : now;
  const auto scaled = [&](sim::Time& t) {
    if (t > pivot)
      t = pivot + sim::Time{static_cast<std::int64_t>(
                      std::llround(static_cast<double>((t - pivot).us) * factor))};
  };
  scaled(busy_from_);
  scaled(busy_until_);
  for (Ramp& r : ramps_) {
    // Answered at an even pace still: what is left, over the scaled span.
    if (r.first < pivot && r.last > pivot) r = Ramp{pivot, r.last, r.left_at(pivot), r.server};
    scaled(r.first);
    scaled(r.last);
  }
}

void Keeper::drop_bursts() {
  busy_from_ = last_;
  busy_until_ = last_;
  ramps_.clear();
}

sim::Time Keeper::expected_chain_time(sim::Time now, std::int64_t requests, std::int64_t writes) {
  const sim::Time each = unheld_request_time(now);
  return each * requests + write_extra() * std::clamp<std::int64_t>(writes, 0, requests) +
         hold_left(now);
}

void Keeper::set_stalled(sim::Time now, sim::Time until) {
  advance(now);
  flush_samples();
  if (stalled(now)) {
    // The stall under way goes on; the bursts queued behind it wait longer.
    if (until > stalled_until_) postpone_bursts(stalled_until_, until - stalled_until_);
    stalled_until_ = std::max(stalled_until_, until);
    return;
  }
  postpone_bursts(now, until - now);
  stalled_from_ = now;
  stalled_until_ = until;
}

}  // namespace pipesim::keeper
