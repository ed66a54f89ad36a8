// pipesim report of a sweep: for each swept key, the mean duplicate rows and
// lost records per day (or per window, as run's table says) over its values
// with 95% bands (one line per combination of the other keys), and every
// point's numbers per run.
#include <map>

#include "cli/report_pages.h"
#include "models/pipeline/estimates.h"
#include "sim/config/duration.h"
#include "sim/report/summary.h"

namespace pipesim::cli {
namespace {

using sim::format_number;
using sim::json_pointer;

constexpr std::size_t kMaxSeries = 8;  // more lines than this are unreadable on one chart

const Json* point_metric(const Json& point, const std::string& metric) {
  if (!point.contains("metrics") || !point.at("metrics").contains(metric)) return nullptr;
  return &point.at("metrics").at(metric);
}

// The points' period, as run's table names it: runs of whole days give
// figures per day (a run's totals / its days), shorter runs per window (a
// run's totals). run.duration may itself be swept: then each point's own.
struct SweepPeriod {
  std::string words = "per run";
  double scale = 1;  // a run's totals / scale = the figure per period
};
SweepPeriod sweep_period(const Json& manifest, const Json& points) {
  const Json& base = manifest.at("base_config");
  const auto run_key = [&](const char* key, const char* fallback) {
    return base.contains("run") && base.at("run").contains(key) &&
                   base.at("run").at(key).is_string()
               ? base.at("run").at(key).get<std::string>()
               : std::string(fallback);
  };
  if (manifest.at("grid").contains("run.duration") || manifest.at("grid").contains("run.start"))
    return {};
  const auto duration = sim::parse_duration(run_key("duration", "1d"));
  const auto start = sim::parse_duration(run_key("start", "0s"));
  if (!duration || !start || points.empty()) return {};
  const double days = duration->as_seconds() / 86400.0;
  return {pipeline::period_words(days, start->as_seconds() / 3600.0),
          pipeline::whole_days(days) ? days : 1.0};
}

void key_charts(sim::HtmlPage& page, const Json& grid, const Json& points, const std::string& key,
                const std::vector<std::string>& metrics, const SweepPeriod& period) {
  const Json& xs = grid.at(key);
  Json labels = Json::array();
  for (const auto& x : xs) labels.push_back(value_text(x));
  // The series: each combination of the other keys' values, in point order.
  std::vector<std::string> series_names;
  std::map<std::string, std::map<std::string, std::size_t>> at;  // series -> x -> point index
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Json& params = points.at(i).at("params");
    std::string series;
    for (const auto& [k, v] : params.items()) {
      if (k != key) series += (series.empty() ? "" : ", ") + k + "=" + value_text(v);
    }
    if (series.empty()) series = "all points";
    if (!at.count(series)) series_names.push_back(series);
    at[series][params.at(key).dump()] = i;
  }
  const bool capped = series_names.size() > kMaxSeries;
  if (capped) series_names.resize(kMaxSeries);
  for (const auto& metric : metrics) {
    Json datasets = Json::array();
    for (const auto& s : series_names) {
      Json values = Json::array(), lo = Json::array(), hi = Json::array();
      Json src = Json::array(), lo_src = Json::array(), hi_src = Json::array();
      for (const auto& x : xs) {
        const auto it = at[s].find(x.dump());
        const Json* m = it == at[s].end() ? nullptr : point_metric(points.at(it->second), metric);
        if (!m) {  // a point not run yet (a sweep stopped before its end)
          for (Json* a : {&values, &lo, &hi, &src, &lo_src, &hi_src}) a->push_back(nullptr);
          continue;
        }
        const std::string i = std::to_string(it->second);
        values.push_back((*m).at("mean").get<double>() / period.scale);
        lo.push_back((*m).at("ci95").at(0).get<double>() / period.scale);
        hi.push_back((*m).at("ci95").at(1).get<double>() / period.scale);
        src.push_back(json_pointer({"points", i, "metrics", metric, "mean"}));
        lo_src.push_back(json_pointer({"points", i, "metrics", metric, "ci95", "0"}));
        hi_src.push_back(json_pointer({"points", i, "metrics", metric, "ci95", "1"}));
      }
      datasets.push_back({{"name", s},
                          {"scale", period.scale},
                          {"values", values},
                          {"lo", lo},
                          {"hi", hi},
                          {"src", src},
                          {"lo_src", lo_src},
                          {"hi_src", hi_src}});
    }
    // All zero: a chart would be flat lines on the axis; the page says it in words.
    bool all_zero = true;
    for (const auto& d : datasets) {
      for (const auto& v : d.at("values"))
        all_zero = all_zero && (v.is_null() || v.get<double>() == 0);
    }
    if (all_zero) {
      page.paragraph(metric + " " + period.words + " over " + key + ": 0 at every point.", "note");
      continue;
    }
    page.chart({{"kind", "lines"},
                {"title", metric + " " + period.words + " over " + key},
                {"x_label", key},
                {"y_label", metric + " (mean " + period.words + ")"},
                {"labels", labels},
                {"datasets", datasets}},
               std::string("lines: the mean over the seeds; bands: its 95% confidence interval") +
                   (capped ? "; the first " + std::to_string(kMaxSeries) +
                                 " combinations of the other keys shown"
                           : ""));
  }
}

}  // namespace

