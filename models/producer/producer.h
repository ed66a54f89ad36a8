// The business service's Kafka producer, kafka-clients 3.4 (docs/model.md §4.1):
// RecordAccumulator (per-partition batches, linger.ms), Sender (drain,
// retries, delivery.timeout.ms, idempotence through TransactionManager) and
// NetworkClient (one connection per broker, max.in.flight.requests.per.connection,
// request.timeout.ms, metadata refresh).
//
// A send travels: the partition's batch queue -> a produce request to the
// broker the client believes leads the partition -> the broker handles it
// (KafkaCluster::produce) one way later, one request of a connection at a
// time (the broker mutes a connection while a request is in progress) ->
// the answer leaves when the partition is done (acks=all: when the ISR has
// the append) and arrives one way later. Answers:
//   - success, or DUPLICATE_SEQUENCE (a retry of a retained batch: success);
//   - NOT_LEADER_OR_FOLLOWER: the 3.4 client does not learn the new leader
//     from the error; it refreshes metadata (one round trip, at most every
//     retry.backoff.ms) and retries after retry.backoff.ms;
//   - NOT_ENOUGH_REPLICAS, OUT_OF_ORDER_SEQUENCE_NUMBER: retried;
//   - no answer (a lost answer, a dead or hung broker): when the oldest
//     request of a connection passes request.timeout.ms the client closes the
//     connection and fails every request on it (retried, metadata refreshed).
// A batch is retried while `retries` allows and delivery.timeout.ms since its
// creation has not passed; then it fails to the application (SendFailureHandler),
// even if an attempt of it was written.
//
// response_loss (model): during the window each TCP segment between the
// producer and a broker is lost with the fault's probability (draws from
// "faults/response_loss/answers"). What a loss does is the fault's
// `connection` parameter:
//   - retransmit (the default): a live connection, as Linux TCP has it. A
//     lost segment (an answer, or a request in the other direction) is sent
//     again after the retransmission timeout: RTO = SRTT + max(4 RTTVAR,
//     tcp_rto_min), so ~the round trip + tcp_rto_min (200 ms) on a LAN
//     (tcp_set_rto; RFC 6298 §2), doubling for each further loss of the same
//     segment (RFC 6298 §5.5) up to TCP_RTO_MAX (120 s); each retransmission
//     is lost with the same probability while the window lasts. After
//     tcp_retries2 (15) retransmissions the kernel gives up and the connection
//     is dead (a stall the client ends at request.timeout.ms, which comes
//     first). A connection delivers in order: every later answer waits behind
//     a late one (head-of-line blocking), and the broker reads the next
//     request only once the late one has arrived; the broker is not held up
//     by a late answer (it reads the next request once it has written the
//     answer to its socket). So lost answers are mostly late answers;
//   - stall: the way back is black-holed (no FIN, no RST: a dropping
//     firewall or proxy); the broker goes on reading and appending the
//     connection's next requests, but none of their answers arrives; the
//     client waits until the oldest request passes request.timeout.ms, then
//     closes the connection and fails every request on it, written or not
//     (NetworkClient.handleTimedOutRequests): up to
//     max.in.flight.requests.per.connection written but unacknowledged
//     batches for request.timeout.ms;
//   - reset: the connection is reset (RST) right after the broker handled
//     the request; the client sees the disconnect one way later and fails
//     the in-flight requests of that connection at once
//     (NetworkClient.processDisconnection), retried after retry.backoff.ms.
// The Sender's order of work is 3.4's (Sender.runOnce -> sendProducerData,
// then client.poll): batches whose delivery.timeout.ms has passed, queued or
// in flight (getExpiredInflightBatches), fail at their deadline, before an
// answer that arrives later is handled; the Sender wakes for the deadline.
//
// Records arrive one by one (RecordSource): each goes into its partition's
// open batch (RecordAccumulator.append); a batch is created by the record
// that finds no open batch (its arrival is the batch's createdMs, from which
// delivery.timeout.ms and linger.ms count) and holds batch.size bytes of
// records (records_per_batch()). Creating a batch wakes the Sender
// (KafkaProducer.doSend: newBatchCreated); so does a batch filling up while
// linger.ms holds it. The Sender drains a node once one of its partitions'
// head batches is sendable (full, or linger.ms passed: at once with
// linger.ms=0) and its connection has fewer than
// max.in.flight.requests.per.connection unanswered requests: the request
// carries the head batch of every partition led by that node (not muted, not
// backing off), one batch per partition (drainBatchesForOneNode).
//
// Cost: the events are the Sender's wake-ups (a new batch on an idle
// connection, an answer it needs, a timer); records are counted, never
// stored one by one. A healthy stretch is cheaper still when the pipeline
// hands the arrivals to the direct feed instead (direct_feed.h): the
// producer then takes none and has nothing in flight.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "models/broker/kafka_cluster.h"
#include "models/ledger/ledger.h"
#include "models/producer/producer_batch.h"
#include "models/producer/producer_options.h"
#include "models/producer/transaction_manager.h"
#include "sim/engine/random.h"
#include "sim/engine/simulation.h"

