// The Keeper cases of configs/lab/ (keeper_*.json), each with its outcome
// computed by hand from docs/model.md §4.6, ClickHouse's Keeper client
// (ZooKeeperImpl), its retries (ZooKeeperRetriesControl) and its
// ReplicatedMergeTreeRestartingThread, and the sink's v1.3.9 logic.
//
// The common timeline of tests/clickhouse_lab_test.cpp: one partition read by
// one task, 50 records/s with "fixed" arrivals, batches of 500 records put at
// 10j + 9.985 s; an insert takes 15 ms at the server before its two Keeper
// requests (allocateBlockNumber, the commit); the faults hit batch 6,
// [3000, 3499], put at 69.985 s, whose Keeper requests go out at ~70.0 s; a
// put that throws a RetriableException is put again at the next offset
// commit, ~120.0 s; 5 minutes of workload, 15,000 records.
#include <gtest/gtest.h>

#include <cmath>

#include <string>

#include "models/pipeline/config.h"
#include "models/pipeline/scenario.h"
#include "tests/lab_run.h"

namespace pipesim::pipeline {
namespace {

// Keeper: capacity 1000 requests/s; the background is 1000 threads that send
// 500/s to it healthy, so each is away D = 1.998 s between requests (the
// machine-repairman throughput, solved by bisection by hand); constant
// service time; one replica; socket_timeout 10 s.
// keeper_backlog from 61 s to 111 s at 0.05 x capacity = 50/s: the threads
// fill the queue towards N - mu D = 1000 - 50 x 1.998 = 900.1 with time
// constant D. A thread's request waits (ahead + 1) / 50 + 0.1 ms: past the
// operation timeout (10 s) once 499.0 are ahead, D ln(900.1 / (900.1 - 499.0))
// = 1.615 s in, at 62.615 s; 10 s later, at 72.615 s, the ZooKeeper client
// finalizes the server's session (1 expired). Its threads leave the loop,
// and the 900.1 (1 - e^(-11.615/1.998)) = 897.4 requests they had queued
// stay: 17.95 s of the leader's work, until 90.563 s. The restarting thread
// wakes at once: its handshake waits behind them and times out at 82.615 s;
// the next is answered 7.948 s + 20 ms later (90.583 s), tryStartup's 12
// requests take 20.1 ms each: back at 90.8245 s. The threads come back to
// an empty queue and fill it again: the session ends again 11.615 s later, at
// 102.4395 s, and 897.4 requests are left for no one again. At 111 s the
// leader serves 1000/s: the 9.39 s of work left take 0.47 s. The handshake
// sent at 102.44 s was priced at the backlog's rate and times out at
// 112.44 s; the next takes 1.1 ms and the startup 13.2 ms: back at
// 112.4537 s. Read-only 18.2095 + 10.0142 s, two restart attempts.
// The insert of [3000, 3499] reaches Keeper at ~70.0 s behind 890 requests:
// its own request would time out at 80.0 s, but the session ends first, at
// 72.615 s, and the commit stage retries after 0.1, 0.2, 0.4 ... 6.4, 10 s:
// 72.715 .. 85.315 s read-only (242); at 95.315 s the session is back, but
// its request outwaits the second session's end (102.44 s); 112.44 s is
// still read-only (back at 112.4537 s); the tenth retry, at 122.44 s, commits
// (two requests of 1.1 ms): 52.46 s after it arrived. The sink's client
// timed out at ~80.0 s and puts the batch again at 120.004 s (the next commit
// tick), which commits at once: 10 commit retries in all.

TEST(KeeperLab, ABacklogPushesAnInsertPastTheClientTimeoutAndItsRedeliveryDuplicates) {
  // Deduplication off: the first delivery's late commit writes the rows again
  // (a first delivery committed after its redelivery counts as the
  // redelivery's duplicate).
  const Lab m("keeper_backlog_insert_timeout.json");
  EXPECT_EQ(m["insert_answers.client_timeout"], 1);
  EXPECT_EQ(m["insert_answers.table_is_read_only_242"], 0);
  EXPECT_EQ(m["redeliveries"], 1);
  EXPECT_EQ(m["insert_keeper_retries"], 10);
  EXPECT_EQ(m["keeper_sessions_expired"], 2);
  EXPECT_EQ(m["keeper_restart_attempts"], 2);
  EXPECT_NEAR(m["replica_read_only_s"], 18.2095 + 10.0142, 0.02);
  EXPECT_EQ(m["duplicate_rows"], 500);
  EXPECT_EQ(m["duplicate_rows_by_entry.insert_timeout_redelivery"], 500);
  // The queue holds 897.4 of the 1000 threads' requests when the session
  // ends, plus the insert's; none of its threads' after that.
  EXPECT_NEAR(m["keeper_peak_in_flight"], 897.4 + 1, 1.0);
  EXPECT_LE(m["keeper_peak_in_flight"], 1000);
  // 33 inserts: the slow one is the p99 (nearest rank 33 of 33): 52.46 s,
  // within the histogram's 3%.
  EXPECT_NEAR(m["insert_latency_p99_ms"], 52460, 0.03 * 52460);
  EXPECT_LT(m["insert_latency_p50_ms"], 100);
  EXPECT_EQ(m["pending_records"], 0);
}

TEST(KeeperLab, ABacklogTimeoutsRedeliveryIsAHitWithTheDefaultWindow) {
  // The same with the default window: the late first delivery finds the
  // redelivery's block id (its client is gone: nobody sees the answer).
  const Lab m("keeper_backlog_insert_timeout_deduplicated.json");
  EXPECT_EQ(m["insert_answers.client_timeout"], 1);
  EXPECT_EQ(m["dedup_hits"], 1);
  EXPECT_EQ(m["duplicate_rows"], 0);
}

TEST(KeeperLab, AHalfHourBacklogAtFivePercentHoldsTheThreadsNotMillions) {
  // configs/scenarios/keeper_backlog_half_hour.json: the production baseline
  // with Keeper at 5% of its capacity (2,000/s) from 12 h for 30 minutes.
  // The 1,728 background threads, away D = 0.172767 s (ClosedLoop.
  // AgreesWithMeanValueAnalysisUnderLoad), fill the queue to N - mu D =
  // 1382.5, plus 2,000/s x 1 ms on the way: 1384.5 in flight, 0.69 s a
  // request (the open-loop model said 14.4 million). Its inserts (2
  // requests) take ~1.4 s, far from the 30 s socket timeout: nothing is
  // redelivered. This pipeline's own requests come on top (Little's law):
  // the 8 tasks' inserts, one request each at a time (8); their parts, ~8 per
  // 1.4 s, fetched by 2 replicas with 6 requests of 0.69 s each (5.7/s x
  // 4.1 s x 2 = 47); merges, one per ~5 parts, 3 requests on each of 3
  // replicas (1.1/s x 2.1 s x 3 = 7): ~60.
  // Above that come the cleanup threads' bursts (Keeper.ABurstHolds...):
  // every ~30 s each replica removes its outdated parts (~1.3 per part
  // inserted since its last run: ~295 inserts/s x 30 s x 1.3 = ~11,500 at
  // full speed), one asyncTryMultiNoThrow each, sent at once, then the block
  // ids beyond the window (~9,000), one asyncTryRemove each; each burst is
  // all in flight at once (their reads are one MultiRead each). The first
  // iteration of each replica in the backlog still carries full speed's: at
  // 2,000/s its parts' removes hold the leader ~5.8 s behind the threads'
  // 0.69 s, its blocks' ~4.5 s behind the threads piled up meanwhile (~0.9
  // s): alone, neither outlasts the 10 s operation timeout; two replicas'
  // bursts that meet can (their phases are the seed's), and then every
  // server's session ends (the threads' requests queue behind both). Each
  // restarting thread gets a new session once the bursts have drained,
  // within seconds (ReplicatedMergeTreeRestartingThread wakes at once), and
  // then the inserts slow down (~22/s) and so do the bursts (~900): no
  // insert comes near its 30 s socket timeout. The dashboard's readings in
  // the backlog see the filled queue.
  const Lab m(lab_json("../scenarios/keeper_backlog_half_hour.json"));
  EXPECT_GE(m["keeper_peak_in_flight"], 1384.5 + 40);
  EXPECT_GE(m["keeper_in_flight_sampled_max"], 1384.5);
  // Not millions: the threads, this pipeline's own, and at most every
  // replica's parts' and blocks' removes of 40 s of inserts at the day's peak
  // insert rate (the production profile's peak is 4.32 x its mean).
  EXPECT_LE(m["keeper_peak_in_flight"], 1728 + 200 + 3 * 2.3 * 40 * 4.32 * m["inserts_per_s"]);
  EXPECT_LE(m["replica_read_only_s"], 10 * m["keeper_sessions_expired"]);
  EXPECT_EQ(m["redeliveries"], 0);
  EXPECT_EQ(m["insert_answers.client_timeout"], 0);
  EXPECT_EQ(m["faults_fired.keeper_backlog"], 1);
  // At 2% (800/s) a first burst of ~11,500 removes takes ~14 s: 10 s after
  // it was sent its server's session ends (ZooKeeperImpl finalizes the
  // session on its oldest pending request, whoever sent it), and so does
  // every other server's, whose threads' requests queued behind it: every
  // table goes read-only until its restarting thread gets a new session.
  nlohmann::json raw = lab_json("../scenarios/keeper_backlog_half_hour.json");
  apply_override(
      raw,
      R"(faults=[{"kind": "keeper_backlog", "at": "12h", "duration": "30m", "capacity_factor": 0.02}])");
  // How many removes the first burst in the backlog carries is what waited
  // since that replica's last iteration (0-40 s of parts: the phase of its
  // cleanup thread against the fault, the seed's): most seeds end sessions,
  // not every one (seed 1 here meets the backlog just after its iterations).
  int ended = 0;
  double severe_read_only = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const sim::Metrics m = run_scenario(load_config(raw), seed);
    if (test_support::metric(m, "keeper_sessions_expired") >= 3 &&
        test_support::metric(m, "replica_read_only_s") > 0) {
      ++ended;
    }
    severe_read_only += test_support::metric(m, "replica_read_only_s") / 4;
  }
  EXPECT_GE(ended, 3);
  // At 1% (400/s) the threads alone keep the leader's queue ~4 s deep and a
  // burst of a few thousand removes outlasts the timeout: sessions end again
  // after each restart, so the tables are read-only longer than at 2%, and
  // inserts caught in it outlive their client's 30 s socket timeout and are
  // redelivered. (How many sessions end is no measure of depth: at 2% a
  // restarted session may end again within seconds; at 1% its tryStartup
  // itself takes longer.)
  apply_override(
      raw,
      R"(faults=[{"kind": "keeper_backlog", "at": "12h", "duration": "30m", "capacity_factor": 0.01}])");
  const Lab worse(raw);
  EXPECT_GE(worse["keeper_sessions_expired"], 3);
  EXPECT_GT(worse["replica_read_only_s"], severe_read_only);
  EXPECT_GE(worse["insert_answers.client_timeout"], 1);
  EXPECT_GE(worse["redeliveries"], 1);
}

TEST(KeeperLab, ExactlyOnceAddsOneReadAndTwoWritesOfTwoRequestsPerBatch) {
  // 30 batches, no faults. exactlyOnce: batch 0 is NONE (write BEFORE,
  // insert, write AFTER), batches 1..29 AFTER_PROCESSING NEW (the same two
  // writes): 1 + 2 = 3 KeeperMap queries per batch (DECISION_NOTES.md row 4).
  // In Keeper a read by key is 1 request, a write 2 (exists + multi):
  // 5 requests per batch, 150 in all; the inserts' own requests (2 each) and
  // everything else are the same with exactlyOnce off (with 30 ids in a
  // window of 1000 a cleanup run removes nothing, so the ms the state
  // queries shift an insert by cannot change what the cleanup threads do).
  const nlohmann::json raw = lab_json("keeper_exactly_once_state_requests.json");
  const Lab on(raw);
  nlohmann::json off_raw = raw;
  off_raw["connector"]["exactlyOnce"] = false;
  const Lab off(off_raw);
  EXPECT_EQ(on["keeper_map_queries"], 90);
  EXPECT_EQ(on["keeper_ops_by_source.keeper_map"], 150);
  EXPECT_EQ(off["keeper_map_queries"], 0);
  EXPECT_EQ(off["keeper_ops_by_source.keeper_map"], 0);
  EXPECT_EQ(on["keeper_ops_by_source.inserts"], 60);
  EXPECT_EQ(off["keeper_ops_by_source.inserts"], 60);
  EXPECT_EQ(on["keeper_ops"] - off["keeper_ops"], 150);
  EXPECT_EQ(on["duplicate_rows"], 0);
  EXPECT_EQ(off["duplicate_rows"], 0);
}

// keeper_election at 69.9 s for 2 s: no leader until 71.9 s.

TEST(KeeperLab, TheServerRetriesAStateReadThroughAShortElection) {
  // exactlyOnce: the put at 69.985 s first reads its state: no leader. The
  // server retries (keeper_max_retries 10, 100 ms doubling) at +0.1, +0.3,
  // +0.7 and +1.5 s, still without a leader, and at +3.1 s = 73.085 s, past
  // 71.9 s: answered, within the client's 30 s. No failure, no redelivery:
  // 30 batches x 3 queries, 30 inserts.
  const Lab m("keeper_election_state_query_fails.json");
  EXPECT_EQ(m["keeper_map_failures"], 0);
  EXPECT_EQ(m["keeper_map_queries"], 90);
  EXPECT_EQ(m["redeliveries"], 0);
  EXPECT_EQ(m["inserts"], 30);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["clickhouse_rows"], 15000);
  // keeper_max_retries 0: the read fails at once with 999, retriable.
  // Redelivered at ~120.001 s: read, AFTER_PROCESSING NEW, write BEFORE,
  // insert, write AFTER. 30 batches x 3 + the failed read + 3.
  const Lab once("keeper_election_state_query_fails.json", {"clickhouse.keeper_max_retries=0"});
  EXPECT_EQ(once["keeper_map_failures"], 1);
  EXPECT_EQ(once["keeper_map_queries"], 94);
  EXPECT_EQ(once["redeliveries"], 1);
  EXPECT_EQ(once["inserts"], 31);  // the failed put inserted nothing
  EXPECT_EQ(once["duplicate_rows"], 0);
  EXPECT_EQ(once["clickhouse_rows"], 15000);
}

