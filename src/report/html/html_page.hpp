// The shell of latlab's HTML pages (the run report, the comparison and the
// history page): doctype, a Content-Security-Policy that allows no request
// of any kind, the style sheet, the body, then the charts' data, uPlot and
// the script that draws them (report.js), all inline. Private to
// src/report/html.
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

namespace latlab::html {

// The colours of series (Baseline or A first, Loaded or B second) and of
// machines, in order; a page cycles through them.
std::span<const char* const> palette();

// A whole page: `title` (plain text, escaped here) as <title> and <h1>,
// `body` (HTML), and `charts` (report_charts.hpp's chart(), each drawn into
// the body's element of its id).
std::string chart_page(std::string_view title, std::string_view body,
                       const nlohmann::ordered_json& charts);

}  // namespace latlab::html
