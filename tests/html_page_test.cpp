// The report page's pieces: HTML escaping, JSON pointers, the page's layout
// (one canvas per chart, the chart data safe inside <script>, the contents),
// and the histogram bins, each against values worked out by hand.
#include <gtest/gtest.h>

#include "sim/experiment/histogram_bins.h"
#include "sim/report/html_page.h"

namespace pipesim::sim {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(HtmlPage, EscapesTheFiveCharactersThatMeanSomethingInHtml) {
  EXPECT_EQ(escape_html("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(escape_html("plain 1.5 [0, 2]"), "plain 1.5 [0, 2]");
}

TEST(HtmlPage, JsonPointersEscapeTildeAndSlash) {  // RFC 6901 §3
  EXPECT_EQ(json_pointer({"estimates", "duplicate_rows_per_day", "value"}),
            "/estimates/duplicate_rows_per_day/value");
  EXPECT_EQ(json_pointer({"a/b", "m~n", "0"}), "/a~1b/m~0n/0");
  EXPECT_EQ(json_pointer({}), "");
}

TEST(HtmlPage, OneCanvasPerChartAndTheDataCannotEndItsScript) {
  HtmlPage page("t <1>");
  page.heading("Headline");
  page.heading("Headline");  // a second heading of the same name gets its own anchor
  page.table({{"a", "b"}, {{{"x", "", "text"}, {"1.5", "/metrics/x/mean"}}}});
  page.chart({{"kind", "bars"},
              {"title", "</script><b>"},
              {"labels", {"a"}},
              {"datasets", nlohmann::json::array()}});
  page.chart({{"kind", "lines"}, {"labels", {"a"}}, {"datasets", nlohmann::json::array()}});
  const std::string html = page.render();
  EXPECT_EQ(count(html, "<canvas id=\"chart-"), 2u);
  EXPECT_NE(html.find("<canvas id=\"chart-1\" class=\"chart\""), std::string::npos);
  EXPECT_NE(html.find("<title>t &lt;1&gt;</title>"), std::string::npos);
  EXPECT_NE(html.find("<td data-src=\"/metrics/x/mean\">1.5</td>"), std::string::npos);
  EXPECT_NE(html.find("href=\"#headline\""), std::string::npos);
  EXPECT_NE(html.find("href=\"#headline-2\""), std::string::npos);
  // The title inside the JSON block: "</" written as "<\/", so the block ends only at its own tag.
  EXPECT_NE(html.find("<\\/script><b>"), std::string::npos);
  EXPECT_EQ(count(html, "</script>"), 3u);  // the data, Chart.js and report.js
  // Self-contained: no element loads anything.
  EXPECT_EQ(html.find(" src=\""), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
}

TEST(HtmlPage, TheAssetsAreCompiledIn) {
  EXPECT_NE(report_asset("chart.js").find("Chart.js v"), std::string_view::npos);
  EXPECT_NE(report_asset("report.js").find("pipesim-charts"), std::string_view::npos);
  EXPECT_FALSE(report_asset("report.css").empty());
  EXPECT_TRUE(report_asset("nothing").empty());
}

TEST(HistogramBins, SqrtOfNBinsWithinFiveAndThirty) {
  // 9 values 0..8: ceil(sqrt 9) = 3 bins, raised to 5: width 8/5 = 1.6.
  std::vector<double> v = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  const auto edges = histogram_edges(v);
  ASSERT_EQ(edges.size(), 6u);
  EXPECT_DOUBLE_EQ(edges[1], 1.6);
  EXPECT_DOUBLE_EQ(edges[5], 8);
  // [0,1.6): 0 1 | [1.6,3.2): 2 3 | [3.2,4.8): 4 | [4.8,6.4): 5 6 | [6.4,8]: 7 8
  EXPECT_EQ(histogram_counts(v, edges), (std::vector<double>{2, 2, 1, 2, 2}));
  // 1000 values: ceil(sqrt 1000) = 32, capped at 30.
  std::vector<double> many(1000);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<double>(i);
  EXPECT_EQ(histogram_edges(many).size(), 31u);
  double total = 0;
  for (const double c : histogram_counts(many, histogram_edges(many))) total += c;
  EXPECT_EQ(total, 1000);
}

TEST(HistogramBins, EqualValuesMakeOneBin) {
  const std::vector<double> v = {3, 3, 3};
  EXPECT_EQ(histogram_edges(v), (std::vector<double>{3, 3}));
  EXPECT_EQ(histogram_counts(v, histogram_edges(v)), (std::vector<double>{3}));
  EXPECT_THROW(histogram_edges({}), std::invalid_argument);
}

}  // namespace
}  // namespace pipesim::sim