TEST(KeeperLab, AStateWriteIsRetriedRetryCountTimesAtOnceBeforeItsError) {
  // The election starts at 69.98505 s, between the put's state read (sent
  // at 69.985 s and answered by the old leader) and its BEFORE_PROCESSING
  // write (sent at ~69.9851 s). The server retries the write's requests
  // (insert_keeper_*: 100 ms doubling) and gets through at +3.1 s, past
  // 71.985 s: no failure, 90 queries.
  const Lab m("keeper_election_state_write_retried.json");
  EXPECT_EQ(m["keeper_map_failures"], 0);
  EXPECT_EQ(m["keeper_map_queries"], 90);
  EXPECT_EQ(m["redeliveries"], 0);
  EXPECT_EQ(m["duplicate_rows"], 0);
  // Without server retries (insert_keeper_max_retries 0) each attempt fails
  // at once: queryV1 sends the write again at once, 3 attempts in all
  // (retryCount 3), each a 999; then the RuntimeException is retriable and
  // the batch is redelivered at ~120 s. Against the failed-read lab (94
  // queries, 1 failure): the read succeeds and 3 writes fail instead of 1
  // read, so 94 - 1 + 4 = 97 queries.
  const Lab none("keeper_election_state_write_retried.json",
                 {"clickhouse.insert_keeper_max_retries=0"});
  EXPECT_EQ(none["keeper_map_failures"], 3);
  EXPECT_EQ(none["keeper_map_queries"], 97);
  EXPECT_EQ(none["redeliveries"], 1);
  EXPECT_EQ(none["duplicate_rows"], 0);
  EXPECT_EQ(none["clickhouse_rows"], 15000);
  // retryCount 1: a single attempt, as a read: 94 - 1 + 2 queries.
  const Lab once("keeper_election_state_write_retried.json",
                 {"clickhouse.insert_keeper_max_retries=0", "connector.retryCount=1"});
  EXPECT_EQ(once["keeper_map_failures"], 1);
  EXPECT_EQ(once["keeper_map_queries"], 95);
}

