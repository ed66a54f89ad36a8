// The business service's Kafka producer, kafka-clients 3.4 (SPEC §4.1):
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
// response_loss (model): during the window each answer is lost with the
// fault's probability (draws from "faults/response_loss/answers"): the broker
// has handled the request, the connection then breaks, so the requests after
// it on that connection are not read.
//
// Cost (DESIGN.md: cost follows events, not records): the events are the
// application's quanta and the requests, never records nor batches. Outside
// fault windows a request carries each partition's whole quantum as one
// batch run (ProducerBatch), so a fault-free quantum costs one request per
// broker and two wake-ups (the broker handles it; the ISR has it); a
// successful answer with nothing else waiting is taken up lazily by the next
// wake-up. During fault windows requests carry one batch per partition, as
// the real Sender drains, so that what a fault hits is what it would hit;
// the cost then follows those requests (a few per millisecond at most).
// Every wake-up processes all that is due, so the model is exact in time
// however the wake-ups fall.
#pragma once

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

class SendFailureHandler {
 public:
  virtual ~SendFailureHandler() = default;
  virtual void send_failed(const FailedSend& failed) = 0;
};

struct ProducerCounters {
  std::int64_t records_sent = 0;     // given to send(), re-sends included
  std::int64_t requests = 0;         // produce requests
  std::int64_t retried_records = 0;  // re-enqueued after an error or a timeout
  std::int64_t failed_records = 0;   // failed to the application
  std::int64_t expired_records = 0;  // of which by delivery.timeout.ms
  std::int64_t lost_answers = 0;     // answers lost in a response_loss window
  std::int64_t request_timeouts = 0; // connections closed by request.timeout.ms
  std::int64_t restarts = 0;
};

class Producer final : public sim::Component {
 public:
  // `idempotent`: enable.idempotence after the 3.4 client's config checks.
  Producer(sim::Simulation& sim, const ProducerOptions& options, bool idempotent, int partitions,
           std::int64_t record_bytes, broker::KafkaCluster& cluster, sim::Time round_trip,
           std::uint64_t seed);
  void set_failure_handler(SendFailureHandler* handler) { handler_ = handler; }

  // KafkaProducer.send of ids [first_id, first_id+count) to `partition`
  // (queued; run_sender() sends).
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
  // response_loss window: answers lost with probability p (0: closed).
  void set_response_loss(double p) { response_loss_ = p; }
  // Fault windows (any kind): requests carry one batch per partition while open.
  void fault_window(bool open) { windows_open_ += open ? 1 : -1; }

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
    sim::Time closed_at = sim::Time::max();  // acks=0: the client sees the broker close it
    int unanswered = 0;
    std::deque<Request> requests;
  };
  struct PartitionQueue {
    std::deque<std::uint32_t> batches;  // retries first (in sequence order), then new ones
    int known_leader = -1;              // the client's metadata
    int in_flight = 0;                  // batches in unanswered requests
  };

  void settle(sim::Time now);
  void advance_connection(Connection& c, sim::Time now);
  void process(Connection& c, Request& r, sim::Time at);
  void answer(Connection& c, Request& r);
  // acks=0: records that did not make it, without the application knowing.
  void lose_silently(const WireBatch& wb);
  void close_connection(Connection& c);
  void check_request_timeouts(sim::Time now);
  void expire_batches(sim::Time now);
  void refresh_metadata(sim::Time now);
  void drain_and_send(sim::Time now);
  bool drain_one(int partition, sim::Time now, bool one_batch, WireBatch& out);
  [[nodiscard]] bool lingering(const ProducerBatch& b, const PartitionQueue& q, sim::Time now) const;
  void complete(std::uint32_t id);
  void retry_or_fail(std::uint32_t id, bool out_of_order);
  void reenqueue(std::uint32_t id);
  void fail(std::uint32_t id, bool out_of_order, bool adjust_sequences, bool expired);
  [[nodiscard]] sim::Time next_wake(sim::Time now) const;
  void schedule_wake(sim::Time at);
  [[nodiscard]] bool fine_grained() const { return windows_open_ > 0; }
  [[nodiscard]] std::int64_t records_per_batch() const { return records_per_batch_; }

  sim::Simulation& sim_;
  ProducerOptions options_;
  bool idempotent_;
  broker::KafkaCluster& cluster_;
  sim::Time one_way_;
  sim::Time round_trip_;
  std::int64_t records_per_batch_;
  int acks_;  // -1 (all), 1 or 0
  SendFailureHandler* handler_ = nullptr;
  sim::ComponentId id_;
  sim::RandomStream answers_;  // "faults/response_loss/answers"
  double response_loss_ = 0;
  int windows_open_ = 0;

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
