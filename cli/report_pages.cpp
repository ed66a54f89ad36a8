// pipesim report of a comparison, a check and a sweep, and what the pages share.
#include "cli/report_pages.h"

#include <algorithm>
#include <map>

#include "sim/report/summary.h"

namespace pipesim::cli {

using sim::format_number;
using sim::json_pointer;

std::string interval_text(double lo, double hi) {
  return "[" + format_number(lo) + ", " + format_number(hi) + "]";
}

std::string value_text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

void config_section(sim::HtmlPage& page, const Json& config, const std::string& title) {
  page.heading(title);
  page.open_details("show the config (JSON, every default)");
  page.preformatted(config.dump(2));
  page.close_details();
}

namespace {

std::string verdict_css(const std::string& verdict) {
  if (verdict.find("better") != std::string::npos) return "B-lower";
  if (verdict.find("worse") != std::string::npos) return "B-higher";
  return "text";
}

// The keys whose values differ between two configs, as "section.key".
void config_differences(const Json& a, const Json& b, const std::string& prefix,
                        sim::HtmlTable& t) {
  std::map<std::string, int> keys;
  for (const auto& [k, v] : a.items()) keys[k] |= 1;
  for (const auto& [k, v] : b.items()) keys[k] |= 2;
  for (const auto& [k, in] : keys) {
    const std::string name = prefix.empty() ? k : prefix + "." + k;
    if (in == 3 && a.at(k).is_object() && b.at(k).is_object()) {
      config_differences(a.at(k), b.at(k), name, t);
    } else if (in != 3 || a.at(k) != b.at(k)) {
      t.rows.push_back({{name, "", "text"},
                        {in & 1 ? value_text(a.at(k)) : "(absent)", "", "text"},
                        {in & 2 ? value_text(b.at(k)) : "(absent)", "", "text"}});
    }
  }
}

}  // namespace

sim::HtmlPage compare_page(const Json& result, const std::string& name) {
  sim::HtmlPage page("pipesim compare: " + name);
  const Json& a = result.at("a");
  const Json& b = result.at("b");
  const auto file = [](const Json& side) {
    return side.at("file").is_null() ? std::string("the production baseline")
                                     : side.at("file").get<std::string>();
  };
  const std::uint64_t count = result.at("seeds").at("count").get<std::uint64_t>();
  page.paragraph("pipesim " + result.value("pipesim_version", std::string("?")) +
                     "  A: " + file(a) + " (" + a.value("config_digest", std::string()) +
                     ")  B: " + file(b) + " (" + b.value("config_digest", std::string()) + ")  " +
                     sim::counted(static_cast<double>(count), "seed") +
                     ", the same for both (paired)",
                 "meta");
  page.heading("Paired differences");
  sim::HtmlTable t{{"estimate", "A", "B", "B - A", "95% CI of B - A", "verdict"}, {}};
  Json labels = Json::array(), values = Json::array(), lo = Json::array(), hi = Json::array(),
       colors = Json::array();
  Json src = Json::array(), lo_src = Json::array(), hi_src = Json::array();
  std::string period = "per day";
  for (const auto& [metric, m] : result.at("metrics").items()) {
    const std::string verdict = m.value("verdict", std::string());
    // By copy: clang 14 cannot capture a structured binding (C++20 allows it).
    const auto p = [&, name = metric](const std::string& field) {
      return json_pointer({"metrics", name, field});
    };
    t.rows.push_back(
        {{metric, "", "text"},
         {format_number(m.at("a_mean").get<double>()), p("a_mean")},
         {format_number(m.at("b_mean").get<double>()), p("b_mean")},
         {format_number(m.at("difference").get<double>()), p("difference")},
         {interval_text(m.at("ci95").at(0).get<double>(), m.at("ci95").at(1).get<double>()),
          p("ci95")},
         {verdict, "", verdict_css(verdict)}});
    // The chart: the per-day counts of duplicates and losses, one scale.
    // Per day, or per window when the runs were shorter than whole days.
    std::string per;
    for (const char* suffix : {"_per_day", "_per_window"}) {
      if (metric.ends_with(suffix) && metric.size() > std::string(suffix).size()) per = suffix;
    }
    if (!per.empty() &&
        (metric.rfind("duplicate_rows", 0) == 0 || metric.rfind("lost_records", 0) == 0)) {
      period = per == "_per_day" ? "per day" : "per window";
      labels.push_back(metric.substr(0, metric.size() - per.size()));
      values.push_back(m.at("difference"));
      lo.push_back(m.at("ci95").at(0));
      hi.push_back(m.at("ci95").at(1));
      src.push_back(p("difference"));
      lo_src.push_back(json_pointer({"metrics", metric, "ci95", "0"}));
      hi_src.push_back(json_pointer({"metrics", metric, "ci95", "1"}));
      const std::string css = verdict_css(verdict);
      colors.push_back(css == "B-lower" ? "#2ca02c" : css == "B-higher" ? "#d62728" : "#888888");
    }
  }
  page.table(t);
  if (!labels.empty()) {
    page.chart(
        {{"kind", "bars"},
         {"title", "B - A " + period + ": duplicates and losses (paired over the same seeds)"},
         {"y_label", period + ", B - A"},
         {"horizontal", true},
         {"begin_at_zero", true},
         {"labels", labels},
         {"datasets", Json::array({{{"name", "B - A"},
                                    {"values", values},
                                    {"lo", lo},
                                    {"hi", hi},
                                    {"src", src},
                                    {"lo_src", lo_src},
                                    {"hi_src", hi_src},
                                    {"colors", colors}}})}},
        "green: B is better (lower), red: B is worse (higher), grey: no difference shown, or "
        "neither better nor worse (inserts); "
        "black lines: 95% CI",
        760, 60 + 26 * static_cast<int>(labels.size()));
  }
  page.heading("What differs between A and B");
  sim::HtmlTable d{{"key", "A", "B"}, {}};
  config_differences(a.at("config"), b.at("config"), "", d);
  if (d.rows.empty()) {
    page.paragraph("The effective configs are the same.", "note");
  } else {
    page.table(d);
  }
  page.heading("Reproduce");
  page.paragraph(
      "Save config A and config B below as a.json and b.json (each holds every default), then:");
  page.preformatted(
      "pipesim compare a.json b.json --seeds " + std::to_string(count) +
      " --format json > compare.json\npipesim report compare.json --out report.html\n");
  config_section(page, a.at("config"), "Config A");
  config_section(page, b.at("config"), "Config B");
  return page;
}

sim::HtmlPage check_page(const Json& result, const std::string& name) {
  const bool passed = result.value("passed", false);
  sim::HtmlPage page(std::string("pipesim check: ") + (passed ? "PASS" : "FAIL") + ": " + name);
  const std::uint64_t count = result.at("seeds").at("count").get<std::uint64_t>();
  const std::string file =
      result.at("file").is_null() ? std::string() : result.at("file").get<std::string>();
  page.paragraph("pipesim " + result.value("pipesim_version", std::string("?")) + "  config " +
                     (file.empty() ? std::string("the production baseline") : file) + " (" +
                     result.value("config_digest", std::string()) + ")  expectations " +
                     result.value("expect_file", std::string()) + "  " +
                     sim::counted(static_cast<double>(count), "seed"),
                 "meta");
  page.heading("Expectations");
  sim::HtmlTable t{{"estimate", "verdict", "estimate", "CI", "bound", "confidence", "seeds"}, {}};
  std::size_t i = 0;
  for (const auto& e : result.at("expectations")) {
    const auto p = [&](const std::string& field) {
      return json_pointer({"expectations", std::to_string(i), field});
    };
    const std::string verdict = e.value("verdict", std::string());
    const bool has_max = e.contains("max");
    const std::string bound_key = has_max ? "max" : "min";
    t.rows.push_back(
        {{e.value("metric", std::string()), "", "text"},
         {verdict, "", verdict},
         {format_number(e.at("estimate").get<double>()), p("estimate")},
         {interval_text(e.at("lower").get<double>(), e.at("upper").get<double>()),
          p("lower") + " " + p("upper")},
         {(has_max ? "at most " : "at least ") + format_number(e.at(bound_key).get<double>()),
          p(bound_key)},
         {format_number(e.at("confidence").get<double>()), p("confidence")},
         {format_number(e.at("seeds").get<double>()), p("seeds")}});
    ++i;
  }
  page.table(t);
  i = 0;
  for (const auto& e : result.at("expectations")) {
    const auto p = [&](const std::string& field) {
      return json_pointer({"expectations", std::to_string(i), field});
    };
    const std::string verdict = e.value("verdict", std::string());
    const double bound = e.at(e.contains("max") ? "max" : "min").get<double>();
    const double upper = e.at("upper").get<double>();
    // The allowed range as a bar: [0 or lower, max] for a max, [min, beyond the interval] for a
    // min.
    Json allowed = e.contains("max")
                       ? Json::array({std::min(0.0, e.at("lower").get<double>()), bound})
                       : Json::array({bound, std::max(upper, bound) * 1.25 + 1e-12});
    Json allowed_src =
        e.contains("max") ? Json::array({nullptr, p("max")}) : Json::array({p("min"), nullptr});
    page.chart(
        {{"kind", "interval"},
         {"title", e.value("metric", std::string()) + ": " + verdict},
         {"labels", Json::array({"estimate's " +
                                     format_number(e.at("confidence").get<double>() * 100) + "% CI",
                                 "allowed"})},
         {"datasets",
          Json::array(
              {{{"name", "range"},
                {"values", Json::array({Json::array({e.at("lower"), e.at("upper")}), allowed})},
                {"src", Json::array({Json::array({p("lower"), p("upper")}), allowed_src})},
                {"colors",
                 Json::array({verdict == "PASS" ? "#2ca02c" : "#d62728", "#888888"})}}})}},
        "the check passes when the whole interval lies inside the allowed range", 760, 130);
    ++i;
  }
  page.heading("Reproduce");
  page.paragraph("Save the effective config below as config.json (it holds every default), then:");
  page.preformatted("pipesim check config.json --expect " +
                    result.value("expect_file", std::string("EXPECT.json")) + " --seeds " +
                    std::to_string(count) + " --format json > check.json\n" +
                    "pipesim report check.json --out report.html\n");
  config_section(page, result.at("config"), "Effective config");
  return page;
}

}  // namespace pipesim::cli
