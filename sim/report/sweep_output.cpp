#include "sim/report/sweep_output.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

#include "sim/report/summary.h"

namespace pipesim::sim {
namespace {

using Json = nlohmann::ordered_json;

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_value(const Json& v) {
  if (v.is_string()) return csv_field(v.get<std::string>());
  if (v.is_number_float()) return csv_number(v.get<double>());
  if (v.is_null()) return "";
  return csv_field(v.dump());
}

// Column names and values of a nested metrics object: a statistics leaf
// (an object with "ci95") becomes <name>_mean, ..., <name>_ci95_lo, <name>_ci95_hi, ...
void flatten(const Json& node, const std::string& name, std::vector<std::string>& columns,
             std::vector<std::string>& values) {
  if (node.is_object() && node.contains("ci95")) {
    for (const auto& [stat, v] : node.items()) {
      if (stat == "ci95") {
        if (!v.is_array() || v.size() != 2) throw std::runtime_error("bad ci95 in metric " + name);
        columns.push_back(name + "_ci95_lo");
        values.push_back(csv_value(v[0]));
        columns.push_back(name + "_ci95_hi");
        values.push_back(csv_value(v[1]));
      } else {
        columns.push_back(name + "_" + stat);
        values.push_back(csv_value(v));
      }
    }
    return;
  }
  if (node.is_object()) {
    for (const auto& [key, child] : node.items())
      flatten(child, name.empty() ? key : name + "." + key, columns, values);
    return;
  }
  columns.push_back(name);
  values.push_back(csv_value(node));
}

Json parse_line(const std::string& line) {
  Json j;
  try {
    j = Json::parse(line);
  } catch (const Json::parse_error&) {
    throw std::runtime_error("not a JSON line");
  }
  if (!j.is_object() || !j.contains("point") || !j["point"].is_number_unsigned() ||
      !j.contains("params") || !j["params"].is_object() || !j.contains("metrics") ||
      !j["metrics"].is_object()) {
    throw std::runtime_error("not a sweep line (expected \"point\", \"params\" and \"metrics\")");
  }
  return j;
}

}  // namespace

std::string csv_number(double v) {
  if (std::isnan(v)) return "";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, static_cast<long long>(v));
    return std::string(buf, r.ptr);
  }
  // Shortest round-trip digits, never in exponent form (pandas reads both,
  // people read this one).
  char buf[512];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  if (r.ec != std::errc()) {
    const auto g = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, g.ptr);
  }
  return std::string(buf, r.ptr);
}

std::string point_line(std::size_t point, const nlohmann::ordered_json& params,
                       const std::string& config_digest, std::uint64_t first_seed,
                       std::uint64_t seeds, const std::vector<MetricSummary>& summaries) {
  Json line;
  line["point"] = point;
  line["params"] = params;
  line["config_digest"] = config_digest;
  line["seeds"] = {{"first", first_seed}, {"count", seeds}};
  line["metrics"] = metrics_json(summaries);
  return line.dump() + "\n";
}

std::string seed_lines(std::size_t point, const nlohmann::ordered_json& params,
                       std::uint64_t first_seed, const std::vector<Metrics>& runs,
                       const std::vector<double>* weights) {
  std::string out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    Json line;
    line["point"] = point;
    line["params"] = params;
    line["seed"] = first_seed + i;
    if (weights != nullptr) line["weight"] = (*weights)[i];
    line["metrics"] = metric_values_json(runs[i]);
    out += line.dump() + "\n";
  }
  return out;
}

std::size_t point_of_line(const std::string& line) {
  return parse_line(line)["point"].get<std::size_t>();
}

std::string summary_csv(const std::vector<std::string>& point_lines) {
  std::string out;
  std::vector<std::string> header;
  for (std::size_t i = 0; i < point_lines.size(); ++i) {
    const Json line = parse_line(point_lines[i]);
    std::vector<std::string> columns{"point"};
    std::vector<std::string> values{csv_value(line["point"])};
    for (const auto& [key, v] : line["params"].items()) {
      columns.push_back(key);
      values.push_back(csv_value(v));
    }
    columns.push_back("config_digest");
    values.push_back(line.contains("config_digest") ? csv_value(line["config_digest"]) : "");
    flatten(line["metrics"], "", columns, values);
    if (i == 0) {
      header = columns;
      for (std::size_t c = 0; c < header.size(); ++c) out += (c ? "," : "") + csv_field(header[c]);
      out += "\n";
    } else if (columns != header) {
      throw std::runtime_error("point " + values[0] + " has other columns than point " +
                               csv_value(Json::parse(point_lines[0])["point"]));
    }
    for (std::size_t c = 0; c < values.size(); ++c) out += (c ? "," : "") + values[c];
    out += "\n";
  }
  return out;
}

}  // namespace pipesim::sim
