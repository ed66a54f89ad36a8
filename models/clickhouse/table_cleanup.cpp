// ReplicatedTable's cleanup threads, one per replica
// (ReplicatedMergeTreeCleanupThread, 25.x): their schedule (cleanup_schedule.h,
// the wake-up check), and each iteration's Keeper requests in iterate()'s
// order: the outdated parts' (one MultiRead of their znodes, then a remove
// each, sent at once), clearOldLogs', and clearOldBlocks' (a MultiRead of
// the new block ids, then a remove per old one, sent at once), which trims
// the dedup window.
#include <algorithm>
#include <cmath>

#include "models/clickhouse/table.h"
#include "models/clickhouse/table_detail.h"

namespace pipesim::clickhouse {

using namespace table_detail;  // the table's event types and slot packing

void ReplicatedTable::start() {
  // The servers have been up for a while when the run starts, each since its
  // own start-up: each cleanup thread is at its own point of a sleep
  // (cleanup_delay_period plus up to cleanup_delay_period_random_add). Were
  // they all to run at time 0, the wake-up check (30 s after each one's last
  // run) would keep the three in step, and their Keeper bursts would come
  // all at once, every time.
  const std::uint64_t sleep_ms = static_cast<std::uint64_t>(
      (options_.cleanup_delay_period + options_.cleanup_delay_period_random_add) * 1000);
  for (std::size_t r = 0; r < replicas_.size(); ++r) {
    const sim::Time phase =
        sim::Time::millis(static_cast<std::int64_t>(replicas_[r].stream.below(sleep_ms + 1)));
    start_cleanup(static_cast<int>(r), sim_.now() + phase);
  }
}

void ReplicatedTable::start_cleanup(int replica, sim::Time at) {
  Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  rep.cleanup_active = true;
  rep.cleanup_busy = false;
  ++rep.cleanup_version;
  sim_.schedule(at, id_, kCleanup, pack(static_cast<std::uint32_t>(replica), rep.cleanup_version));
}

void ReplicatedTable::stop_cleanup(int replica) {
  Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  rep.cleanup_active = false;
  rep.cleanup_busy = false;
  // An iteration cut short: its outdated parts stay outdated, grabbed again
  // by the next one (clearOldPartsAndRemoveFromZK rolls them back).
  rep.parts_since_run += rep.iteration_parts;
  rep.iteration_parts = 0;
  rep.removes_to_send = 0;
  rep.held = sim::Time{};
  rep.held_share = 0;
  ++rep.cleanup_version;
}

void ReplicatedTable::run_cleanup(int replica) {
  const sim::Time now = sim_.now();
  Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  ++counters_.cleanup_runs;
  // The last iteration's hold over the time from its start to this one's.
  if (rep.has_run && now > rep.iteration_start) {
    rep.held_share =
        static_cast<double>(rep.held.us) / static_cast<double>((now - rep.iteration_start).us);
  }
  rep.held = sim::Time{};
  rep.iteration_start = now;
  rep.cleanup_busy = true;
  if (!cleanup_can_reach_keeper(now)) {
    // removePartsFromZooKeeper throws: the parts stay outdated for the next
    // iteration, and this one counts 0 points.
    clear_old_blocks(replica);
    return;
  }
  rep.iteration_parts = rep.parts_since_run;
  rep.parts_since_run = 0;
  // iterate() begins with clearOldPartsAndRemoveFromZK, on every replica:
  // removePartsFromZooKeeper takes the parts grabbed as outdated (merged
  // away, old_parts_lifetime ago), reads whether each one's znode exists
  // (ZooKeeper::exists over them all: one MultiRead) and then sends an
  // asyncTryMultiNoThrow removing each one that does, all at once, and
  // awaits them (simultaneous_parts_removal_limit 0: no limit). Each
  // inserted part makes ~1.3 outdated parts (model: merges keep pace with
  // inserts; the count an iteration removes is the one its inserts make, not
  // delayed by old_parts_lifetime).
  const double outdated =
      static_cast<double>(rep.iteration_parts) * kPartsNumberAmplification + rep.outdated_carry;
  const auto parts = static_cast<std::int64_t>(std::floor(outdated));
  rep.outdated_carry = outdated - static_cast<double>(parts);
  if (parts == 0) {
    clear_old_blocks(replica);  // nothing to remove: on to the rest of the iteration
    return;
  }
  const keeper::Keeper::BurstAnswer reads =
      keeper_.multi_read(now, parts, keeper::KeeperClient::CLEANUP, replica);
  rep.held += reads.held;
  rep.removes_to_send = parts;
  sim_.schedule(now + reads.done, id_, kCleanupPartRemoves,
                pack(static_cast<std::uint32_t>(replica), rep.cleanup_version));
  time_out_burst(replica, now, reads);
}

bool ReplicatedTable::cleanup_can_reach_keeper(sim::Time now) {
  return keeper_.available(now) &&
         keeper_.expected_wait(now) <= keeper_.options().operation_timeout;
}

void ReplicatedTable::send_part_removes(int replica) {
  // The iteration goes on once the last one is answered (or failed).
  send_removes(replica, [&](Replica&, sim::Time last_answer) {
    return std::pair{last_answer, kCleanupBlocks};
  });
}

void ReplicatedTable::clear_old_blocks(int replica) {
  const sim::Time now = sim_.now();
  Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  double points = 0;
  std::int64_t removed = 0;
  sim::Time reads_done{};
  if (cleanup_can_reach_keeper(now)) {
    // Every replica is a leader (multiple leaders since 20.x), so each one's
    // thread runs clearOldLogs and clearOldBlocks; whichever comes first
    // after new blocks does the removing. The ids leave the dedup window
    // when the iteration decides to remove them (their removes are answered
    // within the iteration, well under a second when Keeper is healthy).
    removed = window_.clear_old_blocks();
    counters_.block_ids_removed += removed;
    const std::int64_t logs = parts_since_log_clear_;
    parts_since_log_clear_ = 0;
    // clearOldLogs: exists(log), and when there is something to clear
    // getChildren(replicas), 4 reads per replica, getChildren(log), a multi
    // (the one write); then clearOldBlocks' getChildren(blocks): one after
    // another, each waiting for its answer.
    const auto r = static_cast<std::int64_t>(replicas_.size());
    keeper_.add_load(now, 2 + (logs > 0 ? 3 + 4 * r : 0), keeper::KeeperClient::CLEANUP, 1, replica,
                     logs > 0 ? 1 : 0);
    // getBlocksSortedByTime: ZooKeeper::exists over the block ids it has not
    // cached yet (one MultiRead); the removes follow when it is answered
    // (kCleanupRemove).
    const keeper::Keeper::BurstAnswer reads =
        keeper_.multi_read(now, rep.blocks_since_run, keeper::KeeperClient::CLEANUP, replica);
    reads_done = reads.done;
    rep.held += reads.held;
    rep.blocks_since_run = 0;
    time_out_burst(replica, now, reads);
    // iterate(): points = (blocks / 2 + (log entries + outdated parts) / 1.3) / 3.
    // Each inserted part makes ~1.3 log entries and ~1.3 outdated parts (its
    // merges), so the log entries and outdated parts removed now, divided by
    // 1.3, are the parts inserted since the log was last cleared and since
    // this replica last ran (model: merges keep pace with inserts).
    points = (static_cast<double>(removed) / 2.0 + static_cast<double>(logs) +
              static_cast<double>(rep.iteration_parts)) /
             3.0;
  }
  // Otherwise its Keeper requests fail: the iteration throws and counts 0
  // points, and the block ids stay uncached for the next one to read.
  rep.iteration_parts = 0;
  // The task sleeps once the iteration is over (BackgroundSchedulePool's
  // scheduleAfter at the end of run()): after its last Keeper answer.
  rep.sleep_after = rep.schedule.after_iteration(points, rep.stream);
  const std::uint32_t arg = pack(static_cast<std::uint32_t>(replica), rep.cleanup_version);
  if (removed > 0) {
    rep.removes_to_send = removed;
    sim_.schedule(now + reads_done, id_, kCleanupRemove, arg);
  } else {
    end_iteration(rep, now + reads_done);
    sim_.schedule(now + reads_done + rep.sleep_after, id_, kCleanup, arg);
  }
}

void ReplicatedTable::send_cleanup_removes(int replica) {
  // clearOldBlocks: an asyncTryRemove per outdated block id; the task sleeps
  // after the last answer.
  send_removes(replica, [&](Replica& rep, sim::Time last_answer) {
    end_iteration(rep, last_answer);
    return std::pair{last_answer + rep.sleep_after, kCleanup};
  });
}

template <class Next>
void ReplicatedTable::send_removes(int replica, Next next) {
  const sim::Time now = sim_.now();
  Replica& rep = replicas_[static_cast<std::size_t>(replica)];
  // A remove each, all sent at once, then each future awaited; without a
  // leader they fail at once.
  const keeper::Keeper::BurstAnswer removes =
      keeper_.burst(now, rep.removes_to_send, keeper::KeeperClient::CLEANUP, replica, true);
  rep.removes_to_send = 0;
  rep.held += removes.held;
  const auto [at, event] = next(rep, now + removes.done);
  sim_.schedule(at, id_, event, pack(static_cast<std::uint32_t>(replica), rep.cleanup_version));
  time_out_burst(replica, now, removes);
}

void ReplicatedTable::end_iteration(Replica& rep, sim::Time last_answer) {
  // run() stores prev_cleanup_timestamp_ms once iterate() has returned: the
  // wake-up check's cleanup_delay_period counts from the iteration's end.
  rep.cleanup_busy = false;
  rep.last_run = last_answer;
  rep.has_run = true;
  // Commits call the wake-up check all the time, so this replica's is
  // checked again at once (its timer restarts then if due); aggregated
  // inserts commit none: their pending check comes earlier instead of at
  // the other replicas' pace (else every replica's timer would restart at
  // the same check, and their bursts would come together every time).
  if (wake_check_pending_) {
    ++wake_check_version_;
    sim_.schedule(aggregate_wake_check(), id_, kWakeCheck, pack(0, wake_check_version_));
  }
}

void ReplicatedTable::time_out_burst(int replica, sim::Time sent,
                                     const keeper::Keeper::BurstAnswer& burst) {
  // ZooKeeperImpl's receive thread finalizes the session when its oldest
  // pending request has waited operation_timeout_ms, whoever sent it: a
  // burst answered later than that ends the server's session then (every
  // table read-only, the cleanup thread stopped until the restart).
  const sim::Time limit = keeper_.options().operation_timeout;
  if (burst.ok && burst.done > limit) operation_timeout(replica, sent + limit);
  // The threads' requests behind it may outwait it too; it serves nothing
  // queued sooner, so an earlier deadline stands.
  watch_keeper(/*pending_stand=*/true);
}

double ReplicatedTable::cleanup_held_share() const {
  double share = 0;
  for (const Replica& rep : replicas_) share += rep.held_share;
  return std::min(share, 1.0);
}

bool ReplicatedTable::wake_check_applies(const Replica& rep) {
  // An iteration under way has not begun its sleep: nothing to wake.
  return rep.cleanup_active && rep.has_run && !rep.down && !rep.read_only && !rep.cleanup_busy;
}

sim::Time ReplicatedTable::next_wake_check() const {
  // Each server's scheduler checks its own replica, every check period
  // after that replica's last check: the next due one (the others' checks
  // do not fall together, as their cleanup bursts would).
  const sim::Time now = sim_.now();
  const sim::Time every = wake_check_every();
  sim::Time next = now + every;
  for (const Replica& rep : replicas_) {
    if (wake_check_applies(rep))
      next = std::min(next, std::max(rep.last_wakeup_check + every, now + sim::Time::millis(1)));
  }
  return next;
}

void ReplicatedTable::maybe_wake_cleanup() {
  // ReplicatedMergeTreeCleanupThread::wakeupEarlierIfNeeded, called by the
  // replica's background job scheduler: at most every cleanup_delay_period / 4,
  // wake a thread that last ran at least cleanup_delay_period ago if 2 x the
  // preferred batch of outdated parts waits.
  const std::int64_t preferred = options_.cleanup_thread_preferred_points_per_iteration;
  if (preferred == 0) return;
  const sim::Time now = sim_.now();
  const sim::Time period = sim::Time::seconds(options_.cleanup_delay_period);
  const sim::Time check_every{period.us / 4};
  for (std::size_t r = 0; r < replicas_.size(); ++r) {
    Replica& rep = replicas_[r];
    if (!wake_check_applies(rep)) continue;
    if (now - rep.last_wakeup_check < check_every) continue;
    rep.last_wakeup_check = now;
    if (now - rep.last_run < period) continue;
    if (static_cast<double>(rep.parts_since_run) * kPartsNumberAmplification <
        2.0 * static_cast<double>(preferred)) {
      continue;
    }
    start_cleanup(static_cast<int>(r), now);
  }
}

sim::Time ReplicatedTable::wake_check_every() const {
  // cleanup_delay_period / 4, as wakeupEarlierIfNeeded throttles itself (at
  // least a second here, where nothing else paces it).
  return std::max(sim::Time{sim::Time::seconds(options_.cleanup_delay_period).us / 4},
                  sim::Time::seconds(1));
}

}  // namespace pipesim::clickhouse
