// The input plan's parsers and schedule (include/latlab/bench/capture_input.hpp).
#include "latlab/bench/capture_input.hpp"

#include <charconv>
#include <cmath>

namespace latlab {
namespace {

// "12ms", "500us", "0.5s", "2000000ns" -> ns; a bare number takes `unit`.
std::optional<int64_t> parse_duration(std::string_view text, std::string_view unit) {
  size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) != 0 || text[end] == '.'))
    ++end;
  if (end == 0) return std::nullopt;
  const std::string number(text.substr(0, end));
  std::string_view suffix = text.substr(end);
  if (suffix.empty()) suffix = unit;
  double scale = 0;
  if (suffix == "ns") {
    scale = 1;
  } else if (suffix == "us") {
    scale = 1e3;
  } else if (suffix == "ms") {
    scale = 1e6;
  } else if (suffix == "s") {
    scale = 1e9;
  } else {
    return std::nullopt;
  }
  char* rest = nullptr;
  const double v = std::strtod(number.c_str(), &rest);
  if (rest == nullptr || *rest != '\0' || !std::isfinite(v)) return std::nullopt;
  const double ns = v * scale;
  if (ns < 1 || ns > 3600e9) return std::nullopt;
  return static_cast<int64_t>(std::llround(ns));
}

std::string_view unit_of(std::string_view text) {
  size_t i = text.size();
  while (i > 0 && std::isalpha(static_cast<unsigned char>(text[i - 1])) != 0) --i;
  return text.substr(i);
}

}  // namespace

Result<CaptureInputSpec> parse_input_spec(std::string_view spec) {
  CaptureInputSpec s;
  if (spec == "motion") {
    s.kind = InputKind::motion;
    return s;
  }
  if (spec.substr(0, 4) == "key:") {
    s.kind = InputKind::key;
    s.key = std::string(spec.substr(4));
    if (s.key.empty())
      return Error{"--input key: needs a key name (an X keysym: space, a, Return)"};
    return s;
  }
  if (spec.substr(0, 7) == "button:") {
    s.kind = InputKind::button;
    const std::string_view n = spec.substr(7);
    uint32_t b = 0;
    const auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), b);
    if (n.empty() || ec != std::errc() || p != n.data() + n.size() || b < 1 || b > 5)
      return Error{"--input button:N needs N in 1..5, not '" + std::string(n) + "'"};
    s.button = b;
    return s;
  }
  return Error{"--input '" + std::string(spec) + "': expected key:NAME, button:N or motion"};
}

std::string to_string(const CaptureInputSpec& spec) {
  switch (spec.kind) {
    case InputKind::key:
      return "key:" + spec.key;
    case InputKind::button:
      return "button:" + std::to_string(spec.button);
    case InputKind::motion:
      return "motion";
  }
  return "?";
}

Result<std::pair<int64_t, int64_t>> parse_interval_range(std::string_view text) {
  const Error bad{"--input-interval '" + std::string(text) +
                  "': expected MIN-MAX with a unit (8-12ms, 500us-1ms) or one value (10ms), "
                  "each from 1 ns to 1 h, MIN <= MAX"};
  const size_t dash = text.find('-');
  const std::string_view hi_text = dash == std::string_view::npos ? text : text.substr(dash + 1);
  const std::string_view lo_text = dash == std::string_view::npos ? text : text.substr(0, dash);
  const std::string_view unit = unit_of(hi_text);
  if (unit.empty()) return bad;
  const auto lo = parse_duration(lo_text, unit);
  const auto hi = parse_duration(hi_text, unit);
  if (!lo || !hi || *lo > *hi) return bad;
  return std::pair{*lo, *hi};
}

Result<InputRegion> parse_input_region(std::string_view text) {
  const Error bad{"--input-region '" + std::string(text) +
                  "': expected X,Y,W,H in the window's pixels (W and H above 0)"};
  int64_t v[4] = {0, 0, 0, 0};
  std::string_view rest = text;
  for (int i = 0; i < 4; ++i) {
    const size_t comma = rest.find(',');
    const std::string_view part = rest.substr(0, comma);
    const char* end = part.data() + part.size();
    const auto [p, ec] = std::from_chars(part.data(), end, v[i]);
    if (part.empty() || ec != std::errc() || p != end) return bad;
    if ((comma == std::string_view::npos) != (i == 3)) return bad;
    if (i < 3) rest = rest.substr(comma + 1);
  }
  constexpr int64_t kMax = 1 << 16;  // X coordinates are 16-bit
  if (v[0] < -kMax || v[0] > kMax || v[1] < -kMax || v[1] > kMax || v[2] <= 0 || v[2] > kMax ||
      v[3] <= 0 || v[3] > kMax)
    return bad;
  return InputRegion{static_cast<int32_t>(v[0]), static_cast<int32_t>(v[1]),
                     static_cast<uint32_t>(v[2]), static_cast<uint32_t>(v[3])};
}

std::string to_string(const InputRegion& r) {
  return std::to_string(r.x) + ',' + std::to_string(r.y) + ',' + std::to_string(r.width) + ',' +
         std::to_string(r.height);
}

std::vector<int64_t> input_deadlines(const ScheduleDesc& desc, int64_t start, size_t count) {
  Schedule schedule(desc);
  std::vector<int64_t> out;
  out.reserve(count);
  int64_t t = start;
  for (size_t i = 0; i < count; ++i) {
    t += schedule.next_interval_ns();
    out.push_back(t);
  }
  return out;
}

const Distribution* CaptureInput::figure(std::string_view name) const {
  for (const auto& [n, d] : figures) {
    if (n == name) return &d;
  }
  return nullptr;
}

}  // namespace latlab
