// The headline of a run: the answers of docs/model.md §1 first — duplicates and
// losses per day by entry point and cause, how often a disruption stops the
// connector, the DLQ split — as (label, estimate) pairs, shared by run's table
// and pipesim report.
#pragma once

#include <string>
#include <vector>

namespace pipesim::pipeline {

struct HeadlineRow {
  std::string label;     // "duplicate rows per day"; a breakdown row starts with two blanks
  std::string estimate;  // its name in the estimates: "duplicate_rows_per_day"
};

const std::vector<HeadlineRow>& headline_rows();

// The rows as a run of `days` days from `start_hour` reports them: a window
// shorter than whole days names its figures per window ("duplicate rows per
// 6h window", duplicate_rows_per_window; models/pipeline/estimates.h).
std::vector<HeadlineRow> headline_rows_for(double days, double start_hour);

// The duplicate entry points and loss causes, in the order the headline lists them.
const std::vector<std::string>& duplicate_entry_points();
const std::vector<std::string>& loss_causes();

}  // namespace pipesim::pipeline
