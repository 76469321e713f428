// The page shell of the comparison and history pages.
#include "report/html/html_page.hpp"

#include <fmt/format.h>

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

std::span<const char* const> palette() {
  static const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                         "#9467bd", "#8c564b", "#e377c2", "#17becf",
                                         "#7f7f7f", "#bcbd22", "#393b79"};
  return kPalette;
}

std::string page_head(std::string_view title, std::string_view csp,
                      std::initializer_list<std::string_view> css) {
  std::string head = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  head += "<meta http-equiv=\"Content-Security-Policy\" content=\"";
  head += csp;
  head += "\">\n<title>" + escape(title) + "</title>\n<style>\n";
  for (std::string_view c : css) head += c;
  return head + "</style>\n</head>\n<body>\n<h1>" + escape(title) + "</h1>\n";
}

std::string svg_page(std::string_view title, std::string_view body) {
  // No script runs and nothing is fetched: every chart is inline SVG.
  // Side A and B in the run report's Baseline and Loaded colours.
  const std::string sides = fmt::format(
      "svg.chart .side-a {{ fill: {0}; }} svg.chart .side-b {{ fill: {1}; }}\n"
      "svg.chart .mark-a {{ stroke: {0}; stroke-width: 2; }}\n"
      "svg.chart .mark-b {{ stroke: {1}; stroke-width: 2; }}\n",
      palette()[0], palette()[1]);
  std::string page = page_head(title, "default-src 'none'; style-src 'unsafe-inline'",
                               {html_assets::report_css, kPageCss, sides});
  page += body;
  page += "</body>\n</html>\n";
  return page;
}

}  // namespace latlab::html
