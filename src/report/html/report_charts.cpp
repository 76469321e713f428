// The HTML report's charts (report_charts.hpp): histograms, percentile
// curves, per-frame timelines and the clock model's residuals.
#include "report/html/report_charts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "report/html/report_parts.hpp"
#include "report/html/report_stats.hpp"

namespace latlab::html {

json chart(const std::string& id, const char* type, const std::string& title, const char* xl,
           const char* yl) {
  return json{{"id", id},      {"type", type},       {"title", title},         {"x_label", xl},
              {"y_label", yl}, {"x", json::array()}, {"series", json::array()}};
}

std::string chart_div(const json& c, const std::string& note) {
  return fmt::format("<figure class=\"chart\"><div id=\"{}\" data-chart=\"{}\"></div>{}</figure>\n",
                     escape(c["id"].get<std::string>()), escape(c["type"].get<std::string>()),
                     note.empty() ? "" : "<figcaption>" + escape(note) + "</figcaption>");
}

namespace {

// The per-frame series `s` of `mode`, as us, missing values dropped.
std::vector<double> samples_us(const PerFrameSeries& p, const std::string& mode, Series s) {
  std::vector<double> out;
  const PerFrameMode* m = p.find(mode);
  if (m == nullptr) return out;
  for (const std::optional<int64_t>& v : m->series_ns[static_cast<size_t>(s)])
    if (v) out.push_back(static_cast<double>(*v) / 1000.0);
  return out;
}

json values_or_null(const std::vector<std::optional<double>>& v) {
  json a = json::array();
  for (const auto& x : v) a.push_back(x ? json(*x) : json(nullptr));
  return a;
}

// The histogram and percentile curve of one series over `modes`.
std::string series_charts(const SeriesName& s, const std::vector<std::string>& modes,
                          const std::vector<std::vector<double>>& sets, const std::string& prefix,
                          json& charts) {
  const Histogram h = make_histogram(sets, kHistogramBins, kHistogramClip);
  const std::vector<double> levels = percentile_levels();
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
  std::string out = "<div class=\"pair\">" + chart_div(hc, note) + chart_div(cc) + "</div>\n";
  charts.push_back(std::move(hc));
  charts.push_back(std::move(cc));
  return out;
}

}  // namespace

std::string distribution_charts(const LatencyRun& run, const PerFrameSeries& p,
                                const std::string& prefix, json& charts) {
  std::vector<std::string> modes;
  for (const LatencyModeResult& m : run.modes) modes.push_back(m.name);
  std::string out;
  for (const SeriesName& s : series_names()) {
    std::vector<std::vector<double>> sets;
    for (const std::string& m : modes) sets.push_back(samples_us(p, m, s.series));
    // A series no frame has (e.g. poll_latency with the poll observer off):
    // nothing to draw; the table above says count 0 and why in `unavailable`.
    if (std::all_of(sets.begin(), sets.end(), [](const auto& v) { return v.empty(); })) {
      out += "<p class=\"na\">" + escape(s.key) + ": no frame has a value, no chart.</p>\n";
      continue;
    }
    out += series_charts(s, modes, sets, prefix, charts);
  }
  return out;
}

std::string timeline_charts(const LatencyRun& run, const PerFrameSeries& p,
                            const std::string& prefix, json& charts) {
  std::string out;
  for (const LatencyModeResult& mode : run.modes) {
    const std::string& m = mode.name;
    const PerFrameMode* pm = p.find(m);
    if (pm == nullptr) continue;
    json tc = chart(prefix + "timeline-" + m, "line", m + ": stages and observers per frame",
                    "frame id", "us");
    json lc = chart(prefix + "lateness-" + m, "points", m + ": timer lateness per frame",
                    "frame id", "us");
    tc["x"] = pm->frame_id;
    lc["x"] = pm->frame_id;
    for (const SeriesName& s : series_names()) {
      json us = json::array();
      for (const std::optional<int64_t>& x : pm->series_ns[static_cast<size_t>(s.series)])
        us.push_back(x ? json(static_cast<double>(*x) / 1000.0) : json(nullptr));
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

std::string clock_charts(const LatencyRun& run, const std::string& prefix, json& charts) {
  const std::vector<CalibrationPair>& pairs = run.clock_model.pairs;
  if (pairs.size() < 2)
    return "<p>Fewer than two calibration pairs in the result: no residual chart.</p>\n";
  const double period = run.device.ticks.period_ns();
  std::vector<double> x, y, dev;
  const uint64_t t0 = pairs.front().device_ticks;
  const int64_t h0 = pairs.front().host_ns;
  for (const CalibrationPair& p : pairs) {
    x.push_back(static_cast<double>(static_cast<int64_t>(p.device_ticks - t0)) * period);
    y.push_back(static_cast<double>(p.host_ns - h0));
    dev.push_back(static_cast<double>(p.max_deviation_ns));
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

}  // namespace latlab::html
