// A Replicated(Replacing)MergeTree table on its replicas (docs/model.md §4.5), as
// ClickHouse 25.3's ReplicatedMergeTreeSink commits an insert:
//  1. the insert reaches one replica (the client's load balancer picks one at
//     random); a replica that is down refuses it (or hangs, for a dead host),
//     a replica whose Keeper session is lost takes the insert and its commit
//     stage retries (step 3) until the session is back or the retries run
//     out, and with insert_quorum the replica
//     first counts the active replicas (checkQuorumPrecondition: 285);
//  2. it writes the part locally (base + per-row cost);
//  3. it commits through Keeper: allocateBlockNumber (a multi that also
//     checks the block id's node) and the commit multi that creates the part
//     node, the log entry and the block id node at once. If the block id node
//     exists the insert is a dedup hit and answers success without a part.
//     A failed Keeper request (no leader, operation timeout, session expired,
//     table read-only) is retried insert_keeper_max_retries times with a
//     doubling backoff; when they run out the insert fails with 999, 242, or
//     319 UNKNOWN_STATUS_OF_INSERT if the commit multi's fate is unknown (the
//     part then stays if Keeper has it);
//  4. the other replicas pull the log and fetch the part; with insert_quorum
//     the insert answers once insert_quorum replicas have it (or fails with
//     319 when insert_quorum_timeout passes with no replica fetching it: the
//     timer restarts at every fetch; the part stays).
// Each replica's cleanup thread removes old block ids from time to time
// (CleanupSchedule, DedupWindow::clear_old_blocks).
//
// The client learns the outcome by an event sent to its ReplyAddress: the
// answer, or CLIENT_TIMEOUT at its deadline if the answer would come later.
// The server's work goes on whatever the client does.
//
// Invariants: a slot's events carry its version, so events planned before a
// fault changed the plan are ignored; the client of an insert is told exactly
// once, never after its deadline.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "models/broker/partition_log.h"
#include "models/clickhouse/cleanup_schedule.h"
#include "models/clickhouse/clickhouse_options.h"
#include "models/clickhouse/dedup_window.h"
#include "models/clickhouse/merge_tree_parts.h"
#include "models/clickhouse/query_path.h"
#include "models/clickhouse/query_status.h"
#include "models/clickhouse/table_counters.h"
#include "models/clickhouse/table_requests.h"
#include "models/keeper/keeper.h"
#include "models/ledger/ledger.h"
#include "sim/engine/histogram.h"
#include "sim/engine/random.h"
#include "sim/engine/simulation.h"

namespace pipesim::clickhouse {

class ReplicatedTable final : public sim::Component {
 public:
  ReplicatedTable(sim::Simulation& sim, const ClickHouseOptions& options,
                  const std::vector<broker::PartitionLog>& logs, ledger::Ledger& ledger,
                  keeper::Keeper& keeper, std::uint64_t seed);

  // Starts the replicas' cleanup threads.
  void start();

  // Starts an insert at now(); the outcome goes to request.reply.
  void begin_insert(const InsertRequest& request);