TEST(KeeperLab, InsertKeeperRetriesRideOutAnElection) {
  // exactlyOnce off: the insert's requests go out at ~70.000 s (t0, after
  // 15 ms of server work) and fail; retries after 100, 200, 400, 800 ms (at
  // ~t0 + 0.1, 0.3, 0.7, 1.5 s) find no leader; the fifth (~t0 + 3.1 s >
  // 71.9 s) commits. The client (30 s timeout) sees success after ~3.1 s.
  const Lab m("keeper_election_insert_retries.json");
  EXPECT_EQ(m["insert_keeper_retries"], 5);
  EXPECT_EQ(m["insert_answers.ok"], 30);
  EXPECT_EQ(m["insert_answers.keeper_exception_999"], 0);
  EXPECT_EQ(m["redeliveries"], 0);
  EXPECT_EQ(m["duplicate_rows"], 0);
  // The slowest insert, ~3.115 s, as the latency histogram reports it (a
  // bucket's midpoint, within ~3 % of the value).
  EXPECT_GE(m["insert_latency_p99_ms"], 3115 * 0.97);
  EXPECT_LE(m["insert_latency_p99_ms"], 3115 * 1.03);
}

TEST(KeeperLab, WithoutInsertKeeperRetriesAnElectionFailsTheInsertWith999) {
  // insert_keeper_max_retries 0: 999 at ~70.000 s, nothing committed;
  // the redelivery at ~120.001 s writes the batch once.
  const Lab m("keeper_election_insert_without_retries.json");
  EXPECT_EQ(m["insert_answers.keeper_exception_999"], 1);
  EXPECT_EQ(m["redeliveries"], 1);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["clickhouse_rows"], 15000);
}

