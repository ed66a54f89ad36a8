// The replicated table's insert path against a deterministic Keeper (1 ms per
// request, no queueing: no background, a huge capacity) and a fixed local
// write of 10 ms: an insert arriving at t answers at t + 10 ms + 2 requests
// = t + 12 ms, its commit multi leaving at t + 11 ms. Every expectation below
// is computed by hand from that and from ClickHouse's rules (retry backoff
// 100 ms doubling, quorum, session loss, crashes).
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "models/clickhouse/table.h"

namespace pipesim::clickhouse {
namespace {

using sim::Time;

// Records the outcomes the table sends to the client, and runs callbacks at
// given times (faults).
class Client final : public sim::Component {
 public:
  explicit Client(sim::Simulation& sim) : sim_(sim), id_(sim.add_component(this)) {}
  void handle(const sim::Event& e) override {
    if (e.type == kAnswer) {
      answers.emplace_back(sim_.now(), reply_status(e.arg));
    } else {
      actions_[e.arg]();
    }
  }
  void at(Time t, std::function<void()> action) {
    actions_.push_back(std::move(action));
    sim_.schedule(t, id_, kAction, static_cast<std::uint32_t>(actions_.size() - 1));
  }
  [[nodiscard]] ReplyAddress address() const { return ReplyAddress{id_, kAnswer}; }

  std::vector<std::pair<Time, QueryStatus>> answers;

 private:
  static constexpr std::uint32_t kAnswer = 1;
  static constexpr std::uint32_t kAction = 2;
  sim::Simulation& sim_;
  sim::ComponentId id_;
  std::vector<std::function<void()>> actions_;
};

ClickHouseOptions deterministic_table() {
  ClickHouseOptions o;
  o.replicas = 1;
  o.insert_base_latency = Time::millis(10);
  o.insert_latency_per_row = Time{0};
  o.insert_latency_sigma = 0;
  o.replication_fetch_latency = Time::millis(20);
  o.keeper_requests_per_fetch = 6;
  // The query's path is free here (no connection, round trip or overhead);
  // AnInsertPaysItsConnectionRoundTripAndOverhead charges it.
  o.network_round_trip = Time{0};
  o.tls_handshake_work = Time{0};
  o.query_overhead = Time{0};
  // Cleanup only at start-up and after a day, unless a test says otherwise.
  o.cleanup_delay_period = 86400;
  o.max_cleanup_delay_period = 86400;
  o.cleanup_delay_period_random_add = 0;
  return o;
}

keeper::KeeperOptions deterministic_keeper() {
  keeper::KeeperOptions k;
  k.latency = Time::millis(1);  // reads and writes alike
  k.commit_latency = Time{};
  k.capacity_ops_per_s = 100000000;  // service 0.01 us: rounds to 0
  k.background_ops_per_s = 0;
  return k;
}

struct Harness {
  explicit Harness(const ClickHouseOptions& options, std::uint64_t seed = 1,
                   const keeper::KeeperOptions& keeper_options = deterministic_keeper())
      : logs(1), ledger(1), keeper(keeper_options, seed) {
    ledger.emit(0, 100000);
    logs[0].append(0, 100000, ledger::CopyCause::ORIGINAL);
    table = std::make_unique<ReplicatedTable>(sim, options, logs, ledger, keeper, seed);
    client = std::make_unique<Client>(sim);
    table->start();
  }
  // An insert of offsets [min, max] with token [min, max] at time t, sent
  // as `path` says (default: a new HTTPS connection, clickhouse-java V1).
  void insert_at(Time t, std::int64_t min, std::int64_t max, Time timeout = Time::seconds(30),
                 ClientPath path = ClientPath{}) {
    client->at(t, [this, min, max, timeout, path] {
      table->begin_insert(InsertRequest{0, min, max, BlockId{0, min, max, 0},
                                        ledger::InsertTag::NORMAL, timeout, client->address(),
                                        ++token, {}, nullptr, path});
    });
  }
  std::int64_t duplicate_rows() const { return ledger.settle().duplicate_rows; }

