// The HTML report's charts of a latency run: the data (computed here, in
// C++) goes into `charts` for the page's script; the returned fragment
// holds the figures and what a chart could not show. Private to src/report/html.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "latlab/bench/run_result.hpp"
#include "report/html/chart_axes.hpp"

namespace latlab::html {

inline constexpr uint32_t kHistogramBins = 60;
// Bins end at the highest p99 (or its outlier fence, report_stats.hpp); the rest is counted.
inline constexpr double kHistogramClip = 0.99;

// Histogram and percentile curve of every series, the modes side by side.
std::string distribution_charts(const LatencyRun& run, const PerFrameSeries& p,
                                const std::string& prefix, nlohmann::ordered_json& charts);
// Per mode: every stage and observer per frame, then timer lateness per frame.
std::string timeline_charts(const LatencyRun& run, const PerFrameSeries& p,
                            const std::string& prefix, nlohmann::ordered_json& charts);
// The clock model's pairs: residuals from one least-squares line.
std::string clock_charts(const LatencyRun& run, const std::string& prefix,
                         nlohmann::ordered_json& charts);
// A capture's per-frame figures at their percentiles (the result holds no
// frame's own values).
std::string capture_charts(const CaptureResult& c, const std::string& prefix,
                           nlohmann::ordered_json& charts);

// One chart's data; add_chart() puts it into `charts` and returns its
// figure element (its accessible name the title, `note` its caption).
// Beyond what chart() sets, report.js reads (each optional): per series
// "colour" (an index into the palette or a CSS colour), "type" (the chart's
// "line" or "points", or "interval": a segment from series "from"'s value
// to its own at each x, or "none": in the legend only) and "span" (join
// across missing values); per chart "height" (pixels), "horizontal" (x
// runs down the page), "hover" (a line per x, shown under the chart at the
// cursor), "band" ({"lo", "hi"}: shaded across the y axis) and "gaps" (x
// values marked by a dashed line).
nlohmann::ordered_json chart(const std::string& id, const char* type, const std::string& title,
                             const char* x_label, const char* y_label);
std::string add_chart(nlohmann::ordered_json c, nlohmann::ordered_json& charts,
                      const std::string& note = "");

// Sets chart `c`'s axes for the page's script: `x`, and the value axis
// chosen for `values` (per series of c, in order, missing values left out):
// "axis" linear, own (the second sized series on a right axis "y2",
// series "scale") or log; each axis' range, ticks and labels.
void value_axes(nlohmann::ordered_json& c, const std::vector<std::vector<double>>& values,
                const ChartAxis& x);

}  // namespace latlab::html
