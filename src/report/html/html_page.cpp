// The page shell of the run report, the comparison and the history page.
#include "report/html/html_page.hpp"

#include "report/html/html_assets.hpp"
#include "report/html/report_parts.hpp"

namespace latlab::html {
namespace {

// JSON for a <script> element: "</" cannot end it early.
std::string script_safe(std::string s) {
  for (size_t at = s.find("</"); at != std::string::npos; at = s.find("</", at + 3))
    s.replace(at, 2, "<\\/");
  return s;
}

}  // namespace

std::span<const char* const> palette() {
  static const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                         "#9467bd", "#8c564b", "#e377c2", "#17becf",
                                         "#7f7f7f", "#bcbd22", "#393b79"};
  return kPalette;
}

std::string chart_page(std::string_view title, std::string_view body, const json& charts) {
  std::string p =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src "
      "'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n<title>" +
      escape(title) + "</title>\n<style>\n";
  p.reserve(p.size() + body.size() + html_assets::uplot_js.size() + 4096);
  p += html_assets::uplot_css;
  p += "\n";
  p += html_assets::report_css;
  p += "</style>\n</head>\n<body>\n<h1>" + escape(title) + "</h1>\n";
  p += "<p class=\"nojs\" id=\"nojs\">Charts need JavaScript; the tables read without it.</p>\n";
  p += body;
  p += "<footer><details><summary>Charts drawn with uPlot 1.6.32 (MIT licence), inlined in "
       "this file</summary><pre>";
  p += escape(html_assets::uplot_license);
  p += "</pre></details></footer>\n<script type=\"application/json\" id=\"latlab-data\">";
  json colours = json::array();
  for (const char* c : palette()) colours.push_back(c);
  p += script_safe(json{{"palette", colours}, {"charts", charts}}.dump());
  p += "</script>\n<script>\n/*! uPlot 1.6.32, MIT licence, see the footer */\n";
  p += html_assets::uplot_js;
  p += "\n</script>\n<script>\n";
  p += html_assets::report_js;
  p += "</script>\n</body>\n</html>\n";
  return p;
}

}  // namespace latlab::html
