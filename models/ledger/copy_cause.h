// Why a copy of a record exists: the vocabulary of the ledger (SPEC §3).
#pragma once

#include <cstdint>
#include <string_view>

namespace pipesim::ledger {

// Why a Kafka record exists.
enum class CopyCause : std::uint8_t {
  ORIGINAL,        // the service's first send
  PRODUCER_RETRY,  // a retry appended again after a lost answer (or an app re-send of kind "retry")
  MANUAL_RESEND,   // re-sent from the retry table
};

// Why the sink inserted a range: decides the entry point of a duplicate row
// when the same Kafka record is inserted more than once.
enum class InsertTag : std::uint8_t {
  NORMAL,      // first delivery of these offsets to this task
  REDELIVERY,  // WorkerSinkTask re-put the same batch after a RetriableException
  REPLAY,      // re-read after a restart, crash or rebalance
  STATE_RESET, // the connector's ZERO branch, or a wiped / deleted state row
};

// Why a logical record is missing from ClickHouse after drain (SPEC §3).
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

// The entry point a duplicate row is attributed to (SPEC §1, §3).
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

}  // namespace pipesim::ledger