sim::HtmlPage sweep_page(const Json& result, const std::string& name) {
  const Json& manifest = result.at("sweep");
  const Json& points = result.at("points");
  const Json& grid = manifest.at("grid");
  sim::HtmlPage page("pipesim sweep: " + name);
  const std::uint64_t count = manifest.at("seeds").at("count").get<std::uint64_t>();
  page.paragraph("pipesim " + manifest.value("pipesim_version", std::string("?")) +
                     "  base config " + manifest.value("base_config_digest", std::string()) + "  " +
                     std::to_string(points.size()) + " of " +
                     std::to_string(manifest.value("points", 0)) + " points  " +
                     std::to_string(count) + " seeds each",
                 "meta");
  page.heading("The grid");
  sim::HtmlTable g{{"key", "values"}, {}};
  for (const auto& [key, values] : grid.items()) {
    std::string text;
    for (const auto& v : values) text += (text.empty() ? "" : ", ") + value_text(v);
    g.rows.push_back({{key, "", "text"}, {text, "", "text"}});
  }
  page.table(g);
  const std::vector<std::string> metrics = {"duplicate_rows", "lost_records"};
  const SweepPeriod period = sweep_period(manifest, points);
  for (const auto& [key, values] : grid.items()) {
    if (values.size() < 2) continue;
    page.heading("Over " + key);
    key_charts(page, grid, points, key, metrics, period);
  }
  page.heading("Every point");
  sim::HtmlTable t{{"point"}, {}};
  for (const auto& [key, values] : grid.items()) t.header.push_back(key);
  for (const auto& m : metrics) {
    t.header.push_back(m + " (mean per run)");
    t.header.push_back("95% CI");
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Json& p = points.at(i);
    std::vector<sim::HtmlCell> row{{format_number(p.at("point").get<double>()),
                                    json_pointer({"points", std::to_string(i), "point"})}};
    for (const auto& [key, values] : grid.items()) {
      row.push_back(
          {p.at("params").contains(key) ? value_text(p.at("params").at(key)) : "", "", "text"});
    }
    for (const auto& m : metrics) {
      const Json* s = point_metric(p, m);
      if (!s) {
        row.push_back({"", "", "text"});
        row.push_back({"", "", "text"});
        continue;
      }
      row.push_back({format_number((*s).at("mean").get<double>()),
                     json_pointer({"points", std::to_string(i), "metrics", m, "mean"})});
      row.push_back(
          {interval_text((*s).at("ci95").at(0).get<double>(), (*s).at("ci95").at(1).get<double>()),
           json_pointer({"points", std::to_string(i), "metrics", m, "ci95"})});
    }
    t.rows.push_back(std::move(row));
  }
  page.table(t);
  page.heading("Reproduce");
  page.paragraph(
      "Save the base config below (with the grid as its \"sweep\" section) as grid_config.json, "
      "then:");
  page.preformatted("pipesim sweep grid_config.json --seeds " + std::to_string(count) + " --out " +
                    name + "\npipesim report " + name + " --out report.html\n");
  Json config = manifest.at("base_config");
  config["sweep"] = grid;
  config_section(page, config, "Base config and grid");
  return page;
}

}  // namespace pipesim::cli
