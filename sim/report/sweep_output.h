// What a sweep writes (README "pipesim sweep"): a JSON line per point with
// the point's key values and every metric's statistics, a JSON line per point
// and seed (--per-seed), and a CSV with one row per point that pandas reads
// as it is. Numbers are written so that they read back as the same double.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/experiment/metrics.h"
#include "sim/experiment/statistics.h"

namespace pipesim::sim {

// {"point":P,"params":{...},"config_digest":"...","seeds":{"first":F,"count":N},"metrics":{...}}\n
// (metrics nested as in `pipesim run --format json`).
std::string point_line(std::size_t point, const nlohmann::ordered_json& params,
                       const std::string& config_digest, std::uint64_t first_seed,
                       std::uint64_t seeds, const std::vector<MetricSummary>& summaries);
// One {"point":P,"params":{...},"seed":S,"metrics":{...plain numbers}}\n per run, in seed order;
// with importance weights, "weight":W before "metrics".
std::string seed_lines(std::size_t point, const nlohmann::ordered_json& params,
                       std::uint64_t first_seed, const std::vector<Metrics>& runs,
                       const std::vector<double>* weights = nullptr);

// The "point" of a point or seed line; throws std::runtime_error if the line
// is not such a line.
std::size_t point_of_line(const std::string& line);

// The CSV summary of point lines (in point order): a header
//   point,<each swept key>,config_digest,<metric>_mean,<metric>_stddev,
//   <metric>_ci95_lo,<metric>_ci95_hi,<metric>_p50,<metric>_p95,<metric>_p99,...
// then one row per line. Key values are written as in the grid (strings
// without quotes, true/false, JSON text for lists), quoted per RFC 4180 when
// they hold a comma, a quote or a line break. Throws std::runtime_error when
// the lines do not share the same keys and metrics.
std::string summary_csv(const std::vector<std::string>& point_lines);

// A number for CSV: integers without a fraction, otherwise the shortest
// decimal that reads back as the same double; NaN as an empty cell.
std::string csv_number(double v);

}  // namespace pipesim::sim