namespace pipesim::producer {

// Records whose send failed: the send() callback's exception.
struct FailedSend {
  int partition = 0;
  ledger::IdRange ids;
  ledger::CopyCause cause = ledger::CopyCause::ORIGINAL;
  int resends = 0;
  bool expired = false;  // TimeoutException from delivery.timeout.ms
  bool silent = false;   // acks=0: lost without the application hearing of it
};

// The service's records as they arrive: ids 0, 1, ... per partition, in
// arrival order (each is a KafkaProducer.send call).
class RecordSource {
 public:
  virtual ~RecordSource() = default;
  // Records of `partition` that arrive in [0, t).
  virtual std::int64_t arrived_before(int partition, sim::Time t) = 0;
  // When record `id` of `partition` arrives (Time::max(): never).
  virtual sim::Time arrival_of(int partition, std::int64_t id) = 0;
  // send() has been called for the partition's ids below `end`.
  virtual void taken(int partition, std::int64_t end) = 0;
};

// Told after every round of the Sender (the direct feed waits for it to drain).
class SenderObserver {
 public:
  virtual ~SenderObserver() = default;
  virtual void sender_ran() = 0;
};

class SendFailureHandler {
 public:
  virtual ~SendFailureHandler() = default;
  virtual void send_failed(const FailedSend& failed) = 0;
};

// A response_loss window as the producer sees it (scenario.cpp sets it).
enum class LossMode : std::uint8_t { RETRANSMIT, STALL, RESET };
struct ResponseLoss {
  double probability = 0;  // 0: no window
  LossMode mode = LossMode::RETRANSMIT;
  sim::Time tcp_rto_min = sim::Time::millis(200);
  std::int64_t tcp_retries2 = 15;
  sim::Time from{};                     // the window: segments sent in [from, until)
  sim::Time until = sim::Time::max();
};

struct ProducerCounters {
  std::int64_t records_sent = 0;     // given to send(), re-sends included
  std::int64_t requests = 0;         // produce requests
  std::int64_t retried_records = 0;  // re-enqueued after an error or a timeout
  std::int64_t failed_records = 0;   // failed to the application
  std::int64_t expired_records = 0;  // of which by delivery.timeout.ms
  std::int64_t lost_answers = 0;     // answers lost for good in a response_loss window
  std::int64_t late_segments = 0;    // answers and requests delivered late by retransmission
  std::int64_t late_answers = 0;     // answers heard late: retransmitted, or held behind one that was
  // batches answered NOT_ENOUGH_REPLICAS_AFTER_APPEND (in the log, yet retried)
  std::int64_t not_enough_replicas_after_append = 0;
  std::int64_t request_timeouts = 0; // connections closed by request.timeout.ms
  // error answers or disconnects of batches already expired in flight (each asks for an epoch bump)
  std::int64_t late_failures = 0;
  std::int64_t restarts = 0;
};

class Producer final : public sim::Component {
 public:
  // `idempotent`: enable.idempotence after the 3.4 client's config checks.
  Producer(sim::Simulation& sim, const ProducerOptions& options, bool idempotent, int partitions,
           std::int64_t record_bytes, broker::KafkaCluster& cluster, sim::Time round_trip,
           std::uint64_t seed);
  void set_failure_handler(SendFailureHandler* handler) { handler_ = handler; }
  void set_record_source(RecordSource* source) { source_ = source; }
  void set_observer(SenderObserver* observer) { observer_ = observer; }

