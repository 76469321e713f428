// The comparison page's charts, inline SVG: per mode the shift of every row
// in % of A's reference with its interval, and per series both sides'
// samples. Every data mark has class "pt" and the chart's data-marks counts
// them (the browser test checks that each is drawn); hover text is <title>.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/html/compare_page_parts.hpp"
#include "report/html/report_parts.hpp"
#include "report/html/svg_chart.hpp"

namespace latlab::html {
namespace {

constexpr double kMaxShiftPct = 100;  // the shift chart's axis ends here; beyond, an arrow

// The chart's axis half-width in %: every interval end, at least twice the
// minimum effect, at most kMaxShiftPct.
double shift_range(const std::vector<const CompareRow*>& rows, double min_effect_pct) {
  double r = std::max(2 * min_effect_pct, 1.0);
  for (const CompareRow* row : rows) {
    if (!row->relative) continue;
    const double ref = *row->a_reference;
    r = std::max(r, std::abs(*row->relative * 100));
    if (row->ci_low)
      r = std::max({r, std::abs(*row->ci_low / ref * 100), std::abs(*row->ci_high / ref * 100)});
  }
  return std::min(r * 1.05, kMaxShiftPct);
}

std::string row_hover(const Comparison& c, const CompareRow& r) {
  if (r.call == ChangeCall::no_data)  // no shift: a side has no value
    return fmt::format("{} {} {}: no data", r.mode, r.series, r.statistic);
  std::string s =
      fmt::format("{} {} {}: shift {} us", r.mode, r.series, r.statistic, fixed(r.shift, 2));
  if (r.relative) s += fmt::format(" ({:+.1f}%)", *r.relative * 100);
  if (r.ci_low)
    s += fmt::format(", {:.0f}% interval [{}, {}] us", (1 - c.options.alpha) * 100,
                     fixed(*r.ci_low, 2), fixed(*r.ci_high, 2));
  if (tested(r)) s += fmt::format(", p adj {:.3g}", r.p_adjusted);
  return s + ", " + to_string(r.call);
}

// One row of the shift chart: its interval and point, or why there is none.
std::string shift_row(const Comparison& c, const CompareRow& r, const LinearScale& x, double y,
                      double range, int& marks) {
  std::string s = fmt::format(
      "<g data-series=\"{}\" data-stat=\"{}\">{}<text x=\"{:.2f}\" y=\"{:.2f}\" "
      "text-anchor=\"end\">{} {}</text>",
      escape(r.series), r.statistic, svg_title(row_hover(c, r)), x.px_lo - 6, y + 4,
      escape(r.series), r.statistic);
  if (!r.relative) {
    const char* why = r.call == ChangeCall::no_data ? "no data" : "A's reference <= 0: no %";
    return s + fmt::format("<text class=\"na\" x=\"{:.2f}\" y=\"{:.2f}\">{}</text></g>\n",
                           x.px_lo + 4, y + 4, escape(why));
  }
  auto clip = [&](double pct) { return std::clamp(pct, -range, range); };
  const char* cls = call_class(r.call);
  const double ref = *r.a_reference;
  const double x1 = r.ci_low ? x.at(clip(*r.ci_low / ref * 100)) : 0;
  const double x2 = r.ci_high ? x.at(clip(*r.ci_high / ref * 100)) : 0;
  if (x2 - x1 >= 0.5) {  // an interval of no width (no spread on either side) is the point alone
    s += fmt::format(
        "<line class=\"pt ci {}\" x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" "
        "y2=\"{:.2f}\"/>",
        cls, x1, y, x2, y);
    ++marks;
  }
  const double pct = *r.relative * 100;
  if (std::abs(pct) > range) {  // off the axis: an arrow at its end
    const double px = x.at(clip(pct)), d = pct > 0 ? 6 : -6;
    s += fmt::format("<path class=\"pt {}\" d=\"M{:.2f},{:.2f} l{:.2f},5 l0,-10 z\"/>", cls, px + d,
                     y, -d);
  } else {
    s += fmt::format("<circle class=\"pt {}\" cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"4\"/>", cls,
                     x.at(pct), y);
  }
  ++marks;
  return s + "</g>\n";
}

}  // namespace

std::string shift_chart(const Comparison& c, const std::string& mode) {
  std::vector<const CompareRow*> rows;
  for (const CompareRow& r : c.rows)
    if (r.mode == mode) rows.push_back(&r);
  constexpr int kWidth = 760, kRowHeight = 16;
  const double top = 24, axis_y = top + static_cast<double>(rows.size()) * kRowHeight + 4;
  const double range = shift_range(rows, c.options.min_effect * 100);
  const LinearScale x{-range, range, 230, kWidth - 20.0};
  std::string body = fmt::format(
      "<text x=\"{:.2f}\" y=\"14\" text-anchor=\"middle\">shift B - A, % of A's reference, "
      "with its {:.0f}% interval (shaded: smaller than the minimum effect)</text>\n",
      (x.px_lo + x.px_hi) / 2, (1 - c.options.alpha) * 100);
  const double band = std::min(c.options.min_effect * 100, range);
  body += fmt::format(
      "<rect class=\"band\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" "
      "height=\"{:.2f}\"/>\n",
      x.at(-band), top, x.at(band) - x.at(-band), axis_y - top);
  body += x_axis(x, nice_ticks(-range, range, 8), axis_y, top, "%");
  body += fmt::format(
      "<line class=\"zero\" x1=\"{0:.2f}\" y1=\"{1:.2f}\" x2=\"{0:.2f}\" "
      "y2=\"{2:.2f}\"/>\n",
      x.at(0), top, axis_y);
  int marks = 0;
  for (size_t i = 0; i < rows.size(); ++i)
    body +=
        shift_row(c, *rows[i], x, top + (static_cast<double>(i) + 0.5) * kRowHeight, range, marks);
  const int height = static_cast<int>(axis_y) + 36;
  return svg_open("shift-" + mode, kWidth, height, mode + ": shift of every row", marks) + body +
         "</svg>\n";
}

namespace {

// One statistic's panel: A's and B's samples on one axis, with each side's
// figure of the table as a tick.
std::string samples_panel(const Comparison& c, const CompareRow& r, double top, int width,
                          int& marks) {
  const std::vector<double>& a = samples_of(r, c.unit, 'A');
  const std::vector<double>& b = samples_of(r, c.unit, 'B');
  std::vector<double> all(a);
  all.insert(all.end(), b.begin(), b.end());
  for (const std::optional<double>& t : {r.a_total, r.b_total})
    if (t) all.push_back(*t);
  std::string s = fmt::format("<text x=\"4\" y=\"{:.2f}\">{}</text>\n", top + 10, r.statistic);
  if (all.empty())
    return s +
           fmt::format("<text class=\"na\" x=\"40\" y=\"{:.2f}\">no value on either side</text>\n",
                       top + 30);
  const auto [lo, hi] = padded_range(*std::min_element(all.begin(), all.end()),
                                     *std::max_element(all.begin(), all.end()));
  const LinearScale x{lo, hi, 40, width - 14.0};
  const double axis_y = top + 50;
  s += x_axis(x, nice_ticks(lo, hi, 5), axis_y, top + 4, "");
  for (const auto& [side, values, total, y] :
       {std::tuple{'A', &a, r.a_total, top + 16}, std::tuple{'B', &b, r.b_total, top + 34}}) {
    const char lower = static_cast<char>(side + ('a' - 'A'));
    s += fmt::format("<text x=\"26\" y=\"{:.2f}\">{}</text>", y + 4, side);
    if (values->empty())
      s += fmt::format("<text class=\"na\" x=\"44\" y=\"{:.2f}\">no value</text>", y + 4);
    for (size_t i = 0; i < values->size(); ++i) {
      const double jitter = static_cast<double>(static_cast<int>(i * 7 % 5) - 2) * 2;
      s += fmt::format(
          "<circle class=\"pt side-{}\" fill-opacity=\"0.6\" cx=\"{:.2f}\" "
          "cy=\"{:.2f}\" r=\"3.5\">{}</circle>",
          lower, x.at((*values)[i]), y + jitter,
          svg_title(fmt::format("{}: {} us", side, fixed((*values)[i], 2))));
      ++marks;
    }
    if (total)
      s += fmt::format(
          "<line class=\"mark-{0}\" x1=\"{2:.2f}\" y1=\"{3:.2f}\" x2=\"{2:.2f}\" "
          "y2=\"{4:.2f}\">{1}</line>\n",
          lower, svg_title(fmt::format("{}: {} us (the table's {})", side, fixed(*total, 2), side)),
          x.at(*total), y - 8, y + 8);
  }
  return s;
}

}  // namespace

std::string samples_chart(const Comparison& c, const std::string& mode, const std::string& series) {
  constexpr int kWidth = 380, kPanel = 82;
  std::string body, role;
  int marks = 0;
  double top = 0;
  for (const CompareRow& r : c.rows) {
    if (r.mode != mode || r.series != series) continue;
    role = r.role;
    body += samples_panel(c, r, top, kWidth, marks);
    top += kPanel;
  }
  return "<figure>" +
         svg_open("samples-" + mode + "-" + series, kWidth, static_cast<int>(top),
                  mode + " " + series + ": both sides' samples, us", marks) +
         body + "</svg><figcaption>" + escape(series) + " (" + escape(role) +
         "), us</figcaption></figure>\n";
}

}  // namespace latlab::html
