#include "models/producer/application.h"

#include <algorithm>

namespace pipesim::producer {

Application::Application(const AppOptions& options, workload::Workload& workload,
                         ledger::Ledger& ledger, Producer& producer)
    : options_(options),
      workload_(workload),
      ledger_(ledger),
      producer_(producer) {
  producer_.set_failure_handler(this);
  producer_.set_record_source(this);
}

void Application::start(sim::Time stop) { workload_.set_stop(stop); }

std::int64_t Application::arrived_before(int partition, sim::Time t) {
  return workload_.count_before(partition, t);
}

sim::Time Application::arrival_of(int partition, std::int64_t id) {
  return workload_.arrival_time(partition, id);
}

void Application::taken(int partition, std::int64_t end) {
  // Each record's send() gives it the next id of its partition.
  const std::int64_t produced = ledger_.produced(partition);
  if (end > produced) ledger_.emit(partition, end - produced);
}

void Application::give_up(const FailedSend& failed) {
  counters_.dropped_records += failed.ids.count;
  ledger_.record_mark(failed.partition, failed.ids, ledger::LossCause::SEND_FAILED_NOT_RESENT);
}

void Application::send_failed(const FailedSend& failed) {
  if (failed.silent) {
    // acks=0: the service believes the records were sent.
    ledger_.record_mark(failed.partition, failed.ids, ledger::LossCause::SEND_FAILED_NOT_RESENT);
    return;
  }
  // The callback's exception: the application knows these records failed.
  ledger_.record_failed_send(failed.partition, failed.ids);
  if (options_.on_send_failure == "retry") {
    if (failed.resends >= options_.max_resends) {
      give_up(failed);
      return;
    }
    counters_.resent_records += failed.ids.count;
    producer_.send(failed.partition, failed.ids.first, failed.ids.count, ledger::CopyCause::APPLICATION_RESEND,
                   failed.resends + 1);
    return;
  }
  if (options_.on_send_failure == "retry_table") {
    counters_.parked_records += failed.ids.count;
    retry_table_.push_back(Parked{failed.partition, failed.ids});
    // Lost if never sent again (or if the resend fails and stays parked).
    ledger_.record_mark(failed.partition, failed.ids, ledger::LossCause::SEND_FAILED_NOT_RESENT);
    return;
  }
  give_up(failed);
}

std::int64_t Application::retry_table_records() const {
  std::int64_t n = 0;
  for (const auto& p : retry_table_) n += p.ids.count;
  return n;
}

void Application::manual_resend(const std::string& policy) {
  std::vector<Parked> table;
  table.swap(retry_table_);
  std::stable_sort(table.begin(), table.end(), [](const Parked& a, const Parked& b) {
    return a.partition != b.partition ? a.partition < b.partition : a.ids.first < b.ids.first;
  });
  for (const auto& parked : table) {
    std::vector<ledger::IdRange> to_send;
    if (policy == "check_by_key") {
      // Only the keys ClickHouse does not have yet.
      std::int64_t at = parked.ids.first;
      for (const auto& in : ledger_.ids_with_rows(parked.partition, parked.ids)) {
        if (in.first > at) to_send.push_back(ledger::IdRange{at, in.first - at});
        counters_.manual_skipped_records += in.count;
        at = in.end();
      }
      if (at < parked.ids.end()) to_send.push_back(ledger::IdRange{at, parked.ids.end() - at});
    } else {
      to_send.push_back(parked.ids);
    }
    for (const auto& ids : to_send) {
      counters_.manual_resent_records += ids.count;
      producer_.send(parked.partition, ids.first, ids.count, ledger::CopyCause::MANUAL_RESEND, 0);
    }
  }
  producer_.run_sender();
}

}  // namespace pipesim::producer
