#include "report/html/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/html/report_parts.hpp"

namespace latlab::html {

double LinearScale::at(double v) const {
  if (hi == lo) return (px_lo + px_hi) / 2;
  return px_lo + (v - lo) / (hi - lo) * (px_hi - px_lo);
}

std::pair<double, double> padded_range(double lo, double hi, double fraction) {
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) {
    const double half = lo == 0 ? 0.5 : std::abs(lo) * 0.05;
    return {lo - half, hi + half};
  }
  const double pad = (hi - lo) * fraction;
  return {lo - pad, hi + pad};
}

Ticks nice_ticks(double lo, double hi, int count) {
  Ticks t;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi) || count < 1) return t;
  const double raw = (hi - lo) / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  t.decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  const double first = std::ceil(lo / step - 1e-9);
  for (double k = first; k * step <= hi + step * 1e-9; k += 1) t.values.push_back(k * step);
  return t;
}

std::string fixed(double v, int decimals) {
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find_first_not_of("-0.") == std::string::npos && s[0] == '-') s.erase(0, 1);
  return s;
}

std::string svg_open(std::string_view id, int width, int height, std::string_view label,
                     int marks) {
  return fmt::format(
      "<svg class=\"chart\" id=\"{0}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{1}\" "
      "height=\"{2}\" viewBox=\"0 0 {1} {2}\" role=\"img\" aria-label=\"{3}\" "
      "data-marks=\"{4}\">\n",
      escape(id), width, height, escape(label), marks);
}

std::string x_axis(const LinearScale& x, const Ticks& t, double y, double grid_top,
                   std::string_view label) {
  std::string s = fmt::format(
      "<line class=\"axis\" x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" "
      "y2=\"{:.2f}\"/>\n",
      x.px_lo, y, x.px_hi, y);
  for (double v : t.values) {
    const double px = x.at(v);
    s += fmt::format(
        "<line class=\"grid\" x1=\"{0:.2f}\" y1=\"{1:.2f}\" x2=\"{0:.2f}\" y2=\"{2:.2f}\"/>"
        "<text x=\"{0:.2f}\" y=\"{3:.2f}\" text-anchor=\"middle\">{4}</text>\n",
        px, grid_top, y, y + 13, fixed(v, t.decimals));
  }
  if (!label.empty()) {
    s += fmt::format("<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\">{}</text>\n",
                     (x.px_lo + x.px_hi) / 2, y + 27, escape(label));
  }
  return s;
}

std::string y_axis(const LinearScale& y, const Ticks& t, double x, double grid_right) {
  std::string s = fmt::format(
      "<line class=\"axis\" x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" "
      "y2=\"{:.2f}\"/>\n",
      x, y.px_lo, x, y.px_hi);
  for (double v : t.values) {
    const double py = y.at(v);
    s += fmt::format(
        "<line class=\"grid\" x1=\"{0:.2f}\" y1=\"{1:.2f}\" x2=\"{2:.2f}\" y2=\"{1:.2f}\"/>"
        "<text x=\"{3:.2f}\" y=\"{4:.2f}\" text-anchor=\"end\">{5}</text>\n",
        x, py, grid_right, x - 4, py + 4, fixed(v, t.decimals));
  }
  return s;
}

std::string svg_title(std::string_view text) { return "<title>" + escape(text) + "</title>"; }

}  // namespace latlab::html
