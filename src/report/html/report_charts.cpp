// The HTML report's charts (report_charts.hpp): histograms, percentile
// curves, per-frame timelines and the clock model's residuals.
#include "report/html/report_charts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "report/html/chart_axes.hpp"
#include "report/html/report_parts.hpp"
#include "report/html/report_stats.hpp"

namespace latlab::html {

json chart(const std::string& id, const char* type, const std::string& title, const char* xl,
           const char* yl) {
  return json{{"id", id},      {"type", type},       {"title", title},         {"x_label", xl},
              {"y_label", yl}, {"x", json::array()}, {"series", json::array()}};
}

std::string add_chart(json c, json& charts, const std::string& note) {
  const std::string axis = c.contains("axis") ? c["axis"].get<std::string>() : "linear";
  std::string div = fmt::format(
      "<figure class=\"chart\" aria-label=\"{}\"><div id=\"{}\" data-chart=\"{}\" "
      "data-axis=\"{}\"></div>{}</figure>\n",
      escape(c["title"].get<std::string>()), escape(c["id"].get<std::string>()),
      escape(c["type"].get<std::string>()), axis,
      note.empty() ? "" : "<figcaption>" + escape(note) + "</figcaption>");
  charts.push_back(std::move(c));
  return div;
}

void value_axes(json& c, const std::vector<std::vector<double>>& values, const ChartAxis& x) {
  const AxisKind kind = choose_axis(values);
  c["axis"] = to_string(kind);
  c["axes"]["x"] = axis_json(x);
  // The series on the right axis (own): the second with a typical magnitude.
  size_t right = values.size();
  if (kind == AxisKind::own) {
    for (size_t i = 0, seen = 0; i < values.size(); ++i)
      if (typical_magnitude(values[i]) && ++seen == 2) right = i;
  }
  double lo[2] = {0, 0}, hi[2] = {0, 0};
  bool any[2] = {false, false};
  std::optional<double> smallest;
  for (size_t i = 0; i < values.size(); ++i) {
    const size_t a = i == right ? 1 : 0;
    for (double v : values[i]) {
      lo[a] = any[a] ? std::min(lo[a], v) : v;
      hi[a] = any[a] ? std::max(hi[a], v) : v;
      any[a] = true;
    }
    if (const std::optional<double> m = typical_magnitude(values[i]))
      smallest = smallest ? std::min(*smallest, *m) : *m;
  }
  c["axes"]["y"] = axis_json(kind == AxisKind::log ? log_axis(lo[0], hi[0], *smallest)
                                                   : linear_axis(lo[0], hi[0], 5, 0.05));
  if (right < values.size()) {
    c["axes"]["y2"] = axis_json(linear_axis(lo[1], hi[1], 5, 0.05));
    c["series"][right]["scale"] = "y2";
  }
}

namespace {

// The per-frame series `s` of `m` in us, frame by frame (nullopt where missing).
std::vector<std::optional<double>> series_us(const PerFrameMode& m, Series s) {
  std::vector<std::optional<double>> out;
  for (const std::optional<int64_t>& v : m.series_ns[static_cast<size_t>(s)])
    out.push_back(v ? std::optional(static_cast<double>(*v) / 1000.0) : std::nullopt);
  return out;
}

json values_or_null(const std::vector<std::optional<double>>& v) {
  json a = json::array();
  for (const auto& x : v) a.push_back(x ? json(*x) : json(nullptr));
  return a;
}

// The values of `v` that are there.
std::vector<double> present(const std::vector<std::optional<double>>& v) {
  std::vector<double> out;
  for (const auto& x : v)
    if (x) out.push_back(*x);
  return out;
}

// A value with the decimals that tell it from its neighbours `step` away.
std::string value_text(double v, double step) { return fixed(v, decimals_for_step(step)); }

// One histogram of `sets` (named `names`, coloured by `colours`) on shared
// bins, and what lies outside them on its caption.
std::string histogram_chart(const std::string& id, const std::string& title,
                            const std::vector<std::string>& names,
                            const std::vector<size_t>& colours,
                            const std::vector<std::vector<double>>& sets, const char* axis,
                            json& charts) {
  const Histogram h = make_histogram(sets, kHistogramBins, kHistogramClip);
  json hc = chart(id, "hist", title, "us", "frames");
  std::string note;
  uint64_t highest = 0;
  const double width = h.edges.size() > 1 ? h.edges[1] - h.edges[0] : 0;
  for (size_t k = 0; k < sets.size(); ++k) {
    if (h.edges.empty()) break;
    json counts = json::array();
    for (uint64_t c : h.counts[k]) {
      counts.push_back(c);
      highest = std::max(highest, c);
    }
    counts.push_back(h.counts[k].empty() ? 0 : h.counts[k].back());  // the last step's end
    hc["series"].push_back({{"label", names[k]}, {"colour", colours[k]}, {"values", counts}});
    for (const auto& [where, n, at] :
         {std::tuple{"above", h.above[k], h.hi}, std::tuple{"below", h.below[k], h.lo}})
      if (n > 0)
        note += fmt::format("{}: {} frames {} {} us. ", names[k], n, where, value_text(at, width));
  }
  if (!note.empty()) note += "(Outside the bins, counted here.)";
  hc["x"] = h.edges;
  hc["axis"] = axis;
  if (!h.edges.empty()) {
    hc["axes"]["x"] = axis_json(linear_axis(h.edges.front(), h.edges.back(), 6));
    // Counts from 0, room above the highest bin.
    hc["axes"]["y"] = axis_json(
        linear_axis(0, 1.05 * static_cast<double>(std::max<uint64_t>(highest, 1)), 4, 0, true));
  }
  return add_chart(std::move(hc), charts, note);
}

// The histogram(s) and percentile curve of one series over `modes`: one
// histogram on shared bins, or one per mode when the modes differ more than
// 10x in size (each on its own axis, not two spikes at the edges of one).
std::string series_charts(const SeriesName& s, const std::vector<std::string>& modes,
                          const std::vector<std::vector<double>>& sets, const std::string& prefix,
                          json& charts) {
  const std::string what = s.key + " (" + s.group + ")";
  std::vector<size_t> colours;
  for (size_t k = 0; k < modes.size(); ++k) colours.push_back(k);
  std::string out = "<div class=\"pair\">";
  if (choose_axis(sets) == AxisKind::linear) {
    out += histogram_chart(prefix + "hist-" + s.key, what + ": histogram", modes, colours, sets,
                           "linear", charts);
  } else {
    for (size_t k = 0; k < modes.size(); ++k) {
      if (sets[k].empty()) continue;
      out += histogram_chart(
          prefix + "hist-" + s.key + "-" + modes[k],
          what + ": histogram, " + modes[k] + " (own axis: the modes differ " + "more than 10x)",
          {modes[k]}, {k}, {sets[k]}, "own", charts);
    }
  }
  const std::vector<double> levels = percentile_levels();
  json cc = chart(prefix + "pct-" + s.key, "line", what + ": percentiles", "percentile", "us");
  cc["x"] = levels;
  std::vector<std::vector<double>> curves;
  for (size_t k = 0; k < modes.size(); ++k) {
    const std::vector<std::optional<double>> curve = percentile_curve(sets[k], levels);
    cc["series"].push_back({{"label", modes[k]}, {"values", values_or_null(curve)}});
    curves.push_back(present(curve));
  }
  value_axes(cc, curves, linear_axis(0, 100, 5));
  return out + add_chart(std::move(cc), charts) + "</div>\n";
}

}  // namespace

std::string distribution_charts(const LatencyRun& run, const PerFrameSeries& p,
                                const std::string& prefix, json& charts) {
  std::vector<std::string> modes;
  for (const LatencyModeResult& m : run.modes) modes.push_back(m.name);
  std::string out;
  for (const SeriesName& s : series_names()) {
    std::vector<std::vector<double>> sets;
    for (const std::string& m : modes) {
      const PerFrameMode* pm = p.find(m);
      sets.push_back(pm ? present(series_us(*pm, s.series)) : std::vector<double>());
    }
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
    std::vector<std::vector<double>> tv, lv;
    for (const SeriesName& s : series_names()) {
      const std::vector<std::optional<double>> us = series_us(*pm, s.series);
      if (s.group != "diagnostic") {
        tc["series"].push_back({{"label", s.key}, {"values", values_or_null(us)}});
        tv.push_back(present(us));
      } else if (s.key == "timer_lateness") {
        lc["series"].push_back({{"label", s.key}, {"values", values_or_null(us)}});
        lv.push_back(present(us));
      }
    }
    const double first = pm->frame_id.empty() ? 0 : static_cast<double>(pm->frame_id.front());
    const double last = pm->frame_id.empty() ? 0 : static_cast<double>(pm->frame_id.back());
    value_axes(tc, tv, linear_axis(first, last, 6, 0, true));
    value_axes(lc, lv, linear_axis(first, last, 6, 0, true));
    out += "<div class=\"pair\">" +
           add_chart(std::move(tc), charts, "Gaps are frames where that value is missing.");
    out += add_chart(std::move(lc), charts) + "</div>\n";
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
  value_axes(c, {fit->residuals, dev}, linear_axis(y.front() / 1e9, y.back() / 1e9, 6, 0.02));
  const std::string note = fmt::format(
      "One line fitted here over all {} pairs (drift {:+.3f} ppm); the calibrator's own fits are "
      "windowed and refreshed during the run, so these residuals bound, not equal, its error.",
      x.size(), (fit->b - 1.0) * 1e6);
  return add_chart(std::move(c), charts, note);
}

}  // namespace latlab::html
