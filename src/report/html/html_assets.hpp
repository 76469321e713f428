// Files embedded into the HTML report at build time (see CMakeLists.txt):
// uPlot (third_party/uplot, MIT, version in its README.md) and the report's
// own script and style. Views of static storage; never null-terminated.
#pragma once

#include <string_view>

namespace latlab::html_assets {

extern const std::string_view uplot_js;       // uPlot.iife.min.js
extern const std::string_view uplot_css;      // uPlot.min.css
extern const std::string_view uplot_license;  // uPlot's LICENSE text
extern const std::string_view report_js;      // report.js: draws the charts from the data block
extern const std::string_view report_css;     // report.css

}  // namespace latlab::html_assets
