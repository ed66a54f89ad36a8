#include "sim/report/html_page.h"

#include <stdexcept>

namespace pipesim::sim {

std::string escape_html(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string json_pointer(const std::vector<std::string>& tokens) {
  std::string out;
  for (const auto& t : tokens) {
    out += '/';
    for (const char c : t) {
      if (c == '~') {
        out += "~0";
      } else if (c == '/') {
        out += "~1";
      } else {
        out += c;
      }
    }
  }
  return out;
}

namespace {

std::string anchor_of(const std::string& text) {
  std::string a;
  for (const char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      a += c;
    } else if (c >= 'A' && c <= 'Z') {
      a += static_cast<char>(c - 'A' + 'a');
    } else if (!a.empty() && a.back() != '-') {
      a += '-';
    }
  }
  while (!a.empty() && a.back() == '-') a.pop_back();
  return a.empty() ? "section" : a;
}

// Inside <script>, only "</" can end the element early; JSON allows "<\/".
std::string script_safe(std::string text) {
  for (std::size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 3)) {
    text.replace(at, 2, "<\\/");
  }
  return text;
}

}  // namespace

HtmlPage::HtmlPage(std::string title) : title_(std::move(title)) {}

void HtmlPage::heading(const std::string& text, int level) {
  const std::string tag = "h" + std::to_string(level);
  if (level == 2) {
    std::string anchor = anchor_of(text);
    for (int n = 2; [&] {
           for (const auto& c : contents_)
             if (c.first == anchor) return true;
           return false;
         }();
         ++n) {
      anchor = anchor_of(text) + "-" + std::to_string(n);
    }
    contents_.emplace_back(anchor, text);
    body_ += "<" + tag + " id=\"" + anchor + "\">" + escape_html(text) + "</" + tag + ">\n";
  } else {
    body_ += "<" + tag + ">" + escape_html(text) + "</" + tag + ">\n";
  }
}

void HtmlPage::paragraph(const std::string& text, const std::string& css) {
  body_ += css.empty() ? "<p>" : "<p class=\"" + escape_html(css) + "\">";
  body_ += escape_html(text) + "</p>\n";
}

void HtmlPage::table(const HtmlTable& table) {
  body_ += "<table>\n<thead><tr>";
  for (const auto& h : table.header) body_ += "<th>" + escape_html(h) + "</th>";
  body_ += "</tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    body_ += "<tr>";
    for (const auto& cell : row) {
      body_ += "<td";
      if (!cell.css.empty()) body_ += " class=\"" + escape_html(cell.css) + "\"";
      if (!cell.source.empty()) body_ += " data-src=\"" + escape_html(cell.source) + "\"";
      body_ += ">" + escape_html(cell.text) + "</td>";
    }
    body_ += "</tr>\n";
  }
  body_ += "</tbody>\n</table>\n";
}

void HtmlPage::preformatted(const std::string& text) {
  body_ += "<pre>" + escape_html(text) + "</pre>\n";
}

void HtmlPage::open_details(const std::string& summary) {
  body_ += "<details><summary>" + escape_html(summary) + "</summary>\n";
}

void HtmlPage::close_details() { body_ += "</details>\n"; }

void HtmlPage::chart(nlohmann::json spec, const std::string& caption, int width, int height) {
  const std::string id = "chart-" + std::to_string(charts_.size());
  spec["id"] = id;
  body_ += "<figure class=\"chart\"><canvas id=\"" + id + "\" class=\"chart\" width=\"" +
           std::to_string(width) + "\" height=\"" + std::to_string(height) + "\" data-kind=\"" +
           escape_html(spec.value("kind", std::string())) + "\"></canvas>";
  if (!caption.empty()) body_ += "<figcaption>" + escape_html(caption) + "</figcaption>";
  body_ += "</figure>\n";
  charts_.push_back(std::move(spec));
}

std::string HtmlPage::render() const {
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta name=\"generator\" content=\"pipesim " PIPESIM_VERSION "\">\n";
  page += "<title>" + escape_html(title_) + "</title>\n<style>\n";
  page += report_asset("report.css");
  page += "</style>\n</head>\n<body>\n<header><h1>" + escape_html(title_) + "</h1>\n";
  if (!contents_.empty()) {
    page += "<nav>";
    for (const auto& [anchor, text] : contents_)
      page += "<a href=\"#" + anchor + "\">" + escape_html(text) + "</a>";
    page += "</nav>\n";
  }
  page += "</header>\n<main>\n" + body_ + "</main>\n";
  // error_handler_t::replace: a result's strings are UTF-8 already; a stray
  // byte must not abort the page.
  page += "<script type=\"application/json\" id=\"pipesim-charts\">" +
          script_safe(charts_.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) +
          "</script>\n";
  // The scripts hold no "</script" (cmake/embed_report_assets.cmake checks).
  page += "<script>\n" + std::string(report_asset("chart.js")) + "\n</script>\n";
  page += "<script>\n" + std::string(report_asset("report.js")) + "</script>\n";
  page += "</body>\n</html>\n";
  return page;
}

}  // namespace pipesim::sim