  // A healthy stretch advanced in aggregate (a declared shortcut): `count`
  // inserts that each committed a new part (a new token: no dedup hit), the
  // last one now, their server times spread as `latency_us` (quantiles);
  // `keeper_map_queries` of the sink's state queries with them.
  void add_aggregate_inserts(std::int64_t count, const std::array<std::int64_t, 1000>& latency_us,
                             std::int64_t keeper_map_queries);
  // ... and their steady rates from now on, per second: Keeper's load.
  // `rows_per_insert` sizes their parts.
  void set_aggregate_rate(double inserts_per_s, double keeper_map_requests_per_s,
                          double rows_per_insert = 1.0);
  void set_aggregate_source(AggregateInserts* source) { aggregate_ = source; }
  // An insert's local work (parse, sort, write the part) for `rows` rows
  // and the lognormal load factor exp(sigma z) (z standard normal).
  [[nodiscard]] static sim::Time local_work(const ClickHouseOptions& options, std::int64_t rows, double z);
  // No replica down, stalled or read-only, Keeper available: nothing unfolds.
  [[nodiscard]] bool healthy() const;
  // The share of time the cleanup threads' bursts hold Keeper's leader (each
  // replica's last iteration): aggregated stretches price their holds with it.
  [[nodiscard]] double cleanup_held_share() const;
  [[nodiscard]] bool quorum() const { return quorum_ > 0; }
  // Of a fetching replica's keeper_requests_per_fetch, the writes.
  [[nodiscard]] std::int64_t keeper_writes_of_a_fetch() const;
  // The table partition rows inserted at `at` go to (the FINAL fold's unit).
  [[nodiscard]] std::uint32_t partition_at(sim::Time at) const { return table_partition(at); }
  // The time an insert waits for its quorum once committed (0 without one).
  [[nodiscard]] sim::Time quorum_wait();
  // A query that needs only a live server (a ping, SELECT version(), SHOW
  // TABLES, CREATE TABLE IF NOT EXISTS of an existing table), via one
  // replica, sent as `path` says (the helper client's pings and queries open
  // a connection each): a dead server process refuses the connection, a dead
  // host lets a new connection fail at connect_timeout (a kept one waits
  // `timeout`).
  QueryAnswer server_query(sim::Time timeout, const ClientPath& path);
  [[nodiscard]] bool any_replica_down() const;
  // For the KeeperMap table on the same servers (keeper_map_table.h).
  [[nodiscard]] bool replica_down(int replica) const {
    return replicas_[static_cast<std::size_t>(replica)].down;
  }
  [[nodiscard]] bool replica_hangs(int replica) const {
    return replicas_[static_cast<std::size_t>(replica)].hang;
  }
  [[nodiscard]] int replica_count() const { return static_cast<int>(replicas_.size()); }
  // A request of another table of `replica` passed operation_timeout_ms at
  // `at`: the server's ZooKeeper client finalizes its session then.
  void operation_timeout(int replica, sim::Time at);
  // What a query costs besides the server's storage work (query_path.h).
  [[nodiscard]] const QueryCosts& costs() const { return costs_; }

  void handle(const sim::Event& event) override;

  // insert_timeout fault: inserts that arrive before `until` hang until then
  // (the server is stuck), and then commit with probability `server_commits`.
  // `replica` >= 0: only inserts routed to that replica.
  void stall(sim::Time until, double server_commits, int replica = -1);
  // replica_crash: the server process is down until `until`; a `hang`ing host
  // never answers (the client waits for its timeout), else connections are refused.
  void crash_replica(int replica, sim::Time until, bool hang);
  // keeper_session_loss: the replica's Keeper session expired; its tables are
  // read-only until `until`.
  void lose_session(int replica, sim::Time until);
  // keeper_election: Keeper has no leader until `until`. A commit multi in
  // flight was applied with probability `commit_applied`.
  void keeper_election(sim::Time until, double commit_applied);
  // Keeper's regime changed (a backlog began or ended): when the threads'
  // requests will outwait operation_timeout_ms and end every session.
  // `pending_stand`: the change serves nothing queued sooner (a session
  // ended or came back), so an earlier deadline still under way stands.
  void watch_keeper(bool pending_stand = false);
  // keeper_stall: Keeper answers nothing until `until` (table_sessions.cpp).
  void keeper_stall(sim::Time until);
  // Replica-seconds read-only (a lost Keeper session) up to `now`.
  [[nodiscard]] double read_only_seconds(sim::Time now) const;

