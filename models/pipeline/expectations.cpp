#include "models/pipeline/expectations.h"

#include "models/pipeline/config.h"
#include "models/pipeline/estimates.h"
#include "models/pipeline/metrics.h"
#include "sim/config/options.h"
#include "sim/report/summary.h"

namespace pipesim::pipeline {

std::vector<Expectation> read_expectations(const std::string& path) {
  sim::Metrics probe_run;
  for (const auto& name : metric_names()) probe_run.push_back({name, 0.0});
  const std::vector<sim::Metrics> probe = {probe_run};
  const nlohmann::json raw = read_config_file(path);
  const nlohmann::json list = raw.is_object() && raw.contains("expect") ? raw["expect"] : raw;
  const std::string where = raw.is_object() ? "expect" : "(top level)";
  if (!list.is_array() || list.empty()) {
    throw sim::ConfigError("expectation error at " + where +
                           ": expected a non-empty list of "
                           "{\"metric\", \"max\" and/or \"min\", \"confidence\"}, found " +
                           sim::describe_json_value(list));
  }
  std::vector<Expectation> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = "expect[" + std::to_string(i) + "]";
    const auto fail = [&](const std::string& key, const std::string& what) {
      throw sim::ConfigError("expectation error at " + at + (key.empty() ? "" : "." + key) + ": " +
                             what);
    };
    const nlohmann::json& e = list[i];
    if (!e.is_object()) fail("", "expected an object, found " + sim::describe_json_value(e));
    for (const auto& [key, value] : e.items()) {
      if (key != "metric" && key != "max" && key != "min" && key != "confidence") {
        fail(key, "unknown key (expected metric, max, min, confidence)");
      }
    }
    Expectation x;
    if (!e.contains("metric") || !e["metric"].is_string()) fail("metric", "expected a metric name");
    x.metric = e["metric"].get<std::string>();
    if (!estimate(probe, x.metric, 1.0)) {
      std::vector<std::string> known = metric_names();
      for (const char* d :
           {"duplicate_rows_per_day", "state_mismatch_per_crash", "lost_records_per_day"}) {
        known.emplace_back(d);
      }
      const std::string hint = sim::closest_key(x.metric, known);
      fail(
          "metric",
          "unknown metric \"" + x.metric + "\"" +
              (hint.empty() ? " (a metric, or <metric>_per_day/_per_window/_per_month/_per_million/"
                              "_per_crash/_per_rebalance, or state_mismatch_per_crash ...)"
                            : "; did you mean \"" + hint + "\"?"));
    }
    for (const char* bound : {"max", "min"}) {
      if (!e.contains(bound)) continue;
      if (!e[bound].is_number())
        fail(bound, "expected a number, found " + sim::describe_json_value(e[bound]));
      (std::string(bound) == "max" ? x.max : x.min) = e[bound].get<double>();
    }
    if (!x.max && !x.min) fail("", "expected \"max\" and/or \"min\"");
    if (x.max && x.min && *x.min > *x.max) {
      fail("min", "expected at most max (" + sim::format_number(*x.max) + "), found " +
                      sim::format_number(*x.min) + ": no estimate could meet both");
    }
    if (e.contains("confidence")) {
      if (!e["confidence"].is_number() || e["confidence"].get<double>() <= 0.5 ||
          e["confidence"].get<double>() >= 1) {
        fail("confidence", "expected a number between 0.5 and 1 (exclusive), found " +
                               sim::describe_json_value(e["confidence"]));
      }
      x.confidence = e["confidence"].get<double>();
    }
    out.push_back(x);
  }
  return out;
}

void check_period(const std::vector<Expectation>& expectations, double days) {
  for (std::size_t i = 0; i < expectations.size(); ++i) {
    const std::string problem = period_problem(expectations[i].metric, days);
    if (!problem.empty()) {
      throw sim::ConfigError("expectation error at expect[" + std::to_string(i) +
                             "].metric: " + problem);
    }
  }
}

std::vector<std::string> broken_expectations(const std::vector<Expectation>& expectations,
                                             const sim::Metrics& run, double days) {
  std::vector<std::string> broken;
  for (const auto& x : expectations) {
    const auto e = estimate({run}, x.metric, days);
    if (!e) continue;
    const bool above = x.max && e->value > *x.max;
    const bool below = x.min && e->value < *x.min;
    if (above || below) {
      broken.push_back(x.metric + " = " + sim::format_number(e->value) + " (" +
                       (above ? "max " : "min ") + sim::format_number(above ? *x.max : *x.min) +
                       ")");
    }
  }
  return broken;
}

}  // namespace pipesim::pipeline