TEST(KeeperLab, ALostSessionHoldsTheInsertInItsCommitRetriesAndItCommitsLate) {
  // One replica; its session is lost from 65 s to 115 s. ClickHouse 25.3
  // takes the insert at 69.985 s (write() refuses only a table without
  // metadata in Keeper) and its commit stage retries TABLE_IS_READ_ONLY
  // (ZooKeeperRetriesControl: 100 ms doubling to 10 s): attempts at 70.0 s +
  // 0.1, 0.3, 0.7, 1.5, 3.1, 6.3, 12.7, 22.7, 32.7, 42.7, 52.7. The client
  // gives up at 99.985 s (socket_timeout 30 s): no 242, a client timeout.
  // The redelivery at ~120.001 s finds the table writable and commits the
  // block; the first insert, back in session at its 11th retry (122.7 s),
  // commits late and is a dedup hit.
  const Lab m("keeper_session_loss_read_only.json");
  EXPECT_EQ(m["insert_answers.table_is_read_only_242"], 0);
  EXPECT_EQ(m["insert_answers.client_timeout"], 1);
  EXPECT_EQ(m["insert_keeper_retries"], 11);
  EXPECT_EQ(m["redeliveries"], 1);
  EXPECT_EQ(m["dedup_hits"], 1);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["clickhouse_rows"], 15000);
  // Without block ids the late commit is a second copy of the redelivered
  // batch: the exposure behind redelivery duplicates during Keeper trouble.
  const Lab plain("keeper_session_loss_read_only.json", {"clickhouse.replicated_deduplication_window=0"});
  EXPECT_EQ(plain["duplicate_rows"], 500);
  EXPECT_EQ(plain["duplicate_rows_by_entry.insert_timeout_redelivery"], 500);
}