  [[nodiscard]] const TableCounters& counters() const { return counters_; }
  // Server answer time of inserts (arrival to answer), microseconds.
  [[nodiscard]] const sim::Histogram& insert_latency_histogram() {
    flush_aggregate_latencies();
    return insert_latency_us_;
  }
  // Time from a part's commit until another replica has it, microseconds.
  [[nodiscard]] const sim::Histogram& replication_lag_histogram() const {
    return replication_lag_us_;
  }
  [[nodiscard]] const DedupWindow& window() const { return window_; }
  // Most active parts of the current partition so far, and merges assigned.
  [[nodiscard]] std::int64_t active_parts_peak() const { return parts_.peak(); }
  [[nodiscard]] std::int64_t active_parts() const { return parts_.active(); }
  [[nodiscard]] std::int64_t merges() const {
    return parts_.merges() + static_cast<std::int64_t>(std::llround(steady_merges_));
  }

  static std::int64_t default_window_blocks(const std::string& version);
  static std::int64_t default_window_seconds(const std::string& version);

 private:
  enum class Phase : std::uint8_t { KEEPER, RETRY, QUORUM, FINISH };

  struct Insert {
    InsertRequest request;
    std::vector<broker::IdPiece> pieces;
    // Where request.also starts in pieces (pieces before it are of
    // request.partition), and each later range's first piece.
    std::vector<std::size_t> also_starts;
    std::vector<sim::Time> fetched_at;  // quorum: when each replica has the part
    int replica = 0;
    std::uint16_t version = 0;
    bool in_use = false;
    Phase phase = Phase::KEEPER;
    bool client_done = false;     // the client has its outcome
    bool orphan = false;          // the writer died after sending the commit multi
    bool server_commits = true;   // insert_timeout fault outcome
    bool commit_unknown = false;  // a commit multi was in flight when Keeper failed
    bool committed = false;       // the commit multi was applied (part or dedup hit)
    QueryStatus commit_result = QueryStatus::OK;
    QueryStatus final_status = QueryStatus::OK;
    sim::Time arrived{};   // the request reaches the server
    sim::Time deadline{};  // the client's socket timeout
    sim::Time back{};      // the answer's way back to the client
    std::int64_t rows = 0;
    sim::Time keeper_start{};    // the Keeper requests go out
    sim::Time commit_sent_at{};  // the commit multi goes out
    sim::Time commit_at{};       // ... and is applied
    // A commit multi whose answer never came (an operation timeout, a lost
    // session) is still applied when Keeper gets to it (max: none pending).
    sim::Time late_commit_at = sim::Time::max();
    std::uint16_t late_serial = 0;  // voids a stale kLateCommit of this slot
    bool query_over = false;        // answered; the slot waits for its late commit only
    std::int64_t retries = 0;
    sim::Time backoff{};
  };

  struct Replica {
    Replica(const CleanupSettings& settings, std::uint64_t seed, const std::string& stream_name)
        : schedule(settings), stream(seed, stream_name) {}
    bool down = false;
    bool hang = false;
    sim::Time crashed_at{};
    sim::Time up_at{};
    sim::Time stall_until{};  // insert_timeout on this replica
    double stall_server_commits = 1.0;
    bool read_only = false;
    sim::Time read_only_since{};
    sim::Time read_only_until = sim::Time::max();  // max: until the restarting thread succeeds
    std::int64_t restart_failures = 0;             // the restarting thread's consecutive failures
    std::int64_t connect_tries = 0;                // handshakes tried in its current attempt
    std::uint16_t epoch = 0;  // bumps on crash and session loss: stale replica events are ignored
    // The cleanup thread.
    CleanupSchedule schedule;
    sim::RandomStream stream;
    bool cleanup_active = false;
    std::uint16_t cleanup_version = 0;
    // An iteration awaiting its Keeper answers: the removes still to send, the sleep after.
    bool cleanup_busy = false;
    std::int64_t removes_to_send = 0;
    sim::Time sleep_after{};
    // Its bursts' hold on Keeper's leader: this iteration's; the last one's share of its time.
    sim::Time held{};
    double held_share = 0;
    sim::Time iteration_start{};
    sim::Time last_run{};  // the last iteration's end (prev_cleanup_timestamp_ms)
    bool has_run = false;
    sim::Time last_wakeup_check{};
    std::int64_t blocks_since_run = 0;
    std::int64_t parts_since_run = 0;
    // The parts inserted before this iteration began; the fraction of an
    // outdated part the last ones left over.
    std::int64_t iteration_parts = 0;
    double outdated_carry = 0;
  };

