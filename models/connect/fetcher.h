// A sink task's KafkaConsumer 3.7 (classic protocol) as far as what poll()
// returns and when: the Fetcher, its fetch buffer and FetchCollector.
//
//   - sendFetches (AbstractFetch.prepareFetchRequests): every assigned,
//     unpaused partition without buffered data is fetched from its leader, one
//     request per broker, and a broker with a fetch in flight gets no other
//     (nodesWithPendingFetchRequests): at most one fetch per node in flight.
//   - The broker (ReplicaManager.fetchMessages, DelayedFetch) answers as soon
//     as fetch.min.bytes are readable below the high watermark, else when
//     they become so, else after fetch.max.wait.ms with what there is (maybe
//     nothing). Each partition's share is capped by max.partition.fetch.bytes
//     and the response by fetch.max.bytes; the first non-empty partition
//     gets at least one record (minOneMessage).
//   - The response is buffered when it arrives, even while the application
//     is in put() (the heartbeat thread runs the network client); a new
//     fetch is only ever sent from poll().
//   - poll (LegacyKafkaConsumer.poll, FetchCollector.collectFetch): returns
//     up to max.poll.records from the completed fetches in arrival order,
//     continuing into the next partition's completed fetch; if it returns
//     records it first sends the next fetches (pipelining); if there is
//     nothing it sends fetches and blocks until a response brings records or
//     the poll times out. A partition whose fetched records were all returned
//     moves to the end of the fetch order (movePartitionToEnd).
//
// Time model: the broker reads a fetch when it is sent (the request's one
// way is folded into the response's), and the response arrives
// `latency` (connect.fetch_latency, the round trip) after the broker answers.
// Nothing here schedules events: the task asks at poll time what has arrived
// and, when it must wait, when the next response can arrive. When the brokers
// cannot say in advance when a record becomes visible (the exact producer),
// they tell the fetcher as it happens (on_visible). While the consumer is
// blocked in poll, an empty response (fetch.max.wait.ms passed) is followed
// by the next fetch at once: fetches go out every fetch.max.wait.ms +
// latency, and the one that first finds records is answered; that chain is
// computed at once where the brokers can tell, not fetch by fetch.
//
// Invariants: position <= fetch offset of every partition; a partition is in
// at most one fetch or one completed fetch; offsets never go backwards
// except by seek().
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "models/sink/clickhouse_sink_task.h"
#include "sim/engine/time.h"

namespace pipesim::connect {

struct FetchSettings {
  sim::Time latency = sim::Time::millis(2);      // model: fetch round trip
  sim::Time max_wait = sim::Time::millis(500);   // fetch.max.wait.ms
  std::int64_t min_records = 1;                  // fetch.min.bytes, in records
  std::int64_t max_partition_records = 1006;     // max.partition.fetch.bytes, in records (>= 1)
  std::int64_t max_response_records = 50331;     // fetch.max.bytes, in records (>= 1)
};

// What the brokers show a consumer (read-uncommitted: up to the high watermark).
class LogView {
 public:
  static constexpr std::int64_t kUnknown = -1;
  virtual ~LogView() = default;
  [[nodiscard]] virtual std::int64_t high_watermark(int partition) const = 0;
  [[nodiscard]] virtual std::int64_t log_start(int partition) const = 0;
  // The broker that leads the partition now (-1: none).
  [[nodiscard]] virtual int leader(int partition) const = 0;
  // When offset `offset` of the partition becomes readable, if the view can
  // tell in advance (a record of the healthy producer's direct feed);
  // Time::max() when only a notification will tell (on_visible).
  [[nodiscard]] virtual sim::Time visible_at(int partition, std::int64_t offset) const = 0;
  // The high watermark at an earlier instant t <= now where the view can
  // tell (the direct feed); kUnknown where it cannot (the exact producer:
  // a waiting fetch then keeps what its last notification showed).
  [[nodiscard]] virtual std::int64_t high_watermark_at(int partition, sim::Time t) const = 0;
};

class Fetcher {
 public:
  explicit Fetcher(const FetchSettings& settings) : settings_(settings) {}
  [[nodiscard]] const FetchSettings& settings() const { return settings_; }