TEST(KeeperLab, ASessionLostLongerThanTheCommitRetriesFailsTheOrphansAndTheNextCommitsLate) {
  // The session is lost from 65 s to 265 s, longer than an insert's 20
  // retries (142.7 s). The insert at 69.985 s times out on the client at
  // 99.985 s; on the server it retries until 212.7 s and fails with 242,
  // which nobody hears. The redelivery at ~120 s does the same (retries
  // from 120.015 s to 262.715 s, 242). The next one, at ~210 s, starts
  // retrying at 210.015 s; its 12th retry, at 272.715 s, finds the session
  // back and commits the block; its client had given up at ~240 s. The one
  // at ~300 s is a dedup hit. Keeper retries: 20 + 20 + 12.
  const Lab m("keeper_session_loss_longer_than_the_commit_retries.json");
  EXPECT_EQ(m["insert_answers.table_is_read_only_242"], 0);
  EXPECT_EQ(m["insert_answers.client_timeout"], 3);
  EXPECT_EQ(m["redeliveries"], 3);
  EXPECT_EQ(m["insert_keeper_retries"], 20 + 20 + 12);
  EXPECT_EQ(m["dedup_hits"], 1);
  EXPECT_EQ(m["insert_answers.deduplicated"], 1);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["clickhouse_rows"], 15000);
  EXPECT_EQ(m["pending_records"], 0);
}

