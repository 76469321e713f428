// Small pieces of the inline SVG charts of the comparison and history pages:
// a linear scale, tick values with enough decimals to tell them apart, axes.
// Every coordinate is written with two decimals. Private to src/report/html.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace latlab::html {

// Maps [lo, hi] (values) onto [px_lo, px_hi] (pixels); lo == hi maps to the middle.
struct LinearScale {
  double lo = 0, hi = 1;
  double px_lo = 0, px_hi = 1;
  double at(double v) const;
};

// [lo, hi] widened by `fraction` of its span on each side; a single value
// (lo == hi) gets a span of 10 % of its magnitude (1 when it is 0).
std::pair<double, double> padded_range(double lo, double hi, double fraction = 0.05);

// About `count` round values (1, 2 or 5 x 10^k apart) inside [lo, hi], and
// the decimals that tell neighbours apart (a step of 0.0005 gets 4).
struct Ticks {
  std::vector<double> values;
  int decimals = 0;
};
Ticks nice_ticks(double lo, double hi, int count);

// `v` with `decimals` decimals ("-0.00" is written "0.00").
std::string fixed(double v, int decimals);

// The opening tag of a chart: `label` is its accessible name (escaped);
// data-marks says how many data marks (class "pt") it draws.
std::string svg_open(std::string_view id, int width, int height, std::string_view label, int marks);

// A horizontal axis at pixel row `y` with its ticks, tick labels and `label`
// below; vertical grid lines from `grid_top` down to `y`.
std::string x_axis(const LinearScale& x, const Ticks& t, double y, double grid_top,
                   std::string_view label);

// A vertical axis at pixel column `x` with ticks, labels to its left and
// horizontal grid lines to `grid_right`.
std::string y_axis(const LinearScale& y, const Ticks& t, double x, double grid_right);

// <title> (the hover text of its parent), escaped.
std::string svg_title(std::string_view text);

}  // namespace latlab::html
