// The page shell of the comparison and history pages.
#include "report/html/html_page.hpp"

#include "report/html/html_assets.hpp"
#include "report/html/report_parts.hpp"

namespace latlab::html {
namespace {

// What the SVG charts and the call cells need beyond report.css.
constexpr std::string_view kPageCss = R"css(
svg.chart { display: block; background: #fff; border: 1px solid #eee; margin: 0.5em 0; }
svg.chart text { font: 11px system-ui, sans-serif; fill: #333; }
svg.chart .axis { stroke: #999; stroke-width: 1; }
svg.chart .grid { stroke: #eee; stroke-width: 1; }
svg.chart .zero { stroke: #555; stroke-width: 1; stroke-dasharray: 3 2; }
svg.chart .band { fill: #f0f0f0; }
svg.chart .line { fill: none; stroke: #888; stroke-width: 1.2; }
svg.chart .side-a { fill: #1f77b4; } svg.chart .side-b { fill: #d62728; }
svg.chart .mark-a { stroke: #1f77b4; stroke-width: 2; }
svg.chart .mark-b { stroke: #d62728; stroke-width: 2; }
svg.chart .ci { stroke-width: 2; }
svg.chart .gap { fill: none; stroke: #bbb; }
.charts { display: flex; flex-wrap: wrap; gap: 0.5em 1.5em; }
.charts figure { margin: 0; }
td.call-regression, .call-regression { background: #f8d0d0; font-weight: bold; }
td.call-improvement, .call-improvement { background: #d4f0d4; font-weight: bold; }
svg.chart .call-regression { fill: #d62728; stroke: #d62728; }
svg.chart .call-improvement { fill: #2ca02c; stroke: #2ca02c; }
svg.chart .call-none { fill: #555; stroke: #555; }
svg.chart .call-untested { fill: #bbb; stroke: #bbb; }
td.text, th.text { text-align: left; }
.fail { background: #f8d0d0; padding: 4px 8px; font-weight: bold; }
.pass { background: #d4f0d4; padding: 4px 8px; }
)css";

}  // namespace

std::string svg_page(std::string_view title, std::string_view body) {
  std::string page;
  page.reserve(body.size() + html_assets::report_css.size() + kPageCss.size() + 1024);
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // No script runs and nothing is fetched: every chart is inline SVG.
  page +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'\">\n";
  page += "<title>" + escape(title) + "</title>\n<style>\n";
  page += html_assets::report_css;
  page += kPageCss;
  page += "</style>\n</head>\n<body>\n<h1>" + escape(title) + "</h1>\n";
  page += body;
  page += "</body>\n</html>\n";
  return page;
}

}  // namespace latlab::html
