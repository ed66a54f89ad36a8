// Closed forms for steady-state questions, to check the simulator against
// something independent of it (VALIDATION.md). They assume one partition per
// task, records arriving in quanta of `tick` (workload.tick) at a constant
// rate, a task that keeps up (a quantum's batches are inserted well within
// the tick), commits every offset.flush.interval.ms, and a worker crash at a
// uniformly random moment between two commits.
//
// After a commit at offset c, quanta of q records arrive every tick, the
// first one phi seconds after the commit; each is put in ceil(q / B) batches
// of at most B = max.poll.records. The commit clock is independent of the
// quanta (each restart resets it), so phi is uniform on [0, tick). A crash x
// seconds after the commit has let m = #{k >= 0 : phi + k tick <= x} quanta
// be put (the in-flight insert still commits on the server): N = m q records.
//   (a) exactlyOnce: the successor replays from c in batches of B. Its
//       first batch [c, c+B-1] reaches the stored max c+N-1 only if N <= B;
//       otherwise it lies before the stored range: State MISMATCH (stored
//       AFTER_PROCESSING) or ERROR State (crash during an insert, stored
//       BEFORE_PROCESSING). So P(stop) = P(N > B).
//   (b) exactlyOnce off: the successor's empty in-memory state re-inserts
//       all N records, each batch with the token of its offset range. When
//       the replay's batches have the original boundaries (each quantum is a
//       whole number of full batches: q = j B) and the oldest replayed block
//       is still in the table-wide dedup window (fewer than W blocks since
//       the commit: x <= x0 = W B / rate), ClickHouse deduplicates them all;
//       otherwise every replayed block misses, and each miss pushes the next
//       one out of the window (FIFO), so all N are duplicated:
//       E[duplicates per crash] = rate (I^2 - x0^2) / (2 I), x0 = 0 when the
//       boundaries differ. Left out: a crash soon after a restart, before the
//       successor's first commit, re-reads the previous replay too.
#pragma once

#include <cstdint>

namespace pipesim::analytic {

struct CrashInputs {
  double records_per_s = 0;         // per partition
  double tick_s = 1;                // arrival quantum
  double commit_interval_s = 60;    // offset.flush.interval.ms / 1000
  std::int64_t max_poll_records = 500;
  // Time from a quantum's arrival until its first insert has started and the
  // next batch could begin (fetch + KeeperMap read/write + insert): with
  // q > B the second batch of the first quantum is what makes N > B.
  double first_batch_s = 0.03;
  // replicated_deduplication_window (blocks of this table).
  std::int64_t dedup_window_blocks = 1000;
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