  sim::Simulation sim;
  std::vector<broker::PartitionLog> logs;
  ledger::Ledger ledger;
  keeper::Keeper keeper;
  std::unique_ptr<ReplicatedTable> table;
  std::unique_ptr<Client> client;
  std::uint32_t token = 0;
};

using Answer = std::pair<Time, QueryStatus>;

TEST(ReplicatedTable, AnInsertWritesAPartAndTheSameTokenAgainIsADedupHit) {
  Harness h(deterministic_table());
  h.insert_at(Time{0}, 0, 499);
  h.insert_at(Time::seconds(1), 0, 499);
  h.sim.run_until(Time::seconds(10));
  ASSERT_EQ(h.client->answers.size(), 2u);
  EXPECT_EQ(h.client->answers[0], Answer(Time::millis(12), QueryStatus::OK));
  EXPECT_EQ(h.client->answers[1], Answer(Time::millis(1012), QueryStatus::DEDUPLICATED));
  EXPECT_EQ(h.table->counters().parts, 1);
  EXPECT_EQ(h.table->counters().dedup_hits, 1);
  EXPECT_EQ(h.duplicate_rows(), 0);
  // Two Keeper requests per insert (allocateBlockNumber, commit multi).
  EXPECT_EQ(h.keeper.ops(keeper::KeeperClient::INSERTS), 4);
}

TEST(ReplicatedTable, AnInsertsTwoKeeperWritesEachWaitForTheirRaftCommit) {
  // allocateBlockNumber and the commit multi are writes: with a 1.4 ms Raft
  // commit each, 12 ms + 2 x 1.4 ms; the dedup hit's two (the failed
  // multis) too.
  keeper::KeeperOptions k = deterministic_keeper();
  k.commit_latency = Time::micros(1400);
  Harness h(deterministic_table(), 1, k);
  h.insert_at(Time{0}, 0, 499);
  h.insert_at(Time::seconds(1), 0, 499);
  h.sim.run_until(Time::seconds(10));
  ASSERT_EQ(h.client->answers.size(), 2u);
  EXPECT_EQ(h.client->answers[0], Answer(Time::micros(14800), QueryStatus::OK));
  EXPECT_EQ(h.client->answers[1], Answer(Time::micros(1014800), QueryStatus::DEDUPLICATED));
}

TEST(ReplicatedTable, WithAWindowOfZeroTheSameTokenIsWrittenAgain) {
  ClickHouseOptions o = deterministic_table();
  o.replicated_deduplication_window = 0;
  Harness h(o);
  h.insert_at(Time{0}, 0, 499);
  h.insert_at(Time::seconds(1), 0, 499);
  h.sim.run_until(Time::seconds(10));
  EXPECT_EQ(h.table->counters().parts, 2);
  EXPECT_EQ(h.table->counters().dedup_hits, 0);
  EXPECT_EQ(h.duplicate_rows(), 500);
}

TEST(ReplicatedTable, AnIdPushedOutOfTheWindowSurvivesUntilTheCleanupThreadRuns) {
  // Window of 2 blocks; the cleanup threads run at 0 s and then every 300 s.
  ClickHouseOptions o = deterministic_table();
  o.replicated_deduplication_window = 2;
  o.cleanup_delay_period = 300;
  o.max_cleanup_delay_period = 300;
  Harness h(o);
  h.insert_at(Time::seconds(1), 0, 99);
  h.insert_at(Time::seconds(2), 100, 199);
  h.insert_at(Time::seconds(3), 200, 299);
  h.insert_at(Time::seconds(4), 0, 99);    // 3 ids for a window of 2, no cleanup yet: a hit
  h.insert_at(Time::seconds(301), 0, 99);  // the cleanup at 300 s removed it: written again
  h.sim.run_until(Time::seconds(310));
  ASSERT_EQ(h.client->answers.size(), 5u);
  EXPECT_EQ(h.client->answers[3].second, QueryStatus::DEDUPLICATED);
  EXPECT_EQ(h.client->answers[4].second, QueryStatus::OK);
  EXPECT_EQ(h.duplicate_rows(), 100);
  // One replica: the cleanup at 300 s removed exactly one id; the table holds
  // the ids of [100,199], [200,299] and the new [0,99].
  EXPECT_EQ(h.table->counters().block_ids_removed, 1);
  EXPECT_EQ(h.table->window().size(), 3u);
}

TEST(ReplicatedTable, AClientTimeoutDoesNotStopTheServersCommit) {
  // insert_timeout: the server is stuck until 40 s. The client gives up at
  // 30 s; the part is committed at 40 s + 12 ms all the same.
  Harness h(deterministic_table());
  h.table->stall(Time::seconds(40), 1.0);
  h.insert_at(Time{0}, 0, 499);
  h.insert_at(Time::seconds(50), 0, 499);  // the redelivery: a hit
  h.sim.run_until(Time::seconds(60));
  ASSERT_EQ(h.client->answers.size(), 2u);
  EXPECT_EQ(h.client->answers[0], Answer(Time::seconds(30), QueryStatus::CLIENT_TIMEOUT));
  EXPECT_EQ(h.client->answers[1], Answer(Time::millis(50012), QueryStatus::DEDUPLICATED));
  EXPECT_EQ(h.table->counters().parts, 1);
  // server_commits 0: nothing is written, the redelivery writes the part.
  Harness n(deterministic_table());
  n.table->stall(Time::seconds(40), 0.0);
  n.insert_at(Time{0}, 0, 499);
  n.insert_at(Time::seconds(50), 0, 499);
  n.sim.run_until(Time::seconds(60));
  EXPECT_EQ(n.client->answers[1].second, QueryStatus::OK);
  EXPECT_EQ(n.table->counters().parts, 1);
  EXPECT_EQ(n.duplicate_rows(), 0);
}

TEST(ReplicatedTable, AnInsertTimeoutOnOneReplicaStallsOnlyTheInsertsRoutedThere) {
  // 2 replicas, replica-0 stuck until 40 s: an insert at 0 routed there
  // times out at 30 s; routed to replica-1 it answers at 12 ms.
  bool saw_stalled = false, saw_healthy = false;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    ClickHouseOptions o = deterministic_table();
    o.replicas = 2;
    Harness h(o, seed);
    h.table->stall(Time::seconds(40), 1.0, 0);
    h.insert_at(Time{0}, 0, 499);
    h.sim.run_until(Time::seconds(60));
    ASSERT_EQ(h.client->answers.size(), 1u);
    const bool stalled =
        h.client->answers[0] == Answer(Time::seconds(30), QueryStatus::CLIENT_TIMEOUT);
    const bool healthy = h.client->answers[0] == Answer(Time::millis(12), QueryStatus::OK);
    EXPECT_TRUE(stalled || healthy) << "seed " << seed;
    EXPECT_EQ(h.table->counters().parts, 1);  // committed either way (at 40.012 s when stalled)
    saw_stalled = saw_stalled || stalled;
    saw_healthy = saw_healthy || healthy;
  }
  EXPECT_TRUE(saw_stalled);
  EXPECT_TRUE(saw_healthy);
}

TEST(ReplicatedTable, KeeperRetriesRideOutAShortLeaderElection) {
  // No leader from 5 ms to 2 s. The insert's requests go out at 10 ms and
  // fail at 11 ms; retries after 100, 200, 400, 800 ms fail (at 111/112,
  // 312/313, 713/714, 1514/1515 ms); the fifth, at 1515 + 1600 = 3115 ms,
  // finds the new leader: answered at 3117 ms.
  Harness h(deterministic_table());
  h.insert_at(Time{0}, 0, 499);
  h.client->at(Time::millis(5), [&h] { h.table->keeper_election(Time::seconds(2), 0.5); });
  h.sim.run_until(Time::seconds(10));
  ASSERT_EQ(h.client->answers.size(), 1u);
  EXPECT_EQ(h.client->answers[0], Answer(Time::millis(3117), QueryStatus::OK));
  EXPECT_EQ(h.table->counters().keeper_retries, 5);
  EXPECT_EQ(h.table->counters().parts, 1);
}

TEST(ReplicatedTable, OutOfKeeperRetriesTheInsertFailsWithKeeperException) {
  // insert_keeper_max_retries 2: attempts at 10, 111 and 312 ms all fail;
  // 999 after the last one, at 313 ms. Nothing was committed.
  ClickHouseOptions o = deterministic_table();
  o.insert_keeper_max_retries = 2;
  Harness h(o);
  h.insert_at(Time{0}, 0, 499);
  h.client->at(Time::millis(5), [&h] { h.table->keeper_election(Time::seconds(2), 0.5); });
  h.sim.run_until(Time::seconds(10));
  ASSERT_EQ(h.client->answers.size(), 1u);
  EXPECT_EQ(h.client->answers[0], Answer(Time::millis(313), QueryStatus::KEEPER_EXCEPTION));
  EXPECT_EQ(h.table->counters().parts, 0);
}

TEST(ReplicatedTable, AnElectionDuringTheCommitMultiGivesUnknownStatus) {
  // The commit multi leaves at 11 ms; the leader fails at 11.5 ms. Retries
  // (2) at 111.5 and 312.5 ms find no leader either: 319 at 313.5 ms. The
  // part stays if the old leader had committed the multi.
  for (const double applied : {1.0, 0.0}) {
    ClickHouseOptions o = deterministic_table();
    o.insert_keeper_max_retries = 2;
    Harness h(o);
    h.insert_at(Time{0}, 0, 499);
    h.client->at(Time::micros(11500),
                 [&h, applied] { h.table->keeper_election(Time::seconds(10), applied); });
    h.sim.run_until(Time::seconds(20));
    ASSERT_EQ(h.client->answers.size(), 1u);
    EXPECT_EQ(h.client->answers[0],
              Answer(Time::micros(313500), QueryStatus::UNKNOWN_STATUS_OF_INSERT));
    EXPECT_EQ(h.table->counters().parts, applied == 1.0 ? 1 : 0);
  }
  // With the default 20 retries and a 2 s election, the retry at 3115.5 ms
  // finds the part node (one request): success at 3116.5 ms.
  Harness d(deterministic_table());
  d.insert_at(Time{0}, 0, 499);
  d.client->at(Time::micros(11500), [&d] { d.table->keeper_election(Time::seconds(2), 1.0); });
  d.sim.run_until(Time::seconds(10));
  EXPECT_EQ(d.client->answers[0], Answer(Time::micros(3116500), QueryStatus::OK));
  EXPECT_EQ(d.table->counters().parts, 1);
}

TEST(ReplicatedTable, OnAReadOnlyReplicaTheCommitRetriesUntilTheSessionIsBack) {
  // Session lost at 5 ms until 1.005 s. The insert in flight finds the table
  // read-only when its requests would go out (10 ms) and retries at 110, 310,
  // 710 and 1510 ms: then writable, answered at 1512 ms. A new insert at
  // 0.5 s is taken as well (25.3 refuses at write() only a table without
  // metadata in Keeper): its part is written by 510 ms, its commit retries
  // at 610, 810 and 1210 ms and is answered at 1212 ms.
  Harness h(deterministic_table());
  h.insert_at(Time{0}, 0, 499);
  h.client->at(Time::millis(5), [&h] { h.table->lose_session(0, Time::millis(1005)); });
  h.insert_at(Time::millis(500), 500, 999);
  h.sim.run_until(Time::seconds(10));
  ASSERT_EQ(h.client->answers.size(), 2u);
  EXPECT_EQ(h.client->answers[0], Answer(Time::millis(1212), QueryStatus::OK));
  EXPECT_EQ(h.client->answers[1], Answer(Time::millis(1512), QueryStatus::OK));
  EXPECT_EQ(h.table->counters().parts, 2);
}

TEST(ReplicatedTable, ASessionLostLongerThanTheCommitRetriesFailsTheInsertWith242) {
  // Default retries: 20, backoff 100 ms doubling to 10 s: the 21 attempts of
  // an insert whose commit stage starts at 10 ms are at 10 ms + 0, 0.1, 0.3,
  // 0.7, 1.5, 3.1, 6.3, 12.7, then every 10 s to 142.7 s; the session comes
  // back only at 200 s, so it fails at 142.71 s with 242 and writes nothing.
  // The client (timeout 1000 s here) hears it then.
  Harness h(deterministic_table());
  h.client->at(Time::millis(5), [&h] { h.table->lose_session(0, Time::seconds(200)); });
  h.insert_at(Time{0}, 0, 499, Time::seconds(1000));
  h.sim.run_until(Time::seconds(300));
  ASSERT_EQ(h.client->answers.size(), 1u);
  EXPECT_EQ(h.client->answers[0], Answer(Time::millis(142710), QueryStatus::TABLE_IS_READ_ONLY));
  EXPECT_EQ(h.table->counters().parts, 0);
  EXPECT_EQ(h.table->counters().keeper_retries, 20);
}

TEST(ReplicatedTable, ACrashedServerRefusesAndADeadHostHangs) {
  // The path is free here: a refused connection is heard at once.
  Harness refuse(deterministic_table());
  refuse.client->at(Time::seconds(1),
                    [&refuse] { refuse.table->crash_replica(0, Time::seconds(100), false); });
  refuse.insert_at(Time::seconds(2), 0, 499);
  refuse.sim.run_until(Time::seconds(200));
  EXPECT_EQ(refuse.client->answers[0], Answer(Time::millis(2000), QueryStatus::NETWORK_ERROR));
  // A dead host: a new connection fails at connect_timeout (5 s), a kept
  // one waits for the socket timeout (30 s).
  Harness hang(deterministic_table());
  hang.client->at(Time::seconds(1),
                  [&hang] { hang.table->crash_replica(0, Time::seconds(100), true); });
  hang.insert_at(Time::seconds(2), 0, 499);
  ClientPath kept;
  kept.new_connection = false;
  hang.insert_at(Time::seconds(3), 500, 999, Time::seconds(30), kept);
  hang.sim.run_until(Time::seconds(200));
  ASSERT_EQ(hang.client->answers.size(), 2u);
  EXPECT_EQ(hang.client->answers[0], Answer(Time::seconds(7), QueryStatus::NETWORK_ERROR));
  EXPECT_EQ(hang.client->answers[1], Answer(Time::seconds(33), QueryStatus::CLIENT_TIMEOUT));
}

TEST(ReplicatedTable, AnInsertPaysItsConnectionRoundTripAndOverhead) {
  // A round trip of 2 ms, 4 ms of TLS handshake work, 1 ms of overhead. A new
  // HTTPS connection: TCP 2 ms + TLS 2 + 4 ms = 8 ms, the request at the
  // server at 9 ms, its part writing from 10 ms to 20 ms, two Keeper requests
  // (1 ms each): committed at 22 ms, the answer at the client at 23 ms. Over
  // a kept connection: at the server at 1 ms, writing from 2 ms, committed at
  // 14 ms, heard at 15 ms. Over plain HTTP: 2 ms of TCP, heard at 17 ms.
  ClickHouseOptions o = deterministic_table();
  o.network_round_trip = Time::millis(2);
  o.tls_handshake_work = Time::millis(4);
  o.query_overhead = Time::millis(1);
  Harness h(o);
  ClientPath kept;
  kept.new_connection = false;
  ClientPath http;
  http.tls = false;
  h.insert_at(Time{0}, 0, 499);
  h.insert_at(Time::seconds(1), 500, 999, Time::seconds(30), kept);
  h.insert_at(Time::seconds(2), 1000, 1499, Time::seconds(30), http);
  h.sim.run_until(Time::seconds(10));
  ASSERT_EQ(h.client->answers.size(), 3u);
  EXPECT_EQ(h.client->answers[0], Answer(Time::millis(23), QueryStatus::OK));
  EXPECT_EQ(h.client->answers[1], Answer(Time::millis(1015), QueryStatus::OK));
  EXPECT_EQ(h.client->answers[2], Answer(Time::millis(2017), QueryStatus::OK));
  // The server's time (arrival to answer): 1 + 10 + 2 = 13 ms each.
  EXPECT_NEAR(h.table->insert_latency_histogram().percentile(0.5), 13000, 13000 * 0.03);
  // A socket timeout of 10 ms counts from the request on the connection: the
  // new connection's insert is told CLIENT_TIMEOUT at 8 + 10 = 18 ms, and the
  // server commits it all the same.
  Harness t(o);
  t.insert_at(Time{0}, 0, 499, Time::millis(10));
  t.sim.run_until(Time::seconds(10));
  ASSERT_EQ(t.client->answers.size(), 1u);
  EXPECT_EQ(t.client->answers[0], Answer(Time::millis(18), QueryStatus::CLIENT_TIMEOUT));
  EXPECT_EQ(t.table->counters().parts, 1);
}

TEST(ReplicatedTable, ACrashBeforeTheCommitMultiLosesThePartOneAfterItKeepsIt) {
  // Crash at 5 ms (local write): nothing committed, the client sees 210 at
  // once (the path is free here).
  Harness before(deterministic_table());
  before.insert_at(Time{0}, 0, 499);
  before.client->at(Time::millis(5),
                    [&before] { before.table->crash_replica(0, Time::seconds(100), false); });
  before.sim.run_until(Time::seconds(200));
  EXPECT_EQ(before.client->answers[0], Answer(Time::millis(5), QueryStatus::NETWORK_ERROR));
  EXPECT_EQ(before.table->counters().parts, 0);
  // Crash at 11.5 ms: the multi left at 11 ms; Keeper applies it at 12 ms;
  // the client hears the reset at once.
  Harness after(deterministic_table());
  after.insert_at(Time{0}, 0, 499);
  after.client->at(Time::micros(11500),
                   [&after] { after.table->crash_replica(0, Time::seconds(100), false); });
  after.sim.run_until(Time::seconds(200));
  EXPECT_EQ(after.client->answers[0], Answer(Time::micros(11500), QueryStatus::NETWORK_ERROR));
  EXPECT_EQ(after.table->counters().parts, 1);
}

TEST(ReplicatedTable, AQuorumInsertAnswersOnceEnoughReplicasFetchedThePart) {
  // 3 replicas, insert_quorum 3: committed at 12 ms; each other replica has
  // it 6 requests (6 ms) + 20 ms later: answered at 38 ms. The precondition
  // adds 3 requests first: committed at 15 ms, answered at 41 ms.
  ClickHouseOptions o = deterministic_table();
  o.replicas = 3;
  o.insert_quorum = 3;
  Harness h(o);
  h.insert_at(Time{0}, 0, 499);
  h.sim.run_until(Time::seconds(10));
  EXPECT_EQ(h.client->answers[0], Answer(Time::millis(41), QueryStatus::OK));
}

TEST(ReplicatedTable, TheQuorumTimerStartsAgainAtEveryReplicaThatFetchesThePart) {
  // 3 replicas, insert_quorum 3, insert_quorum_timeout 30 s. Replica-1 is
  // down from 0.9 s to 25 s and replica-2 from 0.9 s to 50 s (both still
  // active for the precondition: their is_active nodes live for the 30 s
  // session timeout). An insert at 1 s that reaches replica-0 commits at
  // 1.015 s. Replica-1 fetches the part at 25 s + 26 ms, within 30 s of the
  // commit: the quorum node changes and the timer starts again; replica-2
  // fetches at 50.026 s, within 30 s of that: the quorum is reached at
  // 50.026 s, 49 s after the commit (a timer counted from the commit alone
  // would have given up at 31.015 s). With replica-2 back only at 60 s, 35 s
  // after replica-1's fetch, the wait gives up at 55.026 s: 319.
  for (const bool late : {false, true}) {
    bool reached_replica_0 = false;
    for (std::uint64_t seed = 1; seed <= 20 && !reached_replica_0; ++seed) {
      ClickHouseOptions o = deterministic_table();
      o.replicas = 3;
      o.insert_quorum = 3;
      o.insert_quorum_timeout = Time::seconds(30);
      Harness h(o, seed);
      h.client->at(Time::millis(900), [&h, late] {
        h.table->crash_replica(1, Time::seconds(25), false);
        h.table->crash_replica(2, late ? Time::seconds(60) : Time::seconds(50), false);
      });
      h.insert_at(Time::seconds(1), 0, 499, Time::seconds(1000));
      h.sim.run_until(Time::seconds(200));
      ASSERT_EQ(h.client->answers.size(), 1u);
      const auto& [at, status] = h.client->answers[0];
      if (status == QueryStatus::NETWORK_ERROR) continue;  // it reached a dead replica: refused
      reached_replica_0 = true;
      if (late) {
        EXPECT_EQ(status, QueryStatus::UNKNOWN_STATUS_OF_INSERT);
        EXPECT_EQ(at, Time::millis(55026));
      } else {
        EXPECT_EQ(status, QueryStatus::OK);
        EXPECT_EQ(at, Time::millis(50026));
      }
    }
    EXPECT_TRUE(reached_replica_0);
  }
}

TEST(ReplicatedTable, AQuorumWaitsForACrashedReplicaAndCountsItActiveUntilItsSessionTimesOut) {
  // 2 replicas, quorum 2; replica-1 crashes at 1 s until 100 s. An insert at
  // 2 s reaches replica-0 (then waits until replica-1 is back and has the
  // part: 100 s + 26 ms) or replica-1 (refused: 210 at once), at random.
  // With insert_quorum_timeout 50 s the wait gives up at 2.015 + 50 s: no
  // replica updated the quorum node meanwhile (319, ClickHouse 25.3).
  // At 40 s replica-1's is_active node is gone (1 s + 30 s session timeout):
  // replica-0 refuses with 285 after 3 requests.
  bool saw_quorum = false, saw_refused = false;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    for (const bool short_timeout : {false, true}) {
      ClickHouseOptions o = deterministic_table();
      o.replicas = 2;
      o.insert_quorum = 2;
      if (short_timeout) o.insert_quorum_timeout = Time::seconds(50);
      Harness h(o, seed);
      h.client->at(Time::seconds(1),
                   [&h] { h.table->crash_replica(1, Time::seconds(100), false); });
      h.insert_at(Time::seconds(2), 0, 499, Time::seconds(1000));
      h.insert_at(Time::seconds(40), 500, 999, Time::seconds(1000));
      h.sim.run_until(Time::seconds(200));
      ASSERT_EQ(h.client->answers.size(), 2u);
      for (const auto& [at, status] : h.client->answers) {
        const bool refused = status == QueryStatus::NETWORK_ERROR &&
                             (at == Time::millis(2000) || at == Time::millis(40000));
        const bool too_few =
            status == QueryStatus::TOO_FEW_LIVE_REPLICAS && at == Time::millis(40003);
        const bool quorum =
            short_timeout ? status == QueryStatus::UNKNOWN_STATUS_OF_INSERT && at == Time::millis(52015)
                          : status == QueryStatus::OK && at == Time::millis(100026);
        EXPECT_TRUE(refused || too_few || quorum)
            << "seed " << seed << ": " << static_cast<int>(status) << " at " << at.us << " us";
        saw_refused = saw_refused || refused;
        saw_quorum = saw_quorum || quorum;
      }
    }
  }
  EXPECT_TRUE(saw_quorum);
  EXPECT_TRUE(saw_refused);
}

}  // namespace
}  // namespace pipesim::clickhouse
