// The HTML report's page: sections per run, chart data computed here, uPlot
// and the drawing script inlined.
#include "report/html/report_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "latlab/bench/latency_report.hpp"
#include "report/html/html_assets.hpp"
#include "report/html/report_parts.hpp"
#include "report/html/report_stats.hpp"

namespace latlab {
namespace {

using html::escape;
using html::find;
using html::json;

constexpr uint32_t kHistogramBins = 60;
constexpr double kHistogramClip = 0.99;  // bins end at the highest p99; the rest is counted

// The per-frame series (ns) of `mode`, as us, missing values dropped.
std::vector<double> samples_us(const json& doc, const std::string& mode, const std::string& key) {
  std::vector<double> out;
  const json* s = find(doc, {"per_frame", "modes", mode, "series_ns", key});
  if (s == nullptr || !s->is_array()) return out;
  for (const json& v : *s)
    if (v.is_number()) out.push_back(v.get<double>() / 1000.0);
  return out;
}

json values_or_null(const std::vector<std::optional<double>>& v) {
  json a = json::array();
  for (const auto& x : v) a.push_back(x ? json(*x) : json(nullptr));
  return a;
}

json chart(const std::string& id, const char* type, const std::string& title, const char* xl,
           const char* yl) {
  return json{{"id", id},      {"type", type},       {"title", title},         {"x_label", xl},
              {"y_label", yl}, {"x", json::array()}, {"series", json::array()}};
}

std::string chart_div(const json& c, const std::string& note = "") {
  return fmt::format("<figure class=\"chart\"><div id=\"{}\" data-chart=\"{}\"></div>{}</figure>\n",
                     escape(c["id"].get<std::string>()), escape(c["type"].get<std::string>()),
                     note.empty() ? "" : "<figcaption>" + escape(note) + "</figcaption>");
}

// Histogram and percentile curve of every series, the modes side by side.
std::string distribution_charts(const json& doc, const std::string& prefix, json& charts) {
  const std::vector<std::string> modes = html::latency_modes(doc);
  const std::vector<double> levels = percentile_levels();
  std::string out;
  for (const html::SeriesName& s : html::series_names()) {
    std::vector<std::vector<double>> sets;
    for (const std::string& m : modes) sets.push_back(samples_us(doc, m, s.key));
    // A series no frame has (e.g. poll_latency with the poll observer off):
    // nothing to draw; the table above says count 0 and why in `unavailable`.
    if (std::all_of(sets.begin(), sets.end(), [](const auto& v) { return v.empty(); })) {
      out += "<p class=\"na\">" + escape(s.key) + ": no frame has a value, no chart.</p>\n";
      continue;
    }
    const Histogram h = make_histogram(sets, kHistogramBins, kHistogramClip);
    json hc = chart(prefix + "hist-" + s.key, "hist", s.key + " (" + s.group + "): histogram", "us",
                    "frames");
    json cc = chart(prefix + "pct-" + s.key, "line", s.key + " (" + s.group + "): percentiles",
                    "percentile", "us");
    std::string note;
    for (size_t k = 0; k < modes.size(); ++k) {
      if (!h.edges.empty()) {
        json counts = json::array();
        for (uint64_t c : h.counts[k]) counts.push_back(c);
        counts.push_back(h.counts[k].empty() ? 0 : h.counts[k].back());  // the last step's end
        hc["series"].push_back({{"label", modes[k]}, {"values", counts}});
      }
      if (h.above[k] > 0)
        note += fmt::format("{}: {} frames above {:.1f} us not in the bins. ", modes[k], h.above[k],
                            h.hi);
      cc["series"].push_back(
          {{"label", modes[k]}, {"values", values_or_null(percentile_curve(sets[k], levels))}});
    }
    hc["x"] = h.edges;
    cc["x"] = levels;
    out += "<div class=\"pair\">" + chart_div(hc, note) + chart_div(cc) + "</div>\n";
    charts.push_back(std::move(hc));
    charts.push_back(std::move(cc));
  }
  return out;
}

// Per mode: every stage and observer per frame, then timer lateness per frame.
std::string timeline_charts(const json& doc, const std::string& prefix, json& charts) {
  std::string out;
  for (const std::string& m : html::latency_modes(doc)) {
    const json* ids = find(doc, {"per_frame", "modes", m, "frame_id"});
    if (ids == nullptr || !ids->is_array()) continue;
    json tc = chart(prefix + "timeline-" + m, "line", m + ": stages and observers per frame",
                    "frame id", "us");
    json lc = chart(prefix + "lateness-" + m, "points", m + ": timer lateness per frame",
                    "frame id", "us");
    tc["x"] = *ids;
    lc["x"] = *ids;
    for (const html::SeriesName& s : html::series_names()) {
      const json* v = find(doc, {"per_frame", "modes", m, "series_ns", s.key});
      if (v == nullptr || !v->is_array()) continue;
      json us = json::array();
      for (const json& x : *v)
        us.push_back(x.is_number() ? json(x.get<double>() / 1000.0) : json(nullptr));
      if (s.group != "diagnostic") tc["series"].push_back({{"label", s.key}, {"values", us}});
      if (s.key == "timer_lateness") lc["series"].push_back({{"label", s.key}, {"values", us}});
    }
    out += "<div class=\"pair\">" + chart_div(tc, "Gaps are frames where that value is missing.") +
           chart_div(lc) + "</div>\n";
    charts.push_back(std::move(tc));
    charts.push_back(std::move(lc));
  }
  return out;
}

// The clock model's pairs: residuals from one least-squares line over all of
// them, and each pair's own max deviation.
std::string clock_charts(const json& doc, const std::string& prefix, json& charts) {
  const json* pairs = find(doc, {"clock_model", "pairs"});
  const auto period = html::number(doc, {"device", "tick_period_ns"});
  if (pairs == nullptr || !pairs->is_array() || pairs->size() < 2 || !period)
    return "<p>Fewer than two calibration pairs in the result: no residual chart.</p>\n";
  std::vector<double> x, y, dev;
  const json& first = pairs->front();
  const auto t0 = first.value("device_ticks", uint64_t{0});
  const auto h0 = first.value("host_ns", int64_t{0});
  for (const json& p : *pairs) {
    const auto ticks = p.value("device_ticks", uint64_t{0});
    x.push_back(static_cast<double>(static_cast<int64_t>(ticks - t0)) * *period);
    y.push_back(static_cast<double>(p.value("host_ns", int64_t{0}) - h0));
    dev.push_back(p.value("max_deviation_ns", 0.0));
  }
  const auto fit = fit_line(x, y);
  if (!fit) return "<p>Calibration pairs do not span any device time: no residual chart.</p>\n";
  json c =
      chart(prefix + "clock", "points", "calibration pairs: residual from one line over all pairs",
            "host time since first pair (s)", "ns");
  json xs = json::array();
  for (double v : y) xs.push_back(v / 1e9);
  c["x"] = xs;
  c["series"].push_back({{"label", "residual"}, {"values", fit->residuals}});
  c["series"].push_back({{"label", "max deviation of the pair"}, {"values", dev}});
  const std::string note = fmt::format(
      "One line fitted here over all {} pairs (drift {:+.3f} ppm); the calibrator's own fits are "
      "windowed and refreshed during the run, so these residuals bound, not equal, its error.",
      x.size(), (fit->b - 1.0) * 1e6);
  charts.push_back(c);
  return chart_div(c, note);
}

std::string run_section(const ReportInput& in, size_t index, json& charts) {
  const json& doc = in.doc;
  const std::string prefix = fmt::format("r{}-", index);
  std::string s = fmt::format("<section id=\"run{}\">\n<h2>{}</h2>\n", index, escape(in.label));
  s += "<p>kind " + html::cell(find(doc, {"kind"})) + ", device " +
       html::cell(find(doc, {"device", "name"})) + " (" +
       html::cell(find(doc, {"device", "backend"})) + "), created " +
       html::cell(find(doc, {"created_utc"})) + "</p>\n";
  s += "<h3>Unavailable and missing</h3>\n" + html::unavailable_list(doc);
  s += "<h3>Modes</h3>\n" + html::modes_table(doc);
  s += html::performance_table(doc);
  const bool latency = !html::latency_modes(doc).empty();
  if (latency) {
    s += "<h3>Percentiles (us, over every measured frame; missing = frames without the "
         "value)</h3>\n" +
         html::percentile_table(doc) + html::missing_markers_table(doc);
    s += "<h3>Distributions</h3>\n";
    if (find(doc, {"per_frame"}) == nullptr) {
      s += "<p class=\"warn\">This result has no per-frame series (<code>per_frame</code>): "
           "histograms, percentile curves and the timeline need it. Run with "
           "<code>--per-frame</code> or <code>--report FILE</code>.</p>\n";
    } else {
      s += "<p>Histograms: " + std::to_string(kHistogramBins) +
           " equal bins from the lowest value to the highest p99; frames above are counted "
           "under the chart. Percentile curves use every frame (type 7, as the table).</p>\n";
      s += distribution_charts(doc, prefix, charts);
      s += "<h3>Timeline</h3>\n" + timeline_charts(doc, prefix, charts);
    }
  }
  if (find(doc, {"load_calibration"}) != nullptr)
    s += "<h3>Load calibration</h3>\n" + html::load_calibration_section(doc);
  if (latency) {
    s +=
        "<h3>Clock model</h3>\n" + html::clock_model_table(doc) + clock_charts(doc, prefix, charts);
  }
  s += "<h3>Machine, device, settings</h3>\n" + html::settings_table(doc);
  return s + "</section>\n";
}

// With several runs: one line each with the observers' p50/p99 per mode.
std::string runs_summary(std::span<const ReportInput> runs) {
  std::string t =
      "<table><tr><th>run</th><th>device</th><th>mode</th><th>core_latency p50</th>"
      "<th>core_latency p99</th><th>fence_latency p50</th><th>fence_latency p99</th>"
      "<th>poll_latency p50</th><th>poll_latency p99</th></tr>\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const json& doc = runs[i].doc;
    for (const std::string& m : html::latency_modes(doc)) {
      t += fmt::format("<tr><td><a href=\"#run{}\">{}</a></td><td>{}</td><td>{}</td>", i,
                       escape(runs[i].label), html::cell(find(doc, {"device", "name"})), escape(m));
      for (const char* o : {"core_latency", "fence_latency", "poll_latency"})
        for (const char* p : {"p50", "p99"})
          t += "<td>" + html::cell(find(doc, {"modes", m, "total", o, p})) + "</td>";
      t += "</tr>\n";
    }
  }
  return t + "</table>\n";
}

// JSON for a <script> element: "</" cannot end it early.
std::string script_safe(std::string s) {
  for (size_t at = s.find("</"); at != std::string::npos; at = s.find("</", at + 3))
    s.replace(at, 2, "<\\/");
  return s;
}

}  // namespace

