// The shell of latlab's script-free HTML pages (the comparison and history
// pages): doctype, a Content-Security-Policy that allows no request of any
// kind, the run report's style sheet and the pages' own, then the body.
// Charts are inline SVG, so the pages draw without JavaScript. Private to
// src/report/html.
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace latlab::html {

// The colours of series (Baseline or A first, Loaded or B second) and of
// machines, in order; a page cycles through them.
std::span<const char* const> palette();

// A page's top, up to and including its <h1>: doctype, `csp` as its
// Content-Security-Policy, `title` (plain text, escaped here) as <title>
// and <h1>, and `css` joined into one <style>.
std::string page_head(std::string_view title, std::string_view csp,
                      std::initializer_list<std::string_view> css);

// A whole page: `title` (plain text, escaped here) as <title> and <h1>, then
// `body` (HTML).
std::string svg_page(std::string_view title, std::string_view body);

}  // namespace latlab::html