  [[nodiscard]] std::uint32_t allocate();
  void release(std::uint32_t slot);
  void schedule_slot(std::uint32_t slot, sim::Time at, std::uint32_t type);
  // The server answers at `at`: the client has it half a round trip later,
  // or its socket timeout first.
  void reply(Insert& s, sim::Time at, QueryStatus status);
  // The client gives up at its deadline (the server goes on).
  void time_out_client(Insert& s);
  void reply_direct(const InsertRequest& request, sim::Time at, QueryStatus status);
  void plan_keeper_phase(std::uint32_t slot, sim::Time at);
  void fail_attempt(std::uint32_t slot, sim::Time failed_at, QueryStatus code);
  void finish(std::uint32_t slot, sim::Time at, QueryStatus status);
  // The server answers now: the client is told, the slot is freed.
  void complete(std::uint32_t slot, QueryStatus status);
  void on_commit(std::uint32_t slot);
  // The commit multi is applied now: dedup check or part. Returns DEDUPLICATED or OK.
  QueryStatus apply_commit(Insert& s);
  // The commit multi sent for this insert stays queued in Keeper and is
  // applied at `at`; the insert's retries go on meanwhile.
  void plan_late_commit(std::uint32_t slot, sim::Time at);
  void on_late_commit(std::uint32_t slot);
  void plan_quorum(std::uint32_t slot);
  [[nodiscard]] sim::Time fetch_time(int replica);
  [[nodiscard]] bool active(int replica) const;  // its is_active node exists
  // An iteration's stages (table_cleanup.cpp): the outdated parts' read,
  // their removes, clearOldLogs and clearOldBlocks' read, the blocks' removes.
  void run_cleanup(int replica);
  void send_part_removes(int replica);
  void clear_old_blocks(int replica);
  void send_cleanup_removes(int replica);
  // Sends the removes_to_send as one burst; `next(rep, last_answer)` gives
  // when and which stage follows.
  template <class Next>
  void send_removes(int replica, Next next);
  [[nodiscard]] bool cleanup_can_reach_keeper(sim::Time now);
  void end_iteration(Replica& rep, sim::Time last_answer);
  // A cleanup burst whose last answer comes after operation_timeout_ms ends the session.
  void time_out_burst(int replica, sim::Time sent, const keeper::Keeper::BurstAnswer& burst);
  void start_cleanup(int replica, sim::Time at);
  void stop_cleanup(int replica);
  void maybe_wake_cleanup();
  [[nodiscard]] static bool wake_check_applies(const Replica& rep);
  // When the next replica's wake-up check is due, for aggregated inserts.
  [[nodiscard]] sim::Time next_wake_check() const;
  void session_expired(int replica, sim::Time until);
  void session_back(int replica);
  void end_read_only(Replica& rep, sim::Time now);
  void restart_attempt(int replica);
  void connect_try(int replica);
  void start_up(int replica);
  void restart_failed(int replica, sim::Time at);
  void expire_every_session();
  // A session began or ended: the servers' threads in Keeper's loop, and the watch.
  void sessions_changed();
  void replan_quorums_after(int replica, sim::Time available_again);
  [[nodiscard]] std::uint32_t table_partition(sim::Time at) const;
  [[nodiscard]] sim::Time wake_check_every() const;
  // Aggregated inserts commit none, so their wake-up check is an event: at
  // next_wake_check(), plus the wait for the commit that would call it (the
  // scheduler checks when a commit comes, and commits come about every
  // 1 / rate, Poisson). Without that wait the checks, and so the cleanup
  // bursts, would keep to an exact cleanup_delay_period / 4 lattice, which a
  // dashboard scraping every 15 s meets at one fixed phase for hours (its
  // readings then missed the bursts: a sampled mean of 94 against the exact
  // path's 228 over the production config's first 3 hours).
  [[nodiscard]] sim::Time aggregate_wake_check();
  // The wait for the next of the aggregated inserts' commits (exponential, mean 1 / rate).
  [[nodiscard]] sim::Time commit_wait();
  // Parts: the Keeper time of a merge assigned now; merges assigned since
  // the last call load Keeper; a new table partition starts a new count.
  [[nodiscard]] sim::Time merge_keeper_time() const;
  // A fetching replica's Keeper requests, one after another, from `now`.
  [[nodiscard]] sim::Time fetch_keeper_time(sim::Time now) const;
  // The same for the parts of a stretch advanced in aggregate, and for its
  // merges: Keeper's stationary regime, not the instant's. The stretch is
  // counted when someone looks, often a cleanup thread in the middle of its
  // bursts: the instant's time would price every part of the stretch with
  // that transient (it did: a replication lag p99 of 242 ms against the
  // exact path's 27 ms over the production day's first 3 hours).
  [[nodiscard]] sim::Time regime_fetch_keeper_time() const;
  [[nodiscard]] sim::Time regime_merge_keeper_time() const;
  // Keeper requests of one merge: the assigning replica's multi creating the
  // log entry, then every replica's own.
  [[nodiscard]] std::int64_t keeper_requests_of_a_merge() const;
  void sync_parts(sim::Time now);
  void load_merges(sim::Time now);
  // Aggregated inserts enter the latency histogram in bulk (1000 strata),
  // once per latency profile.
  void flush_aggregate_latencies();

