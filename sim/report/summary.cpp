#include "sim/report/summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "sim/experiment/importance.h"

namespace pipesim::sim {
namespace {

nlohmann::ordered_json& nested(nlohmann::ordered_json& root, const std::string& dotted,
                               std::string& leaf) {
  nlohmann::ordered_json* node = &root;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = dotted.find('.', start);
    if (dot == std::string::npos) {
      leaf = dotted.substr(start);
      return *node;
    }
    node = &(*node)[dotted.substr(start, dot - start)];
    start = dot + 1;
  }
}

nlohmann::ordered_json stats_json(const SummaryStats& s) {
  nlohmann::ordered_json o;
  o["mean"] = s.mean;
  o["stddev"] = s.stddev;
  o["ci95"] = {s.ci_lo, s.ci_hi};
  o["p50"] = s.p50;
  o["p95"] = s.p95;
  o["p99"] = s.p99;
  return o;
}

bool is_listed(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// A CSV field (RFC 4180): quoted when it holds a comma, quote or line break.
std::string csv_text(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// A config value as one CSV cell: a string as its text, anything else as JSON.
std::string csv_cell(const nlohmann::ordered_json& value) {
  return csv_text(value.is_string() ? value.get<std::string>() : value.dump());
}

}  // namespace

std::string format_number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, std::fabs(v) >= 100 ? "%.1f" : "%.3g", v);
  return buf;
}

std::string counted(double n, const std::string& noun) {
  return format_number(n) + " " + noun + (n == 1 ? "" : "s");
}

namespace {

nlohmann::ordered_json importance_json(const RunReport& r) {
  double sum = 0, max = 0;
  for (const double w : r.weights) {
    sum += w;
    max = std::max(max, w);
  }
  return {{"tilt", r.importance},
          {"effective_sample_size", effective_sample_size(r.weights)},
          {"weight_mean", r.weights.empty() ? 0.0 : sum / static_cast<double>(r.weights.size())},
          {"weight_max", max}};
}

}  // namespace

nlohmann::ordered_json report_json(const RunReport& r) {
  nlohmann::ordered_json out;
  out["pipesim_version"] = r.version;
  out["config_digest"] = r.config_digest;
  out["seeds"] = {{"first", r.first_seed}, {"count", r.seeds}};
  out["metrics"] = metrics_json(r.summaries);
  if (!r.headline.empty()) {
    nlohmann::ordered_json estimates = nlohmann::ordered_json::object();
    for (const auto& h : r.headline) {
      estimates[h.name] = {{"value", h.value}, {"ci95", {h.lo, h.hi}}};
      if (!h.note.empty()) estimates[h.name]["note"] = h.note;
      if (!h.no_interval.empty()) estimates[h.name]["no_interval"] = h.no_interval;
    }
    out["estimates"] = estimates;
  }
  // After the keys tools read first (pipesim_version, config_digest, seeds, metrics): what ran.
  out["duration"] = r.duration;
  out["drain"] = r.drain;
  out["config"] = r.config;
  out["ignored"] = r.ignored;
  nlohmann::ordered_json extremes = nlohmann::ordered_json::array();
  for (const auto& x : r.extreme_seeds) {
    extremes.push_back({{"metric", x.metric}, {"seed", x.seed}, {"value", x.value}, {"explain", x.explain}});
  }
  out["extreme_seeds"] = extremes;
  if (!r.importance.empty()) out["importance"] = importance_json(r);
  if (!r.runs.empty()) {
    nlohmann::ordered_json runs = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < r.runs.size(); ++i) {
      nlohmann::ordered_json run;
      run["seed"] = r.first_seed + i;
      if (!r.importance.empty()) run["weight"] = r.weights[i];
      run["metrics"] = metric_values_json(r.runs[i]);
      runs.push_back(run);
    }
    out["runs"] = runs;
  }
  return out;
}

nlohmann::ordered_json metrics_json(const std::vector<MetricSummary>& summaries) {
  nlohmann::ordered_json metrics = nlohmann::ordered_json::object();
  for (const auto& m : summaries) {
    std::string leaf;
    nested(metrics, m.name, leaf)[leaf] = stats_json(m.stats);
  }
  return metrics;
}

nlohmann::ordered_json metric_values_json(const Metrics& metrics) {
  nlohmann::ordered_json values = nlohmann::ordered_json::object();
  for (const auto& m : metrics) {
    std::string leaf;
    nested(values, m.name, leaf)[leaf] = m.value;
  }
  return values;
}