// keeper_stall at 69.9 s: Keeper answers nothing (a long fsync, a GC pause).
// Keeper latency 0.1 ms, constant service time, the default capacity
// (40,000/s) and background (1,728 threads sending 10,000/s, away ~0.17 s);
// 3 replicas. While stalled the threads come back to the leader and wait
// there: after 10 s all 1,728 of them (1 - e^(-10/0.17) of them). The
// insert's first Keeper request goes out at ~70.0 s into the stall.
// At 79.9 s the oldest requests of every server's session (its background
// threads', sent before the stall) pass operation_timeout_ms (10 s):
// ZooKeeperImpl's receive thread finalizes all three sessions, every table
// read-only, and the insert's request fails with them. Each server's
// restarting thread, woken at once, sends a handshake (a new session).

TEST(KeeperLab, AFifteenSecondStallExpiresEverySessionAndTheInsertWaitsWithinItsTimeout) {
  // Stall until 84.9 s. The handshakes at 79.9 s wait 5.0 s for its end,
  // then behind the 1,728 queued requests: answered at 84.9 + 0.0001 +
  // 1,729 / 40,000 = 84.9433 s; tryStartup's 12 requests, with the queue
  // nearly drained, take ~7 ms: each replica read-only 79.9 .. ~84.95 s,
  // 3 x 5.05 = 15.15 replica-seconds, one restart attempt each. The insert's
  // commit stage retries after 0.1, 0.2, 0.4, 0.8, 1.6 and 3.2 s: at 80.0,
  // 80.2, 80.6, 81.4 and 83.0 s its table is still read-only, at 86.2 s it
  // commits (6 retries), 16.2 s after the put: inside the 30 s socket
  // timeout, so nothing is redelivered or written twice.
  const Lab m("keeper_stall_sessions_expire_inserts_wait.json");
  EXPECT_EQ(m["keeper_sessions_expired"], 3);
  EXPECT_EQ(m["keeper_restart_attempts"], 3);
  EXPECT_NEAR(m["replica_read_only_s"], 3 * 5.05, 0.03);
  EXPECT_EQ(m["insert_keeper_retries"], 6);
  EXPECT_NEAR(m["insert_latency_p99_ms"], 16215, 0.03 * 16215);
  EXPECT_EQ(m["insert_answers.client_timeout"], 0);
  EXPECT_EQ(m["redeliveries"], 0);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["clickhouse_rows"], 15000);
  // Every thread waits at the stalled leader: in flight, all of them.
  EXPECT_GE(m["keeper_peak_in_flight"], 1728 - 1);
  EXPECT_LE(m["keeper_peak_in_flight"], 1728 + 5);
}

TEST(KeeperLab, AFortySecondStallOutlastsTheSocketTimeoutAndTheRedeliveryIsAHit) {
  // Stall until 109.9 s. The handshakes get no answer within 10 s at 79.9,
  // 89.9 and 99.9 s (the last waits 10 s for the stall's end and then the
  // queue: just past the timeout); the fourth, at 109.9 s, is answered 43 ms
  // later behind the queued threads: read-only 79.9 .. ~109.95 s, 3 x 30.05
  // replica-seconds, one restart attempt each (the tries of one attempt go
  // to the next node, 3 nodes x 3 rounds). The insert's commit stage
  // retries at 80.0, 80.2, 80.6, 81.4, 83.0, 86.2, 92.6, 102.6 s (read-only)
  // and commits at 112.6 s (9 retries), 42.6 s after the put. Its client
  // gave up at 99.985 s (30 s): the batch is put again at the next offset
  // commit (~120.0 s) with the same token and finds the block id: a dedup
  // hit (the default window), nothing twice.
  const Lab m("keeper_stall_inserts_outlive_the_socket_timeout.json");
  EXPECT_EQ(m["keeper_sessions_expired"], 3);
  EXPECT_EQ(m["keeper_restart_attempts"], 3);
  EXPECT_NEAR(m["replica_read_only_s"], 3 * 30.05, 0.03);
  EXPECT_EQ(m["insert_keeper_retries"], 9);
  EXPECT_NEAR(m["insert_latency_p99_ms"], 42615, 0.03 * 42615);
  EXPECT_EQ(m["insert_answers.client_timeout"], 1);
  EXPECT_EQ(m["redeliveries"], 1);
  EXPECT_EQ(m["dedup_hits"], 1);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["clickhouse_rows"], 15000);
}