  sim::Simulation& sim_;
  ClickHouseOptions options_;
  const std::vector<broker::PartitionLog>& logs_;
  ledger::Ledger& ledger_;
  keeper::Keeper& keeper_;
  sim::RandomStream latency_stream_;
  sim::RandomStream outcome_stream_;
  sim::RandomStream replica_choice_;
  sim::RandomStream server_query_choice_;
  sim::RandomStream unknown_commit_stream_;
  sim::RandomStream wake_check_stream_;  // "clickhouse/wake-check": aggregate_wake_check()
  QueryCosts costs_;
  sim::Time stall_until_{};
  double stall_server_commits_ = 1.0;
  DedupWindow window_;
  std::int64_t quorum_;  // 0: off
  bool insert_deduplicate_;  // false: no block ids (insert_deduplicate=0)
  std::vector<Replica> replicas_;
  std::int64_t parts_since_log_clear_ = 0;
  std::uint16_t election_ = 0;  // the latest keeper_election
  std::uint16_t stall_ = 0;     // the latest keeper_stall
  std::uint16_t keeper_watch_ = 0;               // the latest watch_keeper
  sim::Time threads_expiry_ = sim::Time::max();  // when it ends every session
  // When the latest stall ends every session (max: it does not).
  sim::Time stall_expiry_ = sim::Time::max();
  std::int64_t read_only_us_ = 0;  // replica-time read-only, ended stretches
  sim::ComponentId id_;
  AggregateInserts* aggregate_ = nullptr;
  double aggregate_rate_ = 0;
  int keeper_insert_stream_ = -1;
  int keeper_replication_stream_ = -1;
  int keeper_map_stream_ = -1;
  bool wake_check_pending_ = false;
  std::uint16_t wake_check_version_ = 0;  // a newer kWakeCheck supersedes the pending one
  const std::array<std::int64_t, 1000>* pending_latency_profile_ = nullptr;
  std::int64_t pending_latency_count_ = 0;
  MergeTreeParts parts_;
  std::uint32_t parts_partition_ = 0;
  std::int64_t merges_loaded_ = 0;
  // Merges of aggregate stretches (their steady state's per insert).
  double steady_merges_per_insert_ = 0;
  double steady_merges_ = 0;
  std::vector<Insert> pending_;
  std::vector<std::uint32_t> free_slots_;
  TableCounters counters_;
  sim::Histogram insert_latency_us_;
  sim::Histogram replication_lag_us_;
};

}  // namespace pipesim::clickhouse