  // While taking, every wake-up first appends the records that arrived since
  // (ids from next_id(p) on). Stopped, the producer takes none (the direct
  // feed writes them); started again, it takes ids from `next_ids` on.
  void start_taking(const std::vector<std::int64_t>& next_ids);
  void stop_taking() { taking_ = false; }
  [[nodiscard]] bool taking() const { return taking_; }
  // RecordAccumulator.append of the records that arrived by now (each was
  // send() at its own instant; appending them later changes no batch, as
  // the Sender only looks at its wake-ups, which take them first). The
  // housekeeping calls it too, so no untaken arrival outlives the
  // workload's memory of its instant.
  void take_arrivals(sim::Time now);
  [[nodiscard]] std::int64_t next_id(int partition) const {
    return next_id_[static_cast<std::size_t>(partition)];
  }
  // KafkaProducer.send of ids [first_id, first_id+count) to `partition`, all
  // at once now (the application's re-sends; queued, run_sender() sends).
  void send(int partition, std::int64_t first_id, std::int64_t count, ledger::CopyCause cause, int resends);
  // The Sender's loop at now: everything due (appends, answers, timeouts,
  // expiries, metadata), then drains what can be sent, then sleeps until the
  // next thing is due. The cluster calls it before it changes.
  void run_sender();

  // The cluster's news (see ClusterListener).
  void broker_died(int broker);
  void leadership_moved(int partition, int old_leader);
  void isr_shrunk(int partition);
  // Appends to `rest` the parts of `ids` that are not in a batch this
  // producer still owns unacknowledged (it will retry it or fail it to the app).
  void unowned_ids(int partition, ledger::IdRange ids, std::vector<ledger::IdRange>& rest) const;

  // producer_restart: the service restarts; the new producer gets a new
  // producer id; what the old one had not seen acknowledged goes to the
  // application (its requests on the wire are not read any more).
  void restart();
  // A response_loss window (from its start, with its end): a segment sent at
  // t is judged by the most likely window open at t. Windows that ended
  // longer ago than any answer can wait for its decision are forgotten.
  void add_response_loss(const ResponseLoss& loss);

  // Nothing queued, nothing in flight for the partition (all answered).
  [[nodiscard]] bool drained(int partition) const;
  // A healthy steady state: no retry, no error, no timeout or expiry
  // pending, the metadata names every leader, idempotence settled; what is
  // in flight is only fresh, normal traffic.
  [[nodiscard]] bool quiescent() const;
  [[nodiscard]] TransactionManager& transaction_manager() { return tm_; }
  // Records per batch: batch.size holds a 61-byte v2 batch header and ~18
  // bytes of per-record overhead besides the values (DefaultRecordBatch,
  // DefaultRecord.sizeInBytes): 15 records of 1 KiB in 16 KiB.
  [[nodiscard]] std::int64_t records_per_batch() const { return records_per_batch_; }
  static std::int64_t records_per_batch(std::int64_t batch_size, std::int64_t record_bytes);

  void handle(const sim::Event& event) override;
  [[nodiscard]] const ProducerCounters& counters() const { return counters_; }
  [[nodiscard]] std::int64_t epoch_bumps() const { return epoch_bumps_ + tm_.epoch_bumps(); }

 private:
  enum EventType : std::uint32_t { kWake = 1 };
  static constexpr std::uint32_t kNoBatch = 0xFFFFFFFFu;

  struct WireBatch {
    std::uint32_t batch = kNoBatch;  // kNoBatch: acks=0, completed at send
    broker::ProduceBatch data;
    broker::ProduceResult result;
    sim::Time done_at = sim::Time::max();  // its part of the answer is ready
    sim::Time hw_at = sim::Time::max();    // the ISR has it (high watermark)
    bool hw_pending = false;
  };
  struct Request {
    std::uint32_t generation = 0;  // the TCP connection it went on
    sim::Time sent{};
    sim::Time arrives{};       // at the broker (retransmissions included, in order)
    sim::Time back_delay{};    // the answer's retransmissions
    bool back_decided = false; // back_delay drawn (once the answer has left)
    sim::Time processed_at = sim::Time::max();
    sim::Time leave_at = sim::Time::max();
    bool processed = false;
    bool dropped = false;  // never read by the broker
    bool lost = false;     // handled, answer lost
    bool hangs = false;    // the broker never answers it
    bool answered = false; // the client is done with it (answer, timeout, restart)
    bool expects_response = true;
    std::vector<WireBatch> batches;
    [[nodiscard]] sim::Time next_hw() const;
  };
  struct Connection {
    int broker = 0;
    std::uint32_t generation = 0;
    sim::Time dead_from = sim::Time::max();  // not read, not answered from here on
    sim::Time stalled_from = sim::Time::max();  // read and handled, but no answer reaches the client
    // Answers that leave the broker from here on never arrive.
    [[nodiscard]] sim::Time answers_until() const { return std::min(dead_from, stalled_from); }
    sim::Time closed_at = sim::Time::max();  // acks=0 or a dead TCP path: the client sees it closed
    sim::Time last_arrival{};  // of its latest request at the broker (in-order delivery)
    int unanswered = 0;
    std::deque<Request> requests;
  };
  struct PartitionQueue {
    std::deque<std::uint32_t> batches;  // retries first (in sequence order), then new ones
    int known_leader = -1;              // the client's metadata
    int in_flight = 0;                  // batches in unanswered requests
  };

