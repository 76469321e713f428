// The CLI's parsers of option values (cli_values.hpp).
#include "cli_values.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace latlab::cli {
namespace {

// Leading zeros are decimal here ("010" is 10): one digit string, no prefix.
bool decimal_digits(const char* first, const char* last) {
  if (first == last) return false;
  for (const char* p = first; p != last; ++p) {
    if (*p < '0' || *p > '9') return false;
  }
  return true;
}

}  // namespace

std::optional<double> parse_real(const std::string& text, double lo, double hi) {
  const char* first = text.data();
  const char* last = first + text.size();
  // from_chars takes no '+', no blanks and no hex prefix; it does take
  // "inf" and "nan", which isfinite refuses below.
  double v = 0;
  const auto [ptr, ec] = std::from_chars(first, last, v, std::chars_format::general);
  if (ec != std::errc{} || ptr != last || !std::isfinite(v)) return std::nullopt;
  if (!(v >= lo && v <= hi)) return std::nullopt;
  return v;
}

std::optional<int64_t> parse_whole(const std::string& text, int64_t lo, int64_t hi) {
  const char* first = text.data();
  const char* last = first + text.size();
  const bool negative = first != last && *first == '-';
  if (negative && lo >= 0) return std::nullopt;
  if (!decimal_digits(first + (negative ? 1 : 0), last)) return std::nullopt;
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(first, last, v);
  if (ec != std::errc{} || ptr != last || v < lo || v > hi) return std::nullopt;
  return v;
}

std::optional<uint64_t> parse_unsigned(const std::string& text, uint64_t lo, uint64_t hi) {
  const char* first = text.data();
  const char* last = first + text.size();
  if (!decimal_digits(first, last)) return std::nullopt;
  uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(first, last, v);
  if (ec != std::errc{} || ptr != last || v < lo || v > hi) return std::nullopt;
  return v;
}

std::optional<std::pair<int64_t, int64_t>> parse_interval_ms(const std::string& text,
                                                             std::string& why) {
  // Each end as every other floating option (parse_real): decimal only, no
  // hex ("0x8"), blanks or '+' (strtod took them).
  auto parse_one = [&](const std::string& s, int64_t& ns) {
    const std::optional<double> v = parse_real(s, 0, 10'000);
    if (!v || *v <= 0) return false;
    ns = std::llround(*v * 1e6);
    return ns > 0;
  };
  const size_t dash = text.find('-', 1);
  int64_t lo = 0;
  int64_t hi = 0;
  const std::string a = dash == std::string::npos ? text : text.substr(0, dash);
  const std::string b = dash == std::string::npos ? text : text.substr(dash + 1);
  if (!parse_one(a, lo) || !parse_one(b, hi)) {
    why = "--interval-ms '" + text +
          "' is not MIN-MAX in milliseconds with 0 < MIN <= MAX <= 10000 (e.g. 8-12)";
    return std::nullopt;
  }
  if (hi < lo) {
    why = "--interval-ms '" + text + "' is reversed: give MIN-MAX with MIN <= MAX";
    return std::nullopt;
  }
  return std::pair{lo, hi};
}

std::optional<std::pair<uint32_t, uint32_t>> parse_run_size(const std::string& s) {
  const size_t x = s.find('x');
  if (x == std::string::npos) return std::nullopt;
  auto side = [](const std::string& t) -> std::optional<uint32_t> {
    if (t.empty() || t.size() > 5) return std::nullopt;
    uint32_t v = 0;
    for (char ch : t) {
      if (ch < '0' || ch > '9') return std::nullopt;
      v = v * 10 + static_cast<uint32_t>(ch - '0');
    }
    if (v < 1 || v > 16384) return std::nullopt;
    return v;
  };
  const auto w = side(s.substr(0, x));
  const auto h = side(s.substr(x + 1));
  if (!w || !h) return std::nullopt;
  return std::pair{*w, *h};
}

std::optional<std::pair<uint32_t, uint32_t>> parse_profile_size(const std::string& s,
                                                                uint32_t max_side) {
  const auto x = s.find('x');
  if (x == std::string::npos) return std::nullopt;
  const auto parse = [max_side](const char* first, const char* last) -> std::optional<uint32_t> {
    uint32_t v = 0;
    const auto [ptr, ec] = std::from_chars(first, last, v);
    if (ec != std::errc{} || ptr != last || v == 0 || v > max_side) return std::nullopt;
    return v;
  };
  const auto w = parse(s.data(), s.data() + x);
  const auto h = parse(s.data() + x + 1, s.data() + s.size());
  if (!w || !h) return std::nullopt;
  return std::make_pair(*w, *h);
}

std::optional<std::pair<uint32_t, uint32_t>> parse_calibrate_size(const std::string& text) {
  unsigned long a = 0, b = 0;
  char x = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%lu%c%lu%c", &a, &x, &b, &extra) != 3 || (x != 'x' && x != 'X'))
    return std::nullopt;
  if (a == 0 || b == 0 || a > 16384 || b > 16384) return std::nullopt;
  return std::pair{static_cast<uint32_t>(a), static_cast<uint32_t>(b)};
}

}  // namespace latlab::cli