// The commit multi in flight when Keeper stalls: Keeper 2 s away (each
// request 2 s + 1/40,000 s of service, nothing else queued: no background),
// the socket timeout 120 s. The insert of [3000, 3499] sends
// allocateBlockNumber at 70.0 s (answered 72.000025 s) and its commit multi
// at 72.000025 s; Keeper stalls from 73 s to 88 s. At 83.0 s (the stall +
// operation_timeout_ms) every session ends; the multi stays queued and is
// applied 15 s late, at 89.00005 s. The three restarting threads' handshakes
// (sent at 83.0 s) are answered at 88 + 2.000025 = 90.000025 s and
// tryStartup's 12 requests take 24.0003 s: read-only 83.0 .. 114.000325 s,
// 3 x 31.0003 replica-seconds. The insert's commit stage retries 242 at
// 83.1, 83.3, 83.7, 84.5, 86.1, 89.3, 95.7, 105.7 s and at 115.7 s (9
// retries) looks for its part node: there (the multi of 89.00005 s), so one
// request and the answer is OK at 117.700025 s, 47.715 s after the put:
// nothing redelivered. Had the multi died with its session, the retry would
// have sent 3 requests (the look, a new block number, a new multi) and
// answered 4 s later.
TEST(KeeperLab, ACommitMultiThatTimedOutIsAppliedAndTheRetryFindsItsPart) {
  const Lab m("keeper_stall_commit_multi_applies_late.json");
  EXPECT_EQ(m["keeper_sessions_expired"], 3);
  EXPECT_EQ(m["keeper_restart_attempts"], 3);
  EXPECT_NEAR(m["replica_read_only_s"], 3 * 31.0003, 0.01);
  EXPECT_EQ(m["insert_keeper_retries"], 9);
  // Every other insert sends its 2 requests; the retried one 2 + 1.
  EXPECT_EQ(m["keeper_ops_by_source.inserts"], 2 * m["inserts"] + 1);
  EXPECT_NEAR(m["insert_latency_p99_ms"], 47715, 0.03 * 47715);
  EXPECT_EQ(m["insert_answers.client_timeout"], 0);
  EXPECT_EQ(m["redeliveries"], 0);
  EXPECT_EQ(m["dedup_hits"], 0);
  EXPECT_EQ(m["duplicate_rows"], 0);
  EXPECT_EQ(m["clickhouse_rows"], 15000);
}

