// Closed forms for steady-state questions, to check the simulator against
// something independent of it (VALIDATION.md). They assume one partition per
// task, records arriving one by one at a constant rate r ("fixed"
// arrivals), a task that keeps up (each record is put within a few ms of its
// arrival, in batches smaller than a poll can hold), commits every
// offset.flush.interval.ms I, and a worker crash at a uniformly random moment
// x after the last commit.
//
// A caught-up task's poll waits for data with the commit deadline as its
// timeout, so commits are I apart. A crash x after the commit at offset c
// has let N ~ r x records be put (the in-flight insert still commits on the
// server). The successor comes back with a backlog of at least ~45 s of
// records (restart, then the dead member's session timeout), so its first
// fetch is capped by max.partition.fetch.bytes, F records of
// record_bytes + 18 bytes, and its first poll by max.poll.records B: the
// first replayed batch is [c, c + B' - 1], B' = min(B, F).
//   (a) exactlyOnce: the first replayed batch reaches the stored max
//       c + N - 1 only if N <= B'; otherwise it ends before the stored range:
//       State MISMATCH (stored AFTER_PROCESSING) or ERROR State (the crash
//       cut an insert short: stored BEFORE_PROCESSING). Record c + B' arrives
//       B'/r after record c, which arrives on average half a gap after the
//       commit, so P(stop) = (I - B'/r - 1/(2r))^+ / I.
//   (b) exactlyOnce off: the successor's empty in-memory state re-inserts all
//       N records. The original puts held a few records each, the replayed
//       ones B': no block id repeats, so ClickHouse's dedup window never
//       helps and E[duplicates per crash] = r I / 2. Left out: a crash soon
//       after a restart, before the successor's first commit, re-reads the
//       previous replay too.
#pragma once

#include <cstdint>

namespace pipesim::analytic {

struct CrashInputs {
  double records_per_s = 0;         // per partition
  double commit_interval_s = 60;    // offset.flush.interval.ms / 1000
  std::int64_t max_poll_records = 500;
  std::int64_t max_partition_fetch_bytes = 1048576;
  std::int64_t record_bytes = 1024;  // workload.record_bytes (+18 bytes of record overhead)
};

// (a) Probability that a worker crash stops an exactlyOnce connector
// (State MISMATCH or ERROR State) when the crash time is uniform between commits.
double stop_probability(const CrashInputs& in);

// (b) Expected duplicate rows per worker crash with exactlyOnce off.
double duplicates_per_crash(const CrashInputs& in);

// (c) Probability that a same-token redelivery finds its block id still in a
// table-wide window of `window_blocks` block ids, when other inserts arrive
// as a Poisson process of `inserts_per_s` and the redelivery comes `delay_s`
// after the original insert: fewer than `window_blocks` newer blocks.
double dedup_hit_probability(std::int64_t window_blocks, double inserts_per_s, double delay_s);

}  // namespace pipesim::analytic