Result<std::string> render_html_report(std::span<const ReportInput> runs) {
  json charts = json::array();
  std::string body;
  try {
    if (runs.size() > 1) body += "<h2>Runs</h2>\n" + runs_summary(runs);
    for (size_t i = 0; i < runs.size(); ++i) body += run_section(runs[i], i, charts);
  } catch (const nlohmann::json::exception& e) {
    return make_error(fmt::format("unexpected content in a result: {}", e.what()));
  }
  std::string page;
  page.reserve(body.size() + html_assets::uplot_js.size() + 4096);
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n";
  page += "<title>latlab report</title>\n<style>\n";
  page += html_assets::uplot_css;
  page += "\n";
  page += html_assets::report_css;
  page += "</style>\n</head>\n<body>\n<h1>latlab report</h1>\n";
  page +=
      "<p class=\"nojs\" id=\"nojs\">Charts need JavaScript; every figure is also in the "
      "tables.</p>\n";
  page += body;
  page +=
      "<footer><details><summary>Charts drawn with uPlot 1.6.32 (MIT licence), inlined in "
      "this file</summary><pre>";
  page += escape(html_assets::uplot_license);
  page += "</pre></details></footer>\n";
  page += "<script type=\"application/json\" id=\"latlab-data\">";
  page += script_safe(json{{"charts", charts}}.dump());
  page += "</script>\n<script>\n/*! uPlot 1.6.32, MIT licence, see the footer */\n";
  page += html_assets::uplot_js;
  page += "\n</script>\n<script>\n";
  page += html_assets::report_js;
  page += "</script>\n</body>\n</html>\n";
  return page;
}

Result<void> write_html_report(const std::string& path, std::span<const ReportInput> runs) {
  Result<std::string> page = render_html_report(runs);
  if (!page) return page.error();
  return write_file_atomic(path, *page);
}

}  // namespace latlab
