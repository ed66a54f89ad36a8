// kafka-clients 3.4 producer properties (docs/model.md §4.1) and the application's
// handling of failed sends. Defaults are the real client defaults.
#pragma once

#include <cstdint>
#include <string>

#include "sim/config/options.h"
#include "sim/engine/time.h"

namespace pipesim::producer {

struct ProducerOptions {
  std::string acks = "all";
  bool enable_idempotence = true;
  sim::Time delivery_timeout = sim::Time::millis(120000);
  sim::Time request_timeout = sim::Time::millis(30000);
  std::int64_t retries = 2147483647;
  sim::Time retry_backoff = sim::Time::millis(100);
  std::int64_t max_in_flight_requests_per_connection = 5;
  sim::Time linger = sim::Time::millis(0);
  std::int64_t batch_size = 16384;
};

template <class V, class O>
void visit(V& v, O& o) requires std::is_same_v<std::remove_const_t<O>, ProducerOptions> {
  v.choice("acks", o.acks, {"all", "-1", "1", "0"}, "acknowledgements the leader waits for");
  v.boolean("enable.idempotence", o.enable_idempotence, "producer id + sequence numbers per partition");
  v.millis("delivery.timeout.ms", o.delivery_timeout, 1, 2147483647,
           "time a batch may take from creation to final answer before it fails to the app");
  v.millis("request.timeout.ms", o.request_timeout, 1, 2147483647,
           "time to wait for a produce answer");
  v.integer("retries", o.retries, 0, 2147483647, "retries of a failed produce request");
  v.millis("retry.backoff.ms", o.retry_backoff, 0, 2147483647, "wait before a retry");
  v.integer("max.in.flight.requests.per.connection", o.max_in_flight_requests_per_connection, 1,
            1000, "unanswered requests per broker connection");
  v.millis("linger.ms", o.linger, 0, 2147483647, "wait for more records before sending a batch");
  v.integer("batch.size", o.batch_size, 0, 2147483647, "bytes per partition batch");
  // Other real keys are accepted and listed as ignored (models/pipeline/real_keys.h).
  v.finish();
}

// The application around the producer (docs/model.md §4.1, model: real services differ).
struct AppOptions {
  std::string on_send_failure = "retry";  // retry | retry_table | drop
  std::int64_t max_resends = 3;           // with "retry": re-sends per failed record
  std::string resend_policy = "blind";    // blind | check_by_key
};

template <class V, class O>
void visit(V& v, O& o) requires std::is_same_v<std::remove_const_t<O>, AppOptions> {
  v.choice("on_send_failure", o.on_send_failure, {"retry", "retry_table", "drop"},
           "what the service does with records whose send failed");
  v.integer("max_resends", o.max_resends, 0, 1000, "with retry: re-sends per failed record");
  v.choice("resend_policy", o.resend_policy, {"blind", "check_by_key"},
           "a resend re-sends all records, or only keys not yet in ClickHouse");
  v.finish();
}

}  // namespace pipesim::producer
