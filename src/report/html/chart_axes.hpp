// How the charts of latlab's pages lay out their values, decided here in C++
// so that the rule is tested and the page's script only applies it: whether
// the series of a chart share one linear axis, get one axis each, or share a
// log axis; each axis' range, ticks and tick labels (with the decimals that
// tell neighbours apart, or the names of categories). Private to
// src/report/html.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace latlab::html {

// How the series of one chart share its value axis.
enum class AxisKind {
  linear,  // one linear axis for all
  own,     // two series, each on its own linear axis (left, right)
  log,     // one log axis (asinh: 0 and negative values still draw)
};
const char* to_string(AxisKind k);

// Two series differ in size when one's typical magnitude is more than this
// many times the other's (the "where the time goes" bars use it too).
inline constexpr double kOwnScaleRatio = 10;

// A series' typical size: the median of its values' magnitudes; nullopt for
// no value or a median magnitude of 0 (no axis makes such a series bigger).
std::optional<double> typical_magnitude(std::span<const double> values);

// linear when the series with a typical magnitude do not differ in size;
// otherwise own for two such series and log for more.
AxisKind choose_axis(std::span<const std::vector<double>> series);

// `v` with `decimals` decimals ("-0.00" is written "0.00").
std::string fixed(double v, int decimals);

// Decimals that tell apart values `step` apart: 0 for a step >= 1, 1 for
// 0.5, 4 for 0.0002 (a step <= 0 or not finite: 0).
int decimals_for_step(double step);

// One axis as drawn: its range, whether it is log (asinh, linear within
// +-linear_below), its ticks in [min, max] and their labels (adjacent labels
// differ).
struct ChartAxis {
  double min = 0, max = 1;
  bool log = false;
  double linear_below = 1;
  std::vector<double> ticks;
  std::vector<std::string> labels;
  std::vector<std::string> names;  // a category axis: every category's name, labelled or not
};

// A linear axis over [lo, hi] widened by `pad` of its span each side (a
// single value gets a span), about `count` round ticks (1, 2 or 5 x 10^k
// apart), each label with the decimals of the step. `integer`: a step of at
// least 1 (counts, frame ids).
ChartAxis linear_axis(double lo, double hi, int count, double pad = 0.0, bool integer = false);

// A log axis over [lo, hi] whose smallest magnitude of interest is
// `smallest` (> 0): linear within +-10^floor(log10 smallest), ticks at 0 (when
// in range) and at +-powers of ten (with 2x and 5x when it spans fewer than
// three decades), each label with the decimals its own value needs.
ChartAxis log_axis(double lo, double hi, double smallest);

// Categories 0 .. names.size() - 1 in [-0.5, size - 0.5], each labelled
// with its name; with more than `max_labels` names, every k-th one only
// (the legend still names each).
ChartAxis category_axis(const std::vector<std::string>& names, size_t max_labels = 40);

// {"min", "max", "log", "linear_below", "ticks", "labels"} and, for a
// category axis, "names", for the page's script.
nlohmann::ordered_json axis_json(const ChartAxis& a);

}  // namespace latlab::html
