// The ClickHouse servers' Keeper sessions as Keeper's queue sees them.
//
// Every server has one session, shared by all its tables and threads
// (ClickHouse 25.x: Context::getZooKeeper, CurrentMetrics::ZooKeeperSession),
// and ZooKeeperImpl's receive thread finalizes it when its oldest pending
// request has waited operation_timeout_ms, whoever sent it
// ("Operation timeout (no response in N ms)", every pending request fails).
// The threads of every server queue at the same leader, so when one's
// request waits that long, every server's does: threads_time_out_at() finds
// the first request a thread sends that will, under the regime as it is.
//
// A server whose session ended sends nothing until its restarting thread
// has a new one (queueUpdatingTask, the merge selector, fetches and the
// cleanup thread meet ZSESSIONEXPIRED or a read-only table and stop), so
// its share of the background threads leaves the closed loop
// (set_session_share). The requests they had queued stay in Keeper's queue:
// ZooKeeperImpl finalizes the client's side only, and Keeper serves what it
// has received, answering no one. They hold the leader as a burst does, but
// are in flight for no client (CurrentMetrics::ZooKeeperRequest dropped them
// when the session was finalized). Behind them wait the restarting thread's
// handshake and tryStartup requests: recovery waits for the queue to drain.
#include <algorithm>
#include <cmath>

#include "models/keeper/keeper.h"
#include "models/keeper/keeper_time.h"

namespace pipesim::keeper {

sim::Time Keeper::thread_request_time(sim::Time at) const {
  // As request() prices one: a held leader keeps it until it is free, behind
  // the number at the leader then; otherwise behind the regime's mean number,
  // displaced by the transient.
  if (busy_from_ > at && busy_until_ > at) {
    // A burst was sent and waits for the requests ahead of it: this one
    // came after it (FCFS) and waits for it too.
    return held_end(busy_from_) - at + threads_slowest_round_trip() + to_time(1 / loop_.mu());
  }
  const auto n = static_cast<double>(loop_.threads());
  const double ahead = held(at) ? std::clamp(fluid_at(at), 0.0, n)
                                : std::clamp(loop_.mean_at_leader() + shift_at(at), 0.0, n);
  return hold_left(at) + threads_slowest_round_trip() + to_time((ahead + 1) / loop_.mu());
}

sim::Time Keeper::threads_time_out_at(sim::Time now) {
  advance(now);
  if (!available(now) || loop_.threads() == 0) return sim::Time::max();
  const sim::Time limit = options_.operation_timeout;
  // No request waits longer than every hold ahead and every thread ahead of
  // it: the usual answer (a healthy leader, a short burst), found at once.
  const sim::Time holds = std::max({busy_until_, stalled_until_, now}) - now;
  const auto n = static_cast<double>(loop_.threads());
  if (holds + threads_slowest_round_trip() + to_time((n + 1) / loop_.mu()) <= limit) {
    return sim::Time::max();
  }
  const auto over = [&](sim::Time s) { return thread_request_time(s) > limit; };
  // Between a time that is not over and a later one that is, with the time
  // rising in between: the first one over, to the microsecond.
  const auto first_over = [&](sim::Time a, sim::Time b) {
    while (b.us - a.us > 1) {
      const sim::Time mid{a.us + (b.us - a.us) / 2};
      (over(mid) ? b : a) = mid;
    }
    return b;
  };
  // The transient is e^-40 of itself after 40 time constants: past that the
  // regime's steady state holds.
  const sim::Time settle = to_time(40 * std::max({loop_.away_s(), loop_.threads_away_s(), 0.025}));
  for (sim::Time a = now;;) {
    if (over(a)) return a + limit;
    const sim::Time next = next_boundary(a);
    const bool last = next == sim::Time::max();
    const sim::Time end = last ? a + settle : next - sim::Time{1};
    // Within a span the time is monotone (a serving leader: the number at
    // it moves one way) or concave (a held one: the hold left falls evenly,
    // the number queued rises ever slower), so its largest value is at the
    // span's end or where it turns.
    sim::Time peak = end;
    if (held(a)) {
      sim::Time lo = a;
      sim::Time hi = end;
      while (hi.us - lo.us > 2) {
        const sim::Time m1{lo.us + (hi.us - lo.us) / 3};
        const sim::Time m2{hi.us - (hi.us - lo.us) / 3};
        if (thread_request_time(m1) < thread_request_time(m2)) {
          lo = m1;
        } else {
          hi = m2;
        }
      }
      peak = lo;
    }
    if (peak > a && over(peak)) return first_over(a, peak) + limit;
    if (last) return sim::Time::max();
    a = next;
  }
}

void Keeper::set_session_share(sim::Time now, double share) {
  advance(now);
  share = std::clamp(share, 0.0, 1.0);
  session_share_ = share;
  const auto threads =
      static_cast<std::int64_t>(std::llround(static_cast<double>(background_threads_) * share));
  if (threads == background_.threads) return;
  flush_samples();
  const bool held_now = held(now);
  const auto before = static_cast<double>(loop_.threads());
  const double at_leader = !available(now) ? 0.0
                           : held_now
                               ? std::clamp(fluid_, 0.0, before)
                               : std::clamp(loop_.mean_at_leader() + shift_at(now), 0.0, before);
  const std::int64_t leaving = std::max<std::int64_t>(0, background_.threads - threads);
  background_.threads = threads;
  solve();
  // The leaving threads' share of the queue stays at the leader for no one.
  const double orphans = before > 0 ? at_leader * static_cast<double>(leaving) / before : 0.0;
  const sim::Time work = to_time(orphans / loop_.mu());
  if (work > sim::Time{}) {
    // They were queued before anything that comes now: the leader serves
    // them next (after a stall under way, behind a burst it was serving).
    if (busy_until_ > now) {
      busy_until_ += work;
    } else {
      busy_from_ = held_end(now);
      busy_until_ = busy_from_ + work;
    }
  }
  // The rest stay queued: a held leader's number is the fluid itself, a
  // serving one's is the regime's mean displaced by the transient.
  const double rest = at_leader - orphans;
  fluid_ = held(now) ? rest : std::max(0.0, rest - loop_.mean_at_leader() + loop_.fluid_limit());
}

}  // namespace pipesim::keeper