  // A new assignment, each partition from its committed offset.
  void assign(const std::vector<int>& partitions, const std::vector<std::int64_t>& offsets);
  void clear();
  // Seeks a partition back (a truncation below what was read): its buffered
  // and in-flight data are dropped.
  void seek(int partition, std::int64_t offset);
  // While paused (a RetriableException) nothing is fetched or returned.
  void set_paused(bool paused) { paused_ = paused; }

  struct PollResult {
    bool records = false;
    // When nothing was returned: when a response that may bring records can
    // arrive (Time::max(): only a notification can tell).
    sim::Time wake_at = sim::Time::max();
  };
  // KafkaConsumer.poll at `now`: appends the returned records (one range per
  // partition) to `out`. `blocked`: the consumer has been blocked in poll
  // since its last call (its empty responses were followed by new fetches).
  PollResult poll(sim::Time now, const LogView& view, std::int64_t max_records,
                  std::vector<sink::PartitionBatch>& out, bool blocked = false);
  // The earliest arrival of a response that may bring records, for a
  // consumer blocked in poll; Time::max() if only a notification can tell.
  [[nodiscard]] sim::Time next_response(const LogView& view) const;
  // A partition's high watermark moved at `now` (the brokers could not tell in
  // advance): a fetch waiting for it may be answered. True if one was.
  bool on_visible(int partition, sim::Time now, const LogView& view, bool blocked);
  // Settles every fetch whose answer is known by `now` under `view` (before
  // the brokers' view changes, e.g. the producer leaves its direct feed).
  void settle(sim::Time now, const LogView& view, bool blocked = false);

  // Next offset poll() returns for the partition (the consumer's position).
  [[nodiscard]] std::int64_t position(int partition) const;
  [[nodiscard]] const std::vector<int>& partitions() const { return order_; }
  [[nodiscard]] bool idle() const { return requests_.empty() && completed_.empty(); }
  // Records buffered or answered but not yet returned by poll().
  [[nodiscard]] std::int64_t buffered_records() const;

 private:
  struct Part {
    int partition = 0;
    std::int64_t offset = 0;  // fetch offset
    std::int64_t end = 0;     // answered: records [offset, end)
  };
  struct Request {
    int node = -1;
    sim::Time sent{};
    bool answered = false;
    sim::Time answer_at = sim::Time::max();
    std::vector<Part> parts;
  };
  struct Completed {
    int partition = 0;
    std::int64_t from = 0;
    std::int64_t to = 0;  // exclusive
  };
  struct State {
    int partition = 0;
    std::int64_t position = 0;      // next offset poll() returns
    std::int64_t fetch_offset = 0;  // next offset to fetch
    bool in_flight = false;
    bool buffered = false;
  };

  State* state_of(int partition);
  [[nodiscard]] const State* state_of(int partition) const;
  void send_fetches(sim::Time now, const LogView& view);
  // The broker answers at `at` with what is readable then (caps applied).
  void answer(Request& r, sim::Time at, const LogView& view, bool now_view);
  [[nodiscard]] std::int64_t readable(const Request& r, const LogView& view) const;
  // When a waiting request's broker answers, if the view can tell;
  // `chained`: its empty answers are followed by new fetches.
  [[nodiscard]] sim::Time answer_time(const Request& r, const LogView& view, bool chained) const;
  // The request a blocked consumer has in flight at `now`: the latest of the
  // chain sent since (nothing visible meanwhile).
  void rebase(Request& r, sim::Time now) const;
  // Resolves answered requests whose response has arrived by `now`.
  void collect_responses(sim::Time now, const LogView& view, bool blocked);
  void move_to_end(int partition);

  FetchSettings settings_;
  bool paused_ = false;
  std::vector<int> order_;  // fetch order (rotated by movePartitionToEnd)
  std::vector<State> states_;
  std::vector<Request> requests_;
  std::deque<Completed> completed_;
};

}  // namespace pipesim::connect
