// The business service around the producer (docs/model.md §4.1): it sends each of
// the workload's records when it arrives (the producer takes them as its
// RecordSource; the ledger gives them their ids) and decides what happens to
// records whose send failed (app.on_send_failure, a model parameter since real services
// differ):
//   - retry: send them again at once, up to app.max_resends times per record
//     (an extra copy this makes is attributed to producer_retry, path
//     application_resend);
//   - retry_table: park them in a table; the manual_resend fault sends the
//     table again (attributed to manual_resend), all of it (blind) or only
//     the keys not yet in ClickHouse (check_by_key asks the ledger, as a
//     real operator would query the table);
//   - drop: give them up.
// A record that is given up, or parked and never sent again, is lost with
// cause send_failed_not_resent unless a copy of it reached ClickHouse anyway
// (an expired batch may have been written).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/ledger/ledger.h"
#include "models/producer/producer.h"
#include "models/producer/producer_options.h"
#include "models/workload/workload.h"
#include "sim/engine/simulation.h"

namespace pipesim::producer {

struct ApplicationCounters {
  std::int64_t resent_records = 0;   // sent again by on_send_failure=retry
  std::int64_t parked_records = 0;   // put into the retry table
  std::int64_t dropped_records = 0;  // given up (drop, or resends exhausted)
  std::int64_t manual_resent_records = 0;
  std::int64_t manual_skipped_records = 0;  // check_by_key: already in ClickHouse
};

class Application final : public SendFailureHandler, public RecordSource {
 public:
  Application(const AppOptions& options, workload::Workload& workload, ledger::Ledger& ledger,
              Producer& producer);

  // Records arrive from now until `stop` (exclusive).
  void start(sim::Time stop);
  // manual_resend fault: sends the retry table again ("blind" or "check_by_key").
  void manual_resend(const std::string& policy);

  void send_failed(const FailedSend& failed) override;
  // RecordSource
  std::int64_t arrived_before(int partition, sim::Time t) override;
  sim::Time arrival_of(int partition, std::int64_t id) override;
  void taken(int partition, std::int64_t end) override;
  [[nodiscard]] const ApplicationCounters& counters() const { return counters_; }
  [[nodiscard]] std::int64_t retry_table_records() const;

 private:
  struct Parked {
    int partition = 0;
    ledger::IdRange ids;
  };
  void give_up(const FailedSend& failed);

  AppOptions options_;
  workload::Workload& workload_;
  ledger::Ledger& ledger_;
  Producer& producer_;
  std::vector<Parked> retry_table_;
  ApplicationCounters counters_;
};

}  // namespace pipesim::producer
