// The comparison page's charts (drawn by the pages' script, report.js): per
// mode the shift of every row in % of A's reference with its interval, and
// per series and statistic both sides' samples; each point's values in the
// legend and its line of text under the chart at the cursor.
#include "report/html/compare_charts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/html/chart_axes.hpp"
#include "report/html/report_charts.hpp"
#include "report/html/report_parts.hpp"

namespace latlab::html {
namespace {

// Up to this shift the axis is linear; beyond, asinh (every shift in view).
constexpr double kLinearShiftPct = 100;

// The chart's axis half-width in %: every interval end, at least twice the minimum effect.
double shift_range(const std::vector<const CompareRow*>& rows, double min_effect_pct) {
  double r = std::max(2 * min_effect_pct, 1.0);
  for (const CompareRow* row : rows) {
    if (!row->relative) continue;
    const double ref = *row->a_reference;
    r = std::max(r, std::abs(*row->relative * 100));
    if (row->ci_low)
      r = std::max({r, std::abs(*row->ci_low / ref * 100), std::abs(*row->ci_high / ref * 100)});
  }
  return r * 1.05;
}

std::string row_hover(const Comparison& c, const CompareRow& r) {
  if (r.call == ChangeCall::no_data)  // no shift: a side has no value
    return fmt::format("{} {} {}: no data", r.mode, r.series, r.statistic);
  std::string s =
      fmt::format("{} {} {}: shift {} us", r.mode, r.series, r.statistic, fixed(r.shift, 2));
  s += r.relative ? fmt::format(" ({:+.1f}%)", *r.relative * 100) : " (A's reference <= 0: no %)";
  if (r.ci_low)
    s += fmt::format(", {:.0f}% interval [{}, {}] us", (1 - c.options.alpha) * 100,
                     fixed(*r.ci_low, 2), fixed(*r.ci_high, 2));
  if (tested(r)) s += fmt::format(", p adj {:.3g}", r.p_adjusted);
  return s + ", " + to_string(r.call);
}

// A call's CSS class in the table, and its series of points on the chart in
// the same colour.
struct CallSeries {
  const char* cls;
  const char* label;
  const char* colour;
};
constexpr CallSeries kCallSeries[] = {{"call-regression", "regression", "#d62728"},
                                      {"call-improvement", "improvement", "#2ca02c"},
                                      {"call-none", "no_significant_change", "#555555"},
                                      {"call-untested", "untested", "#aaaaaa"}};

// A call's index in kCallSeries; any other call (no data, too few samples) is untested.
size_t call_index(ChangeCall c) {
  return c == ChangeCall::regression    ? 0
         : c == ChangeCall::improvement ? 1
         : c == ChangeCall::no_change   ? 2
                                        : 3;
}

json null_values(size_t n) { return json(std::vector<json>(n, nullptr)); }

// The shift chart's series: one of points per call that has a row, then the
// intervals (drawn from `low` to `high`).
void add_shift_series(json& sc, const std::vector<json>& points, const json& low,
                      const json& high) {
  for (size_t k = 0; k < std::size(kCallSeries); ++k) {
    if (std::all_of(points[k].begin(), points[k].end(), [](const json& v) { return v.is_null(); }))
      continue;
    sc["series"].push_back({{"label", kCallSeries[k].label},
                            {"colour", kCallSeries[k].colour},
                            {"type", "points"},
                            {"values", points[k]}});
  }
  const size_t from = sc["series"].size();
  sc["series"].push_back(
      {{"label", "interval low"}, {"colour", "#444444"}, {"type", "none"}, {"values", low}});
  sc["series"].push_back({{"label", "interval high"},
                          {"colour", "#444444"},
                          {"type", "interval"},
                          {"from", from},
                          {"values", high}});
}

}  // namespace

const char* call_class(ChangeCall c) { return kCallSeries[call_index(c)].cls; }

const std::vector<double>& samples_of(const CompareRow& r, CompareUnit unit, char side) {
  if (unit == CompareUnit::runs) return side == 'A' ? r.a_runs : r.b_runs;
  return side == 'A' ? r.a_blocks : r.b_blocks;
}

std::string shift_chart(const Comparison& c, const std::string& mode, json& charts) {
  std::vector<const CompareRow*> rows;
  for (const CompareRow& r : c.rows)
    if (r.mode == mode) rows.push_back(&r);
  const double interval = (1 - c.options.alpha) * 100;
  json sc = chart("shift-" + mode, "points", mode + ": shift of every row", "row", "");
  sc["y_label"] = fmt::format("shift B - A, % of A's reference ({:.0f}% interval)", interval);
  std::vector<std::string> names;
  json low = null_values(rows.size()), high = low, hover = json::array();
  std::vector<json> points(std::size(kCallSeries), null_values(rows.size()));
  std::vector<std::string> without;
  for (size_t i = 0; i < rows.size(); ++i) {
    const CompareRow& r = *rows[i];
    names.push_back(r.series + " " + r.statistic);
    sc["x"].push_back(i);
    hover.push_back(row_hover(c, r));
    if (!r.relative) {
      without.push_back(names.back() +
                        (r.call == ChangeCall::no_data ? " (no data)" : " (A's reference <= 0)"));
      continue;
    }
    points[call_index(r.call)][i] = *r.relative * 100;
    if (r.ci_low) {
      low[i] = *r.ci_low / *r.a_reference * 100;
      high[i] = *r.ci_high / *r.a_reference * 100;
    }
  }
  add_shift_series(sc, points, low, high);
  const double range = shift_range(rows, c.options.min_effect * 100);
  sc["axis"] = range > kLinearShiftPct ? "log" : "linear";
  sc["axes"]["x"] = axis_json(category_axis(names));
  sc["axes"]["y"] = axis_json(
      range > kLinearShiftPct ? log_axis(-range, range, std::max(c.options.min_effect * 100, 1.0))
                              : linear_axis(-range, range, 8));
  sc["horizontal"] = true;
  sc["height"] = 90 + 18 * rows.size();
  sc["band"] = {{"lo", -c.options.min_effect * 100}, {"hi", c.options.min_effect * 100}};
  sc["hover"] = std::move(hover);
  std::string note = fmt::format(
      "Each row's shift B - A in % of A's reference, coloured by its call, with its {:.0f}% "
      "interval; shaded: smaller than the minimum effect ({:.1f}%).{}",
      interval, c.options.min_effect * 100,
      range > kLinearShiftPct ? " A shift beyond 100% puts the axis on an asinh (log) scale." : "");
  if (!without.empty()) {
    note += " No shift in %:";
    for (size_t i = 0; i < without.size(); ++i) note += (i == 0 ? " " : ", ") + without[i];
    note += ".";
  }
  return add_chart(std::move(sc), charts, note);
}

namespace {

// One statistic's chart: A's samples left of B's, each side's figure of the
// table as a short line across its samples.
std::string samples_chart(const Comparison& c, const CompareRow& r, json& charts) {
  const std::string what = r.mode + " " + r.series + " " + r.statistic;
  const std::string id = "samples-" + r.mode + "-" + r.series + "-" + r.statistic;
  json sc = chart(id, "points", what + ": both sides' samples, us", "side", "us");
  std::vector<double> all;
  struct Mark {
    double x;
    size_t series;  // 0 A, 1 B: samples; 2 A, 3 B: the table's figure
    double value;
    std::string hover;
  };
  std::vector<Mark> marks;
  std::string missing;
  for (const auto& [side, total] : {std::pair{'A', r.a_total}, std::pair{'B', r.b_total}}) {
    const double centre = side == 'A' ? 0 : 1;
    const size_t k = side == 'A' ? 0 : 1;
    const std::vector<double>& values = samples_of(r, c.unit, side);
    if (values.empty()) missing += fmt::format(" {}: no value.", side);
    const std::string table =
        total ? fmt::format("{}: {} us (the table's {})", side, fixed(*total, 2), side) : "";
    if (total) marks.push_back({centre - 0.4, k + 2, *total, table});
    for (size_t i = 0; i < values.size(); ++i) {
      const double x =
          centre - 0.3 + 0.6 * (static_cast<double>(i) + 0.5) / static_cast<double>(values.size());
      marks.push_back({x, k, values[i], fmt::format("{}: {} us", side, fixed(values[i], 2))});
    }
    if (total) marks.push_back({centre + 0.4, k + 2, *total, table});
  }
  if (marks.empty())
    return "<p class=\"na\">" + escape(what) + ": no value on either side, no chart.</p>\n";
  std::vector<json> values(4, null_values(marks.size()));
  json hover = json::array();
  for (size_t i = 0; i < marks.size(); ++i) {
    sc["x"].push_back(marks[i].x);
    values[marks[i].series][i] = marks[i].value;
    hover.push_back(marks[i].hover);
    all.push_back(marks[i].value);
  }
  const char* labels[] = {"A", "B", "A (the table's)", "B (the table's)"};
  for (size_t k = 0; k < 4; ++k)
    sc["series"].push_back({{"label", labels[k]},
                            {"colour", k % 2},
                            {"type", k < 2 ? "points" : "line"},
                            {"span", k >= 2},
                            {"values", values[k]}});
  const auto [lo, hi] = std::minmax_element(all.begin(), all.end());
  sc["axis"] = "linear";  // both sides on one axis, whatever their sizes
  sc["axes"]["x"] = axis_json(category_axis({"A", "B"}));
  sc["axes"]["y"] = axis_json(linear_axis(*lo, *hi, 5, 0.05));
  sc["height"] = 200;
  sc["hover"] = std::move(hover);
  return add_chart(std::move(sc), charts,
                   fmt::format("{} ({}) {}, us.{}", r.series, r.role, r.statistic, missing));
}

}  // namespace

std::string samples_charts(const Comparison& c, const std::string& mode, const std::string& series,
                           json& charts) {
  std::string out = "<div class=\"pair\">";
  for (const CompareRow& r : c.rows)
    if (r.mode == mode && r.series == series) out += samples_chart(c, r, charts);
  return out + "</div>\n";
}

}  // namespace latlab::html
