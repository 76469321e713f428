// The shell of latlab's script-free HTML pages (the comparison and history
// pages): doctype, a Content-Security-Policy that allows no request of any
// kind, the run report's style sheet and the pages' own, then the body.
// Charts are inline SVG, so the pages draw without JavaScript. Private to
// src/report/html.
#pragma once

#include <string>
#include <string_view>

namespace latlab::html {

// A whole page: `title` (plain text, escaped here) as <title> and <h1>, then
// `body` (HTML).
std::string svg_page(std::string_view title, std::string_view body);

}  // namespace latlab::html
