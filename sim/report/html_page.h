// One self-contained HTML page: headings, paragraphs, tables, preformatted
// text and charts, with its styles, Chart.js and the page's script inline, so
// the file reads offline and can be attached to a ticket. The page only holds
// data: each chart is a JSON spec that sim/report/assets/report.js turns into
// a Chart.js chart in the browser. Each number shown in a table cell may name
// where it came from (a JSON pointer into the result the page shows), so a
// checker can compare what the browser displays with the result.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipesim::sim {

struct HtmlCell {
  HtmlCell(std::string text_, std::string source_ = "",
           std::string css_ = "")  // NOLINT: {text, ...} reads well
      : text(std::move(text_)), source(std::move(source_)), css(std::move(css_)) {}
  std::string text;
  std::string source;  // JSON pointer into the result ("/estimates/x/value"), or empty
  std::string css;     // a class: "text", "indent", "PASS", ...
};

struct HtmlTable {
  std::vector<std::string> header;
  std::vector<std::vector<HtmlCell>> rows;
};

class HtmlPage {
 public:
  explicit HtmlPage(std::string title);

  void heading(const std::string& text,
               int level = 2);  // level 2 headings also go into the page's contents
  void paragraph(const std::string& text, const std::string& css = "");
  void table(const HtmlTable& table);
  void preformatted(const std::string& text);
  void open_details(const std::string& summary);  // a folded block, up to close_details()
  void close_details();
  // A chart: `spec` is what report.js draws ("kind", "labels", "datasets", ...);
  // the page gives it an id. `caption` goes under it.
  void chart(nlohmann::json spec, const std::string& caption = "", int width = 760,
             int height = 300);

  // The whole document.
  std::string render() const;

 private:
  std::string title_;
  std::string body_;
  std::vector<std::pair<std::string, std::string>> contents_;  // (anchor, heading)
  nlohmann::json charts_ = nlohmann::json::array();
};

std::string escape_html(const std::string& text);

// A JSON pointer from its reference tokens, each escaped (RFC 6901: ~ -> ~0, / -> ~1).
std::string json_pointer(const std::vector<std::string>& tokens);

// The report assets compiled into the binary (cmake/embed_report_assets.cmake):
// "chart.js" (Debian's libjs-chart.js), "report.js", "report.css".
std::string_view report_asset(std::string_view name);

}  // namespace pipesim::sim
