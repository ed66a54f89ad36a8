// The sink's exactlyOnce state table: a KeeperMap table of ClickHouse 25.3
// (StorageKeeperMap) on the same servers as the ReplicatedTable, served by
// Keeper. A query runs as the server runs it:
//  1. the client connects (or reuses its connection) and sends it; it
//     reaches one server (the load balancer picks one) half a round trip
//     later (query_path.h); a dead server process refuses it, a dead host
//     lets a new connection fail at connect_timeout;
//  2. after the per-query overhead the server sends its Keeper requests: a
//     read by key is one multi-read, a write an exists() and a multi with
//     the create or set (StorageKeeperMapSink::onFinish), one after the
//     other;
//  3. a hardware Keeper error (no leader, operation timeout, lost session)
//     is retried on the server, ZooKeeperRetriesControl's way: reads with
//     keeper_max_retries and the keeper_retry_* backoffs, writes with the
//     insert_keeper_* settings, the backoff doubling up to its maximum; an
//     operation timeout also finalizes that server's Keeper session;
//  4. a write takes effect when its multi is applied in Keeper, whatever the
//     client does meanwhile: a client that timed out, or a task that died
//     after sending, leaves the write running and applied;
//  5. the answer reaches the client half a round trip after the server sends
//     it, or the client gives up at its socket timeout first.
// A read's value is the row as of its answer's arrival at the client (the
// task reads the store then): a write of another task committing in that
// half round trip is the only case in which it differs (declared in the
// README's list of shortcuts).
#pragma once

#include <cstdint>
#include <vector>

#include "models/clickhouse/clickhouse_options.h"
#include "models/clickhouse/query_path.h"
#include "models/clickhouse/query_status.h"
#include "models/clickhouse/table.h"
#include "models/keeper/keeper.h"
#include "sim/engine/random.h"
#include "sim/engine/simulation.h"

namespace pipesim::clickhouse {

// The value a write stores (the sink's StateRecord; opaque to ClickHouse).
struct KeeperMapRow {
  std::uint8_t state = 0;
  std::int64_t min = 0;
  std::int64_t max = -1;
};

// Where committed writes land (the sink's state store).
class KeeperMapRows {
 public:
  virtual ~KeeperMapRows() = default;
  virtual void write_row(int key, const KeeperMapRow& row) = 0;
};

struct KeeperMapRequest {
  bool write = false;
  int key = 0;
  KeeperMapRow row{};  // a write's value
  ClientPath path{};
  sim::Time socket_timeout = sim::Time::seconds(30);
  ReplyAddress reply{};
  std::uint32_t reply_token = 0;
};

struct KeeperMapCounters {
  std::int64_t queries = 0;         // that reached a server
  std::int64_t failures = 0;        // answered with an error (or never: a dead host)
  std::int64_t server_retries = 0;  // Keeper requests retried on the server
  std::int64_t writes_applied = 0;
  // Writes applied after their client had stopped waiting (its socket timeout).
  std::int64_t writes_applied_unheard = 0;
};

class KeeperMapTable final : public sim::Component {
 public:
  KeeperMapTable(sim::Simulation& sim, const ClickHouseOptions& options, ReplicatedTable& servers,
                 keeper::Keeper& keeper, std::uint64_t seed);

  void set_rows(KeeperMapRows* rows) { rows_ = rows; }
  // A query sent now; its outcome goes to request.reply.
  void send(const KeeperMapRequest& request);
  void handle(const sim::Event& event) override;

  [[nodiscard]] const KeeperMapCounters& counters() const { return counters_; }
  // The row the latest write of `key` sent and not yet applied will store
  // (the server applies it whatever its client does), or nullptr.
  [[nodiscard]] const KeeperMapRow* pending_write(int key) const;

 private:
  struct Query {
    KeeperMapRequest request;
    sim::Time sent{};
    int replica = 0;
    sim::Time deadline{};
    sim::Time back{};
    std::int64_t retries = 0;
    sim::Time backoff{};
    bool client_done = false;
    bool in_use = false;
    std::uint16_t version = 0;
  };

  void attempt(std::uint32_t slot);
  void commit(std::uint32_t slot);
  void fail(std::uint32_t slot, sim::Time at);
  // The server answers at `at`; the client has it half a round trip later,
  // or times out first.
  void answer(Query& q, sim::Time at, QueryStatus status);
  void schedule(std::uint32_t slot, sim::Time at, std::uint32_t type);
  void answer_direct(const KeeperMapRequest& request, sim::Time at, QueryStatus status);
  void release(std::uint32_t slot);

  sim::Simulation& sim_;
  ClickHouseOptions options_;
  ReplicatedTable& servers_;
  keeper::Keeper& keeper_;
  QueryCosts costs_;
  sim::RandomStream replica_choice_;
  sim::ComponentId id_;
  KeeperMapRows* rows_ = nullptr;
  std::vector<Query> queries_;
  std::vector<std::uint32_t> free_;
  KeeperMapCounters counters_;
};

}  // namespace pipesim::clickhouse
