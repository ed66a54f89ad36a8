// Why a copy of a record exists: the vocabulary of the ledger (docs/model.md §3).
#pragma once

#include <cstdint>
#include <string_view>

namespace pipesim::ledger {

// Why a Kafka record exists.
enum class CopyCause : std::uint8_t {
  ORIGINAL,        // the service's first send
  // The client's tag for an attempt of a batch an earlier attempt of which
  // was written (ground truth the client does not know). The broker that
  // appends it names the path by which it got past idempotence (one of the
  // RETRY_* causes below), so the ledger never sees this one from a run.
  PRODUCER_RETRY,
  MANUAL_RESEND,   // re-sent from the retry table
  APPLICATION_RESEND,         // re-sent by the application after a failed send (app.on_send_failure=retry)
  RETRY_NOT_IDEMPOTENT,       // enable.idempotence=false: nothing dedupes a retry
  RETRY_EPOCH_BUMP,           // re-numbered by an epoch bump after it was written (KAFKA-14034)
  RETRY_PRODUCER_ID_EXPIRED,  // the broker forgot the producer id (producer.id.expiration.ms)
  RETRY_AFTER_TRUNCATION,     // the written attempt was truncated away after a consumer read it
};

// The path by which a producer-side copy got into the topic
// (metrics producer_retry_by_path.*; docs/model.md §10's paths a, b, c).
enum class ProducerPath : std::uint8_t {
  NOT_IDEMPOTENT,
  EPOCH_BUMP_RESEND,
  PRODUCER_ID_EXPIRED,
  APPLICATION_RESEND,
  AFTER_TRUNCATION,
  COUNT,
};

// Why the sink inserted a range: decides the entry point of a duplicate row
// when the same Kafka record is inserted more than once.
enum class InsertTag : std::uint8_t {
  NORMAL,      // first delivery of these offsets to this task
  REDELIVERY,  // WorkerSinkTask re-put the same batch after a RetriableException
  REPLAY,      // re-read after a restart, crash or rebalance
  STATE_RESET, // the connector's ZERO branch, or a wiped / deleted state row
};

// Why a logical record is missing from ClickHouse after drain (docs/model.md §3).
// Lower values win when several apply.
enum class LossCause : std::uint8_t {
  DLQ_ONLY,
  DROPPED_NO_DLQ,
  KAFKA_TRUNCATED,
  RETENTION_EXPIRED,
  SEND_FAILED_NOT_RESENT,
  INSERT_LOST,
  COUNT,
};

// The entry point a duplicate row is attributed to (docs/model.md §1, §3).
enum class EntryPoint : std::uint8_t {
  PRODUCER_RETRY,
  INSERT_TIMEOUT_REDELIVERY,
  TASK_RESTART_REPLAY,
  MANUAL_RESEND,
  STATE_RESET,
  COUNT,
};

std::string_view to_string(LossCause c);   // metric suffix, e.g. "dlq_only"
std::string_view to_string(EntryPoint e);  // metric suffix, e.g. "producer_retry"
std::string_view to_string(ProducerPath p);  // metric suffix, e.g. "epoch_bump_resend"
// The path of a producer-side copy of this cause (COUNT for ORIGINAL and MANUAL_RESEND).
ProducerPath producer_path(CopyCause c);

}  // namespace pipesim::ledger
