// pipesim report of a run: the headline with its intervals, duplicates by
// entry point and losses by cause as bars with 95% intervals, the per-seed
// distribution of the main metrics, the worst seeds' stories, every metric,
// the effective config and how to reproduce the result.
#include <algorithm>

#include "cli/report_pages.h"
#include "models/pipeline/estimates.h"
#include "models/pipeline/headline.h"
#include "sim/config/duration.h"
#include "sim/experiment/histogram_bins.h"
#include "sim/report/summary.h"

namespace pipesim::cli {
namespace {

using sim::format_number;
using sim::json_pointer;

// The breakdown of a headline total as bars: one per entry point or cause,
// with the estimate's 95% interval.
void breakdown_chart(sim::HtmlPage& page, const Json& estimates, const std::string& prefix,
                     const std::vector<std::string>& names, const std::string& title,
                     const std::string& y_label, double days) {
  Json labels = Json::array(), values = Json::array(), lo = Json::array(), hi = Json::array();
  Json src = Json::array(), lo_src = Json::array(), hi_src = Json::array();
  for (const auto& n : names) {
    const std::string key = pipeline::in_period(prefix + n + "_per_day", days);
    if (!estimates.contains(key)) continue;
    const Json& e = estimates.at(key);
    labels.push_back(n);
    values.push_back(e.at("value"));
    lo.push_back(e.at("ci95").at(0));
    hi.push_back(e.at("ci95").at(1));
    src.push_back(json_pointer({"estimates", key, "value"}));
    lo_src.push_back(json_pointer({"estimates", key, "ci95", "0"}));
    hi_src.push_back(json_pointer({"estimates", key, "ci95", "1"}));
  }
  if (labels.empty()) return;
  // All zero: a chart would be an empty frame; the page says it in words.
  double highest = 0;
  bool all_zero = true;
  for (std::size_t i = 0; i < values.size(); ++i) {
    all_zero = all_zero && values[i].get<double>() == 0;
    highest = std::max(highest, hi[i].get<double>());
  }
  if (all_zero) {
    page.paragraph(title + ": 0 in every seed, for each of the " + std::to_string(labels.size()) +
                       " (each 95% interval within [0, " + format_number(highest) + "]).",
                   "note");
    return;
  }
  page.chart({{"kind", "bars"},
              {"title", title},
              {"y_label", y_label},
              {"labels", labels},
              {"datasets", Json::array({{{"name", "estimate"},
                                         {"values", values},
                                         {"lo", lo},
                                         {"hi", hi},
                                         {"src", src},
                                         {"lo_src", lo_src},
                                         {"hi_src", hi_src}}})}},
             "bars: the estimate; black lines: its 95% confidence interval");
}

// The run's period: whole days give figures per day, a shorter window per
// window (models/pipeline/estimates.h), as run's table names them.
struct Period {
  double days = 1;
  double start_hour = 0;
};
Period period_of(const Json& result) {
  Period p;
  if (const auto d = sim::parse_duration(result.value("duration", std::string("1d"))))
    p.days = d->as_seconds() / 86400.0;
  const Json* run = result.contains("config") ? &result.at("config") : nullptr;
  if (run != nullptr && run->contains("run") && run->at("run").contains("start") &&
      run->at("run").at("start").is_string()) {
    if (const auto s = sim::parse_duration(run->at("run").at("start").get<std::string>()))
      p.start_hour = s->as_seconds() / 3600.0;
  }
  return p;
}

void headline_section(sim::HtmlPage& page, const Json& estimates, const Period& period) {
  page.heading("Headline");
  sim::HtmlTable t{{"answer", "estimate", "95% CI", ""}, {}};
  for (const auto& row : pipeline::headline_rows_for(period.days, period.start_hour)) {
    if (!estimates.contains(row.estimate)) continue;
    const Json& e = estimates.at(row.estimate);
    const bool indented = row.label.rfind("  ", 0) == 0;
    t.rows.push_back(
        {{indented ? row.label.substr(2) : row.label, "", indented ? "indent" : "text"},
         {format_number(e.at("value").get<double>()),
          json_pointer({"estimates", row.estimate, "value"})},
         e.contains("no_interval")
             ? sim::HtmlCell{"-", "", "text"}
             : sim::HtmlCell{interval_text(e.at("ci95").at(0).get<double>(),
                                           e.at("ci95").at(1).get<double>()),
                             json_pointer({"estimates", row.estimate, "ci95"})},
         {e.contains("no_interval")
              ? e.value("note", std::string()) + (e.contains("note") ? "; " : "") +
                    e.at("no_interval").get<std::string>()
              : e.value("note", std::string()),
          "", "text"}});
  }
  page.table(t);
  const std::string per = pipeline::period_words(period.days, period.start_hour);
  breakdown_chart(page, estimates, "duplicate_rows_by_entry.", pipeline::duplicate_entry_points(),
                  "Duplicate rows " + per + " by entry point", "rows " + per, period.days);
  breakdown_chart(page, estimates, "lost_records_by_cause.", pipeline::loss_causes(),
                  "Lost records " + per + " by cause", "records " + per, period.days);
}

void distribution_section(sim::HtmlPage& page, const Json& result) {
  page.heading("Per-seed distributions");
  if (!result.contains("runs")) {
    page.paragraph(
        "This result has no per-seed metrics: run it with --per-seed to see their distributions.",
        "note");
    return;
  }
  const Json& runs = result.at("runs");
  const bool weighted = result.contains("importance");
  for (const char* metric :
       {"duplicate_rows", "lost_records", "task_downtime_s", "max_lag_records"}) {
    std::vector<double> values;
    for (const auto& r : runs) {
      if (r.contains("metrics") && r.at("metrics").contains(metric))
        values.push_back(r.at("metrics").at(metric).get<double>());
    }
    if (values.empty()) continue;
    // Every seed the same (no loss in any, say): one bar says less than a sentence.
    if (std::all_of(values.begin(), values.end(), [&](double v) { return v == values.front(); })) {
      page.paragraph(std::string(metric) + " per run: " + format_number(values.front()) +
                         " in every one of the " +
                         sim::counted(static_cast<double>(values.size()), "seed") + ".",
                     "note");
      continue;
    }
    const std::vector<double> edges = sim::histogram_edges(values);
    const std::vector<double> counts = sim::histogram_counts(values, edges);
    Json labels = Json::array();
    for (std::size_t i = 0; i + 1 < edges.size(); ++i) {
      labels.push_back(edges.size() == 2 && edges[0] == edges[1]
                           ? format_number(edges[0])
                           : "[" + format_number(edges[i]) + ", " + format_number(edges[i + 1]) +
                                 (i + 2 == edges.size() ? "]" : ")"));
    }
    page.chart({{"kind", "histogram"},
                {"title", std::string(metric) + " per run"},
                {"x_label", metric},
                {"y_label", "seeds"},
                {"labels", labels},
                {"histogram_of", {{"runs", "/runs"}, {"metric", metric}, {"edges", edges}}},
                {"datasets", Json::array({{{"name", "seeds"}, {"values", counts}}})}},
               sim::counted(static_cast<double>(values.size()), "seed") +
                   (weighted ? " (counted unweighted: the estimates above weight each seed by its "
                               "likelihood ratio)"
                             : ""),
               760, 240);
  }
}

void stories_section(sim::HtmlPage& page, const std::vector<SeedStory>& stories) {
  page.heading("Worst seeds");
  if (stories.empty()) {
    page.paragraph("No seed had a duplicate row or a lost record.", "note");
    return;
  }
  for (const auto& s : stories) {
    page.heading("most " + s.metric + ": seed " + std::to_string(s.seed) + " (" +
                     format_number(s.value) + ")",
                 3);
    page.paragraph("Replay: " + s.command);
    if (!s.unavailable.empty()) {
      page.paragraph(s.unavailable, "note");
      continue;
    }
    std::string text;
    for (const auto& line : s.story.lines) text += line + "\n";
    text += "\n" + s.story.outcome + "\n";
    for (const auto& g : s.story.groups) text += "  " + g + "\n";
    if (s.story.hidden_groups > 0) {
      text += "  ... and " + std::to_string(s.story.hidden_groups) +
              " more groups (pipesim explain --format json)\n";
    }
    page.preformatted(text);
  }
}

// Every metric's row: the nested objects of the result flattened to dotted names.
void metric_rows(const Json& node, std::vector<std::string>& path, sim::HtmlTable& t) {
  if (node.contains("mean")) {
    std::string name;
    for (std::size_t i = 1; i < path.size(); ++i) name += (i > 1 ? "." : "") + path[i];
    const auto at = [&](const std::string& field) {
      std::vector<std::string> p = path;
      p.push_back(field);
      return json_pointer(p);
    };
    const auto num = [&](const char* field) { return format_number(node.at(field).get<double>()); };
    t.rows.push_back(
        {{name, "", "text"},
         {num("mean"), at("mean")},
         {interval_text(node.at("ci95").at(0).get<double>(), node.at("ci95").at(1).get<double>()),
          at("ci95")},
         {num("p50"), at("p50")},
         {num("p95"), at("p95")},
         {num("p99"), at("p99")}});
    return;
  }
  for (const auto& [key, child] : node.items()) {
    if (!child.is_object()) continue;
    path.push_back(key);
    metric_rows(child, path, t);
    path.pop_back();
  }
}

}  // namespace

sim::HtmlPage run_page(const Json& result, const std::string& name,
                       const std::vector<SeedStory>& stories) {
  sim::HtmlPage page("pipesim run: " + name);
  const std::uint64_t first = result.at("seeds").at("first").get<std::uint64_t>();
  const std::uint64_t count = result.at("seeds").at("count").get<std::uint64_t>();
  page.paragraph("pipesim " + result.value("pipesim_version", std::string("?")) + "  config " +
                     result.value("config_digest", std::string("?")) + "  seeds " +
                     std::to_string(first) + ".." + std::to_string(first + count - 1) + " (" +
                     std::to_string(count) + " runs)  " +
                     result.value("duration", std::string("?")) + " simulated" +
                     (period_of(result).start_hour > 0
                          ? " from " + format_number(period_of(result).start_hour) + "h of the day"
                          : "") +
                     " + " + result.value("drain", std::string("?")) + " drain",
                 "meta");
  if (result.contains("importance")) {
    const Json& imp = result.at("importance");
    page.paragraph(
        "Importance sampling: faults drawn at " + imp.value("tilt", std::string()) +
            " x their rates; each seed weighted by its likelihood ratio (effective sample size " +
            format_number(imp.value("effective_sample_size", 0.0)) + ").",
        "note");
  }
  headline_section(page, result.at("estimates"), period_of(result));
  distribution_section(page, result);
  stories_section(page, stories);
  page.heading("Every metric (per run)");
  page.open_details("show all " + std::string("metrics"));
  sim::HtmlTable t{{"metric", "mean", "95% CI", "p50", "p95", "p99"}, {}};
  std::vector<std::string> path{"metrics"};
  metric_rows(result.at("metrics"), path, t);
  page.table(t);
  page.close_details();
  page.heading("Reproduce");
  const std::string seeds =
      count == 1 ? "--seed " + std::to_string(first) : "--seeds " + std::to_string(count);
  std::string tilt;
  if (result.contains("importance"))
    tilt = " --importance " + result.at("importance").value("tilt", std::string());
  page.paragraph("Save the effective config below as config.json (it holds every default), then:");
  page.preformatted("pipesim run config.json " + seeds + tilt +
                    " --per-seed --format json --out run.json\n" +
                    "pipesim report run.json --out report.html\n");
  if (result.contains("ignored") && !result.at("ignored").empty()) {
    std::string keys;
    for (const auto& k : result.at("ignored")) keys += (keys.empty() ? "" : ", ") + value_text(k);
    page.paragraph("Keys the input gave that pipesim ignores: " + keys, "note");
  }
  config_section(page, result.at("config"), "Effective config");
  return page;
}

}  // namespace pipesim::cli