// A dashboard reads Keeper's in-flight requests every 15 s (keeper.sample_interval):
// 40 readings over the lab's 10 minutes. Calm, every reading is the same
// (the background's ~1.33 in flight; this pipeline's few requests a second
// are never in flight at a multiple of 15 s). The 15 s stall from 69.9 s
// holds every thread at the leader at the 75 s reading, 5.1 s into it
// (1,728 x (1 - e^(-5.1 / 0.17)), plus the insert's request waiting there);
// by 90 s the queue has drained (1,728 requests at 40,000/s: 43 ms), so the
// mean of the readings is (that one + 39 calm ones) / 40. A 4 s stall
// between two readings (61 .. 65 s) shows on no reading at all, while the
// true peak is every thread.
// The cleanup thread's bursts (ReplicatedMergeTreeCleanupThread, 25.x).
// iterate() first removes the outdated parts: removePartsFromZooKeeper reads
// whether each one's znode exists (ZooKeeper::exists over them all: against
// ClickHouse Keeper one MultiRead request, its sub-reads at 774,000/s) and
// then sends an asyncTryMultiNoThrow per part, all at once, and awaits them.
// Then clearOldBlocks: one MultiRead of the block ids not yet cached, and an
// asyncTryRemove per block beyond the window, all at once. One replica, the
// window 100 blocks, the thread every cleanup_delay_period (30 s, no random
// add, no adaptation); production Keeper (40,000/s, 1,728 threads away
// D = 0.172767 s; a read's round trip 0.3 ms, a write's 1.7 ms with its
// commit, the threads' 0.3 + 1.4 / 3 ms) with a constant service time. The sink
// inserts at a steady r a second for the 10 minutes of traffic (the run's
// own figure: its batching sets it), a part each, and each part makes 1.3
// outdated ones (its merges). An iteration lasts ~0.6 s (the parts'
// removes 1.3 k / 40,000 s, the blocks' k / 40,000 s, the reads and round
// trips), so it finds the k = r x 30.6 s blocks and parts inserted since
// the last one began, and P = 1.3 k outdated parts. The parts' MultiRead
// holds the leader P / 774,000 s; the threads pile up behind it
// (N (1 - e^(-hold / D))) and drain for the 0.3 ms its answer takes; then the
// P removes go out: all in flight at once beside that queue, the day's peak
// (the block ids' removes later are fewer).
TEST(KeeperLab, TheCleanupThreadsRemovesAreInFlightAllAtOnceBesideTheThreadsItsReadsHeld) {
  const Lab m("keeper_cleanup_burst_in_flight.json");
  const double r = m["inserts"] / 600;
  const double k = r * 30.6;
  const double parts = 1.3 * k;
  constexpr double kAway = 0.172767;
  const double held = 1728 * (1 - std::exp(-parts / 774000 / kAway));
  const double limit = 1728 - 40000 * kAway;
  const double queued = limit + (held - limit) * std::exp(-0.0003 / kAway);
  const double peak = parts + (1.0 / 3 + queued) + (1728 - queued) * (0.0003 + 0.0014 / 3) / kAway;
  EXPECT_GT(peak, 1728 + 5000);  // far above what the threads alone could hold
  EXPECT_NEAR(m["keeper_peak_in_flight"], peak, 0.02 * peak);
  // One server: its ZooKeeperRequest is everything in flight (no fault's extra client).
  EXPECT_NEAR(m["zookeeper_request_peak"], m["keeper_peak_in_flight"], 1e-6 * peak);
  EXPECT_NEAR(m["zookeeper_request_mean"], m["keeper_mean_in_flight"], 1e-6 * peak);
  EXPECT_NEAR(m["zookeeper_request_sampled_max"], m["keeper_in_flight_sampled_max"], 1e-9 * peak);
  // Every block id beyond the window's 100 was removed: the last iteration
  // runs in the minute of drain after the last insert.
  EXPECT_EQ(m["block_ids_removed"], m["inserts"] - 100);
  EXPECT_EQ(m["keeper_sessions_expired"], 0);
}

TEST(KeeperLab, ADashboardReadsInFlightEveryFifteenSecondsAndMissesWhatFallsBetween) {
  const Lab calm("keeper_stall_sessions_expire_inserts_wait.json", {"faults=[]"});
  EXPECT_NEAR(calm["keeper_in_flight_sampled_max"], calm["keeper_in_flight_sampled_mean"], 1e-9);
  EXPECT_GT(calm["keeper_in_flight_sampled_mean"], 1.0);
  EXPECT_LT(calm["keeper_in_flight_sampled_mean"], 1.5);

  const Lab stall("keeper_stall_sessions_expire_inserts_wait.json");
  EXPECT_GE(stall["keeper_in_flight_sampled_max"], 1728);
  EXPECT_LE(stall["keeper_in_flight_sampled_max"], 1728 + 2);
  EXPECT_NEAR(stall["keeper_in_flight_sampled_mean"],
              (stall["keeper_in_flight_sampled_max"] + 39 * calm["keeper_in_flight_sampled_mean"]) / 40, 0.01);
  // Nearest rank 40 of 40: the stalled reading.
  EXPECT_EQ(stall["keeper_in_flight_sampled_p99"], stall["keeper_in_flight_sampled_max"]);
  EXPECT_GE(stall["keeper_peak_in_flight"], stall["keeper_in_flight_sampled_max"]);

  const Lab between("keeper_stall_sessions_expire_inserts_wait.json",
                    {R"(faults=[{"kind": "keeper_stall", "at": "61s", "duration": "4s"}])"});
  EXPECT_GE(between["keeper_peak_in_flight"], 1728 - 1);
  EXPECT_EQ(between["keeper_in_flight_sampled_max"], calm["keeper_in_flight_sampled_max"]);
  EXPECT_EQ(between["keeper_in_flight_sampled_mean"], calm["keeper_in_flight_sampled_mean"]);
}

}  // namespace
}  // namespace pipesim::pipeline
