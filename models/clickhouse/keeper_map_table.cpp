#include "models/clickhouse/keeper_map_table.h"

#include <algorithm>

#include "sim/engine/invariant.h"

namespace pipesim::clickhouse {

namespace {

// Distinct names: a unity build puts this file beside the table's.
enum KeeperMapEvent : std::uint32_t {
  kMapAttempt = 1,  // the server sends the query's Keeper requests (slot)
  kMapCommit,       // they are answered: a write's multi is applied (slot)
};

constexpr std::uint32_t pack_query(std::uint32_t index, std::uint16_t version) {
  return index | (static_cast<std::uint32_t>(version) << 16);
}

}  // namespace

KeeperMapTable::KeeperMapTable(sim::Simulation& sim, const ClickHouseOptions& options,
                               ReplicatedTable& servers, keeper::Keeper& keeper,
                               std::uint64_t seed)
    : sim_(sim),
      options_(options),
      servers_(servers),
      keeper_(keeper),
      costs_(QueryCosts::of(options)),
      replica_choice_(seed, "clickhouse/replica-choice/keeper-map"),
      id_(sim.add_component(this)) {}

void KeeperMapTable::answer_direct(const KeeperMapRequest& request, sim::Time at,
                                   QueryStatus status) {
  ++counters_.failures;
  const sim::Time deadline = sim_.now() + costs_.setup(request.path) + request.socket_timeout;
  if (at > deadline) {
    at = deadline;
    status = QueryStatus::CLIENT_TIMEOUT;
  }
  sim_.schedule(at, request.reply.component, request.reply.event_type,
                encode_reply(request.reply_token, status));
}

void KeeperMapTable::send(const KeeperMapRequest& request) {
  const sim::Time now = sim_.now();
  const int r = static_cast<int>(replica_choice_.below(static_cast<std::uint64_t>(servers_.replica_count())));
  if (servers_.replica_down(r)) {
    // As for an insert (ReplicatedTable::begin_insert): refused within a round
    // trip; a dead host fails a new connection at connect_timeout, a kept one
    // at the socket timeout.
    if (!servers_.replica_hangs(r)) {
      answer_direct(request, now + costs_.round_trip, QueryStatus::NETWORK_ERROR);
    } else if (request.path.new_connection) {
      answer_direct(request, now + request.path.connect_timeout, QueryStatus::NETWORK_ERROR);
    } else {
      answer_direct(request, sim::Time::max(), QueryStatus::NETWORK_ERROR);
    }
    return;
  }
  ++counters_.queries;
  std::uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    PIPESIM_INVARIANT(queries_.size() < 0xFFFFu, "too many KeeperMap queries in flight");
    slot = static_cast<std::uint32_t>(queries_.size());
    queries_.emplace_back();
  }
  Query& q = queries_[slot];
  q.request = request;
  q.sent = now;
  q.replica = r;
  q.deadline = now + costs_.setup(request.path) + request.socket_timeout;
  q.back = costs_.round_trip - costs_.one_way();
  q.retries = 0;
  q.backoff = request.write ? options_.insert_keeper_retry_initial_backoff
                            : options_.keeper_retry_initial_backoff;
  q.client_done = false;
  q.in_use = true;
  ++q.version;
  schedule(slot, now + costs_.to_work(request.path), kMapAttempt);
}

void KeeperMapTable::schedule(std::uint32_t slot, sim::Time at, std::uint32_t type) {
  Query& q = queries_[slot];
  // The client's socket timeout comes first: it is told then, the server goes on.
  if (!q.client_done && at + q.back > q.deadline) {
    q.client_done = true;
    ++counters_.failures;
    sim_.schedule(q.deadline, q.request.reply.component, q.request.reply.event_type,
                  encode_reply(q.request.reply_token, QueryStatus::CLIENT_TIMEOUT));
  }
  sim_.schedule(at, id_, type, pack_query(slot, q.version));
}

void KeeperMapTable::answer(Query& q, sim::Time at, QueryStatus status) {
  if (q.client_done) return;
  q.client_done = true;
  if (status != QueryStatus::OK) ++counters_.failures;
  sim_.schedule(at + q.back, q.request.reply.component, q.request.reply.event_type,
                encode_reply(q.request.reply_token, status));
}

void KeeperMapTable::release(std::uint32_t slot) {
  Query& q = queries_[slot];
  q.in_use = false;
  ++q.version;
  free_.push_back(slot);
}

void KeeperMapTable::attempt(std::uint32_t slot) {
  Query& q = queries_[slot];
  const sim::Time now = sim_.now();
  // A read by key: one multi-read. A write: exists(), then the multi (a write).
  const keeper::KeeperAnswer a =
      keeper_.request(now, q.request.write ? 2 : 1, keeper::KeeperClient::KEEPER_MAP, q.replica,
                      q.request.write ? 1 : 0);
  if (a.ok) {
    schedule(slot, now + a.latency, kMapCommit);
    return;
  }
  if (a.operation_timeout) servers_.operation_timeout(q.replica, now + a.latency);
  fail(slot, now + a.latency);
}

void KeeperMapTable::fail(std::uint32_t slot, sim::Time at) {
  Query& q = queries_[slot];
  // ZooKeeperRetriesControl: a hardware error (connection loss, session
  // expired, operation timeout) is retried after the backoff, which doubles
  // up to its maximum; when the retries run out the query fails with 999.
  const std::int64_t max_retries =
      q.request.write ? options_.insert_keeper_max_retries : options_.keeper_max_retries;
  const sim::Time max_backoff = q.request.write ? options_.insert_keeper_retry_max_backoff
                                                : options_.keeper_retry_max_backoff;
  if (q.retries < max_retries) {
    ++q.retries;
    ++counters_.server_retries;
    const sim::Time next = at + q.backoff;
    q.backoff = std::min(q.backoff * 2, max_backoff);
    schedule(slot, next, kMapAttempt);
    return;
  }
  answer(q, at, QueryStatus::KEEPER_EXCEPTION);
  release(slot);
}

void KeeperMapTable::commit(std::uint32_t slot) {
  Query& q = queries_[slot];
  if (q.request.write) {
    ++counters_.writes_applied;
    if (q.client_done) ++counters_.writes_applied_unheard;
    PIPESIM_INVARIANT(rows_ != nullptr, "a KeeperMap write without a state store");
    rows_->write_row(q.request.key, q.request.row);
  }
  answer(q, sim_.now(), QueryStatus::OK);
  release(slot);
}

const KeeperMapRow* KeeperMapTable::pending_write(int key) const {
  const Query* latest = nullptr;
  for (const Query& q : queries_) {
    if (!q.in_use || !q.request.write || q.request.key != key) continue;
    if (latest == nullptr || q.sent >= latest->sent) latest = &q;
  }
  return latest != nullptr ? &latest->request.row : nullptr;
}

void KeeperMapTable::handle(const sim::Event& event) {
  const std::uint32_t index = event.arg & 0xFFFFu;
  const auto version = static_cast<std::uint16_t>(event.arg >> 16);
  if (index >= queries_.size()) return;
  Query& q = queries_[index];
  if (!q.in_use || q.version != version) return;
  if (event.type == kMapAttempt) attempt(index);
  if (event.type == kMapCommit) commit(index);
}

}  // namespace pipesim::clickhouse
