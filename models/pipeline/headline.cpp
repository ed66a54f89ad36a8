#include "models/pipeline/headline.h"

#include "models/pipeline/estimates.h"

namespace pipesim::pipeline {

const std::vector<std::string>& duplicate_entry_points() {
  static const std::vector<std::string> names = {"producer_retry", "insert_timeout_redelivery",
                                                 "task_restart_replay", "manual_resend",
                                                 "state_reset"};
  return names;
}

const std::vector<std::string>& loss_causes() {
  static const std::vector<std::string> names = {
      "dlq_only",          "dropped_no_dlq",         "kafka_truncated",
      "retention_expired", "send_failed_not_resent", "insert_lost"};
  return names;
}

const std::vector<HeadlineRow>& headline_rows() {
  static const std::vector<HeadlineRow> rows = [] {
    std::vector<HeadlineRow> r;
    r.push_back({"duplicate rows per day", "duplicate_rows_per_day"});
    for (const auto& e : duplicate_entry_points()) {
      r.push_back({"  by " + e, "duplicate_rows_by_entry." + e + "_per_day"});
    }
    r.push_back({"lost records per day", "lost_records_per_day"});
    for (const auto& c : loss_causes())
      r.push_back({"  by " + c, "lost_records_by_cause." + c + "_per_day"});
    r.push_back({"runs losing any record", "lost_records_probability"});
    r.push_back({"  30 days of such runs losing any", "lost_records_probability_per_month"});
    r.push_back({"pending records at the end (after drain)", "pending_records"});
    r.push_back({"worker crashes stopping the connector", "stopped_per_crash"});
    r.push_back({"  with State MISMATCH (these rows overlap)", "state_mismatch_per_crash"});
    r.push_back({"  with State CONTAINS", "state_contains_per_crash"});
    r.push_back({"  with ERROR State", "error_state_per_crash"});
    r.push_back({"rebalances/restarts stopping the connector", "stopped_per_rebalance"});
    r.push_back({"  with State MISMATCH", "state_mismatch_per_rebalance"});
    r.push_back({"duplicate rows per worker crash", "duplicate_rows_per_crash"});
    r.push_back({"DLQ records already in ClickHouse per day", "dlq_records_in_clickhouse_per_day"});
    r.push_back({"DLQ records missing from ClickHouse per day", "dlq_records_missing_per_day"});
    // Summed over the tasks: 8 tasks FAILED for an hour are 28,800 task-seconds.
    r.push_back({"task downtime per day (task-seconds)", "task_downtime_s_per_day"});
    return r;
  }();
  return rows;
}

std::vector<HeadlineRow> headline_rows_for(double days, double start_hour) {
  std::vector<HeadlineRow> rows = headline_rows();
  const std::string per = period_words(days, start_hour);
  for (auto& row : rows) {
    row.estimate = in_period(row.estimate, days);
    if (const auto at = row.label.find(" per day"); at != std::string::npos)
      row.label.replace(at, 8, " " + per);
  }
  return rows;
}

}  // namespace pipesim::pipeline