std::string report_table(const RunReport& r) {
  std::ostringstream out;
  out << "pipesim " << r.version << "  config " << r.config_digest << "  seeds " << r.first_seed
      << ".." << (r.first_seed + r.seeds - 1) << " ("
      << counted(static_cast<double>(r.seeds), "run") << ")";
  if (!r.scenario_line.empty()) out << "  " << r.scenario_line;
  out << "\n";
  if (!r.importance.empty()) {
    const auto j = importance_json(r);
    out << "importance sampling: faults drawn at " << r.importance
        << " x their rates, each seed weighted by its likelihood ratio; effective sample size "
        << format_number(j["effective_sample_size"].get<double>()) << " of " << r.seeds << ", mean weight "
        << format_number(j["weight_mean"].get<double>()) << " (1 expected), largest "
        << format_number(j["weight_max"].get<double>()) << "\n";
  }
  out << "\n";
  char line[256];
  if (!r.headline.empty()) {
    std::snprintf(line, sizeof line, "%-52s %14s  %-31s %s\n", "headline", "estimate", "95% CI", "");
    out << line;
    // One seed leaves most rows without an interval: said once, under the rows.
    const std::string one_seed = "one seed gives no interval";
    bool any_one_seed = false;
    for (const auto& h : r.headline) {
      const bool none = !h.no_interval.empty();
      const std::string ci =
          none ? "-" : "[" + format_number(h.lo) + ", " + format_number(h.hi) + "]";
      const std::string reason = h.no_interval == one_seed ? "" : h.no_interval;
      any_one_seed = any_one_seed || h.no_interval == one_seed;
      const std::string note = reason.empty()   ? h.note
                               : h.note.empty() ? reason
                                                : h.note + "; " + reason;
      std::snprintf(line, sizeof line, "%-52s %14s  %-31s %s\n", h.label.c_str(),
                    format_number(h.value).c_str(), ci.c_str(), note.c_str());
      out << line;
    }
    if (any_one_seed) {
      out << "-: " << one_seed << " (a share of runs or episodes has its Wilson interval); run "
          << "--seeds 2 or more\n";
    }
    for (const auto& note : r.headline_notes) out << note << "\n";
    for (const auto& x : r.extreme_seeds) {
      out << "most " << x.metric << ": seed " << x.seed << " (" << format_number(x.value) << "), its story: "
          << x.explain << "\n";
    }
    out << "\n";
  }
  std::snprintf(line, sizeof line, "%-52s %14s  %-31s %12s %12s %12s\n", "metric (per run)", "mean",
                "95% CI", "p50", "p95", "p99");
  out << line;
  for (const auto& m : r.summaries) {
    // One run gives no interval.
    const std::string ci = r.seeds < 2 ? "-"
                                       : "[" + format_number(m.stats.ci_lo) + ", " +
                                             format_number(m.stats.ci_hi) + "]";
    std::string name = m.name;
    if (is_listed(r.not_modelled, m.name)) name += " *";
    std::snprintf(line, sizeof line, "%-52s %14s  %-31s %12s %12s %12s\n", name.c_str(),
                  format_number(m.stats.mean).c_str(), ci.c_str(), format_number(m.stats.p50).c_str(),
                  format_number(m.stats.p95).c_str(), format_number(m.stats.p99).c_str());
    out << line;
  }
  if (!r.not_modelled.empty()) out << "\n* not modelled yet: reported as 0, not an estimate\n";
  for (const auto& note : r.notes) out << note << "\n";
  return out.str();
}

std::string report_csv(const RunReport& r) {
  std::ostringstream out;
  if (!r.runs.empty()) {
    const bool weighted = !r.importance.empty();
    out << "seed" << (weighted ? ",weight" : "");
    for (const auto& m : r.runs.front()) out << "," << m.name;
    out << "\n";
    for (std::size_t i = 0; i < r.runs.size(); ++i) {
      out << (r.first_seed + i);
      if (weighted) out << "," << format_number(r.weights[i]);
      for (const auto& m : r.runs[i]) out << "," << format_number(m.value);
      out << "\n";
    }
    return out.str();
  }
  out << "metric,mean,stddev,ci95_lo,ci95_hi,p50,p95,p99\n";
  for (const auto& m : r.summaries) {
    const auto& s = m.stats;
    out << m.name << "," << format_number(s.mean) << "," << format_number(s.stddev) << ","
        << format_number(s.ci_lo) << "," << format_number(s.ci_hi) << "," << format_number(s.p50)
        << "," << format_number(s.p95) << "," << format_number(s.p99) << "\n";
  }
  for (const auto& h : r.headline) {
    out << "estimates." << h.name << "," << format_number(h.value) << ",," << format_number(h.lo) << ","
        << format_number(h.hi) << ",,,\n";
  }
  for (const auto& [section, keys] : r.config.items()) {
    if (!keys.is_object()) {
      out << "config." << section << "," << csv_cell(keys) << ",,,,,,\n";
      continue;
    }
    for (const auto& [key, value] : keys.items()) out << "config." << section << "." << key << "," << csv_cell(value) << ",,,,,,\n";
  }
  for (const auto& path : r.ignored) out << "ignored." << csv_text(path) << ",,,,,,,\n";
  if (!r.importance.empty()) {
    const auto j = importance_json(r);
    out << "importance.tilt," << csv_text(r.importance) << ",,,,,,\n";
    for (const char* key : {"effective_sample_size", "weight_mean", "weight_max"})
      out << "importance." << key << "," << format_number(j[key].get<double>()) << ",,,,,,\n";
  }
  return out.str();
}

}  // namespace pipesim::sim
