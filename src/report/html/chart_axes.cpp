#include "report/html/chart_axes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace latlab::html {
namespace {

double pow10(int k) { return std::pow(10.0, k); }
int floor_log10(double v) { return static_cast<int>(std::floor(std::log10(v) + 1e-9)); }
int ceil_log10(double v) { return static_cast<int>(std::ceil(std::log10(v) - 1e-9)); }

// About `count` round values (1, 2 or 5 x 10^k apart) inside [lo, hi], and
// the decimals that tell neighbours apart (a step of 0.0005 gets 4).
struct Ticks {
  std::vector<double> values;
  int decimals = 0;
};
Ticks nice_ticks(double lo, double hi, int count) {
  Ticks t;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi) || count < 1) return t;
  const double raw = (hi - lo) / count;
  const double magnitude = pow10(static_cast<int>(std::floor(std::log10(raw))));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  t.decimals = decimals_for_step(step);
  const double first = std::ceil(lo / step - 1e-9);
  // Counted, not k += 1 on a double: at k of 2^53 and beyond that never moves.
  for (int i = 0; i <= 4 * count && (first + i) * step <= hi + step * 1e-9; ++i)
    t.values.push_back((first + i) * step);
  return t;
}

// A log tick's label: the decimals its own value needs ("0.002", "50", "-10").
std::string log_label(double v) {
  if (v == 0) return "0";
  return fixed(v, std::max(0, -floor_log10(std::abs(v))));
}

// Whether the largest of `magnitudes` is more than kOwnScaleRatio times the smallest.
bool differ_in_size(std::span<const double> magnitudes) {
  if (magnitudes.size() < 2) return false;
  const auto [lo, hi] = std::minmax_element(magnitudes.begin(), magnitudes.end());
  return *hi > kOwnScaleRatio * *lo;
}

}  // namespace

std::string fixed(double v, int decimals) {
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find_first_not_of("-0.") == std::string::npos && s[0] == '-') s.erase(0, 1);
  return s;
}

const char* to_string(AxisKind k) {
  static const char* const kNames[] = {"linear", "own", "log"};  // in AxisKind's order
  return kNames[static_cast<size_t>(k)];
}

std::optional<double> typical_magnitude(std::span<const double> values) {
  if (values.empty()) return std::nullopt;
  std::vector<double> m;
  m.reserve(values.size());
  for (double v : values) m.push_back(std::abs(v));
  const auto mid = m.begin() + static_cast<std::ptrdiff_t>(m.size() / 2);
  std::nth_element(m.begin(), mid, m.end());
  if (!(*mid > 0) || !std::isfinite(*mid)) return std::nullopt;
  return *mid;
}

AxisKind choose_axis(std::span<const std::vector<double>> series) {
  std::vector<double> magnitudes;
  for (const std::vector<double>& s : series)
    if (const std::optional<double> m = typical_magnitude(s)) magnitudes.push_back(*m);
  if (!differ_in_size(magnitudes)) return AxisKind::linear;
  return magnitudes.size() == 2 ? AxisKind::own : AxisKind::log;
}

int decimals_for_step(double step) {
  if (!(step > 0) || !std::isfinite(step)) return 0;
  return std::max(0, -floor_log10(step));
}

ChartAxis linear_axis(double lo, double hi, int count, double pad, bool integer) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = hi = 0;
  if (hi < lo) std::swap(lo, hi);
  // A span within rounding of its values (50.007999999999996 to 50.008) is one value.
  if (hi - lo <= 1e-9 * std::max(std::abs(lo), std::abs(hi))) {
    const double half = lo == 0 ? 0.5 : std::abs(lo) * 0.05;  // a single value gets a span
    lo -= half;
    hi += half;
  } else if (pad > 0) {
    const double p = (hi - lo) * pad;
    lo -= p;
    hi += p;
  }
  ChartAxis a;
  a.min = lo;
  a.max = hi;
  if (integer && (hi - lo) / count < 1) {  // a step of 1: no "0.2 frames"
    for (double v = std::ceil(lo); v <= hi; v += 1) a.ticks.push_back(v);
    for (double v : a.ticks) a.labels.push_back(fixed(v, 0));
    return a;
  }
  const Ticks t = nice_ticks(lo, hi, count);
  a.ticks = t.values;
  for (double v : t.values) a.labels.push_back(fixed(v, t.decimals));
  return a;
}

ChartAxis log_axis(double lo, double hi, double smallest) {
  if (hi < lo) std::swap(lo, hi);
  const double top = std::max(std::abs(lo), std::abs(hi));
  if (!(smallest > 0) || !(top > 0) || !std::isfinite(top) || !std::isfinite(smallest))
    return linear_axis(lo, hi, 5, 0.05);
  ChartAxis a;
  a.log = true;
  const int k0 = floor_log10(std::min(smallest, top));
  const double t = pow10(k0);
  a.linear_below = t;
  auto up = [t](double v) { return v <= t ? t : pow10(ceil_log10(v)); };      // >= v
  auto down = [t](double v) { return v < t ? 0.0 : pow10(floor_log10(v)); };  // <= v
  a.min = lo >= 0 ? down(lo) : -up(-lo);
  a.max = hi > 0 ? up(hi) : -down(-hi);
  if (!(a.max > a.min)) a.max = a.min + t;
  const int k1 = ceil_log10(std::max(std::abs(a.min), std::abs(a.max)));
  const int every = k1 - k0 > 8 ? 2 : 1;  // at most about ten ticks a side
  std::vector<double> magnitudes;
  for (int k = k0; k <= k1; k += every) {
    magnitudes.push_back(pow10(k));
    if (k1 - k0 < 3) {
      magnitudes.push_back(2 * pow10(k));
      magnitudes.push_back(5 * pow10(k));
    }
  }
  for (auto m = magnitudes.rbegin(); m != magnitudes.rend(); ++m)
    if (-*m >= a.min && -*m <= a.max) a.ticks.push_back(-*m);
  if (a.min <= 0 && a.max >= 0) a.ticks.push_back(0);
  for (double m : magnitudes)
    if (m >= a.min && m <= a.max) a.ticks.push_back(m);
  for (double v : a.ticks) a.labels.push_back(log_label(v));
  return a;
}

ChartAxis category_axis(const std::vector<std::string>& names, size_t max_labels) {
  ChartAxis a;
  a.min = -0.5;
  a.max = static_cast<double>(names.size()) - 0.5;
  a.names = names;
  const size_t every =
      max_labels == 0 ? 1 : std::max<size_t>(1, (names.size() + max_labels - 1) / max_labels);
  for (size_t i = 0; i < names.size(); i += every) {
    a.ticks.push_back(static_cast<double>(i));
    a.labels.push_back(names[i]);
  }
  return a;
}

nlohmann::ordered_json axis_json(const ChartAxis& a) {
  nlohmann::ordered_json j{{"min", a.min},     {"max", a.max},
                           {"log", a.log},     {"linear_below", a.linear_below},
                           {"ticks", a.ticks}, {"labels", a.labels}};
  if (!a.names.empty()) j["names"] = a.names;
  return j;
}

}  // namespace latlab::html
