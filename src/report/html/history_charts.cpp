// The history page's charts, inline SVG: one figure across the runs in time
// order. A point per run with the figure (class "pt", coloured by machine,
// its run on hover); consecutive points joined; a run without the figure is
// a dashed line with the reason on hover, and breaks the line.
#include <fmt/format.h>

#include <algorithm>

#include "report/html/history_parts.hpp"
#include "report/html/html_page.hpp"
#include "report/html/report_parts.hpp"
#include "report/html/svg_chart.hpp"

namespace latlab::html {

const char* machine_colour(size_t k) { return palette()[k % palette().size()]; }

namespace {

constexpr int kWidth = 420, kHeight = 180;
constexpr double kLeft = 60, kTop = 22, kAxisY = kHeight - 36.0;

// Run ids under the x axis: at most about 8 labels.
std::string run_ticks(const std::vector<const HistoryRun*>& runs, const LinearScale& x) {
  std::string s = fmt::format(
      "<line class=\"axis\" x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" "
      "y2=\"{:.2f}\"/>\n",
      kLeft, kAxisY, kWidth - 10.0, kAxisY);
  const size_t every = std::max<size_t>(1, (runs.size() + 7) / 8);
  for (size_t i = 0; i < runs.size(); i += every) {
    s += fmt::format("<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\">{}</text>",
                     x.at(static_cast<double>(i)), kAxisY + 13, runs[i]->id);
  }
  return s + fmt::format(
                 "<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\">run id, oldest "
                 "first</text>\n",
                 (kLeft + kWidth - 10.0) / 2, kAxisY + 27);
}

// Joins the points of each unbroken stretch.
std::string lines(const std::vector<std::optional<std::pair<double, double>>>& points) {
  std::string s, stretch;
  size_t n = 0;
  auto flush = [&] {
    if (n >= 2) s += "<polyline class=\"line\" points=\"" + stretch + "\"/>\n";
    stretch.clear();
    n = 0;
  };
  for (const auto& p : points) {
    if (!p) {
      flush();
      continue;
    }
    stretch += fmt::format("{}{:.2f},{:.2f}", n == 0 ? "" : " ", p->first, p->second);
    ++n;
  }
  flush();
  return s;
}

}  // namespace

std::string figure_chart(const std::vector<const HistoryRun*>& runs, const Figure& f,
                         const std::map<std::string, size_t>& machines) {
  std::vector<std::optional<double>> values;
  std::optional<double> lo, hi;
  for (const HistoryRun* h : runs) {
    const std::optional<double> v = figure_value(h->result, f);
    values.push_back(v);
    if (!v) continue;
    lo = lo ? std::min(*lo, *v) : *v;
    hi = hi ? std::max(*hi, *v) : *v;
  }
  const auto [y_lo, y_hi] = padded_range(lo.value_or(0), hi.value_or(0), 0.08);
  const LinearScale y{y_lo, y_hi, kAxisY, kTop + 4};
  const double last = runs.size() > 1 ? static_cast<double>(runs.size() - 1) : 0;
  const LinearScale x{0, last, kLeft + 10, kWidth - 20.0};
  const std::string name = f.mode + " " + f.observer + " " + f.statistic;
  std::string body =
      fmt::format("<text x=\"{:.2f}\" y=\"14\" text-anchor=\"middle\">{} (us)</text>\n",
                  (kLeft + kWidth) / 2, escape(name));
  body += y_axis(y, nice_ticks(y_lo, y_hi, 4), kLeft, kWidth - 10.0) + run_ticks(runs, x);
  std::vector<std::optional<std::pair<double, double>>> points;
  std::string marks;
  int count = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const double px = x.at(static_cast<double>(i));
    if (!values[i]) {
      points.emplace_back();
      marks += fmt::format(
          "<line class=\"gap\" data-run=\"{}\" stroke-dasharray=\"3 3\" x1=\"{:.2f}\" "
          "y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\">{}</line>\n",
          runs[i]->id, px, kTop + 4, px, kAxisY,
          svg_title(
              fmt::format("run {}: no value ({})", runs[i]->id, why_missing(runs[i]->result, f))));
      continue;
    }
    points.emplace_back(std::pair{px, y.at(*values[i])});
    marks += fmt::format(
        "<circle class=\"pt\" data-run=\"{}\" data-value=\"{}\" cx=\"{:.2f}\" cy=\"{:.2f}\" "
        "r=\"3.5\" fill=\"{}\">{}</circle>\n",
        runs[i]->id, *values[i], px, y.at(*values[i]),
        machine_colour(machines.at(runs[i]->fingerprint)),
        svg_title(fmt::format("{}: {} us | {}", name, fixed(*values[i], 2), run_hover(*runs[i]))));
    ++count;
  }
  return "<figure>" +
         svg_open("hist-" + f.mode + "-" + f.observer + "-" + f.statistic, kWidth, kHeight,
                  name + " across runs, us", count) +
         body + lines(points) + marks + "</svg></figure>\n";
}

}  // namespace latlab::html