  void settle(sim::Time now);
  // When the answer of `r` reaches the client, given the previous answer's
  // arrival on the connection (in order); Time::max() if it never leaves.
  // Before its retransmissions are drawn (decide_answer), the earliest.
  [[nodiscard]] sim::Time answer_arrival(const Request& r, sim::Time previous) const {
    if (r.leave_at == sim::Time::max()) return sim::Time::max();
    return std::max(r.leave_at + one_way_ + r.back_delay, previous);
  }
  // The response_loss window open at `t` (the most likely), or nullptr.
  [[nodiscard]] const ResponseLoss* loss_at(sim::Time t) const;
  // A segment first sent at `at`: its delay from retransmissions, each
  // transmission judged by the window open when it is sent; `dead` if the
  // kernel gives up (tcp_retries2).
  sim::Time retransmission_delay(sim::Time at, bool& dead);
  // "retransmit": the answer of `r` has left the broker: draw its fate.
  void decide_answer(Connection& c, Request& r);
  // getExpiredInflightBatches for one batch in flight past its deadline.
  void expire_in_flight(std::uint32_t id);
  void append_arrivals(int partition, std::int64_t first, std::int64_t end);
  [[nodiscard]] bool open_batch(const PartitionQueue& q) const;
  [[nodiscard]] bool sendable(const ProducerBatch& head, const PartitionQueue& q, sim::Time now) const;
  [[nodiscard]] bool can_send(const Connection& c) const;
  void advance_connection(Connection& c, sim::Time now);
  void process(Connection& c, Request& r, sim::Time at);
  void answer(Connection& c, Request& r, sim::Time arrival);
  // Ground truth: the log holds an attempt of this batch, with these numbers.
  void note_written(const WireBatch& wb);
  // acks=0: records that did not make it, without the application knowing.
  void lose_silently(const WireBatch& wb);
  void close_connection(Connection& c);
  void check_request_timeouts(sim::Time now);
  void expire_batches(sim::Time now);
  void refresh_metadata(sim::Time now);
  void drain_and_send(sim::Time now);
  bool drain_one(int partition, sim::Time now, WireBatch& out);
  void complete(std::uint32_t id);
  void retry_or_fail(std::uint32_t id, bool out_of_order);
  void reenqueue(std::uint32_t id);
  void fail(std::uint32_t id, bool out_of_order, bool adjust_sequences, bool expired);
  // The answer (or disconnect) of an attempt of a batch that delivery.timeout.ms already failed.
  void late_answer(std::uint32_t id, broker::ProduceError error);
  [[nodiscard]] sim::Time next_wake(sim::Time now) const;
  [[nodiscard]] sim::Time earliest_answer(const Connection& c) const;
  void schedule_wake(sim::Time at);

  sim::Simulation& sim_;
  ProducerOptions options_;
  bool idempotent_;
  broker::KafkaCluster& cluster_;
  sim::Time one_way_;
  sim::Time round_trip_;
  std::int64_t records_per_batch_;
  int acks_;  // -1 (all), 1 or 0
  SendFailureHandler* handler_ = nullptr;
  RecordSource* source_ = nullptr;
  SenderObserver* observer_ = nullptr;
  bool taking_ = false;
  std::vector<std::int64_t> next_id_;  // per partition: the next arrival to take
  sim::ComponentId id_;
  sim::RandomStream answers_;  // "faults/response_loss/answers"
  std::vector<ResponseLoss> losses_;  // the response_loss windows that still matter

  TransactionManager tm_;
  std::int64_t epoch_bumps_ = 0;  // of earlier producer instances
  BatchPool pool_;
  std::vector<PartitionQueue> queues_;
  std::vector<Connection> connections_;

  bool metadata_wanted_ = false;
  sim::Time metadata_due_ = sim::Time::max();
  sim::Time last_metadata_request_{};
  bool metadata_requested_once_ = false;

  std::vector<sim::Time> wakes_;  // pending wake-up events, latest first
  std::vector<WireBatch> drained_;               // scratch
  std::vector<std::vector<WireBatch>> spare_;    // emptied request bodies, reused
  ProducerCounters counters_;
};

}  // namespace pipesim::producer
