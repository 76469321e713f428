// libFuzzer target: the CLI's option-value parsers (apps/latlab/cli_values.hpp)
// on any text. Each must return a value within its documented range or none;
// the number parsers (behind every numeric option) and --interval-ms only
// from decimal text (whole numbers: digits after an optional '-').
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cli_values.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();  // an out-of-range value is a finding
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace latlab::cli;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string why;
  const bool plain = text.find_first_not_of("0123456789-.eE") == std::string::npos;
  if (const auto r = parse_interval_ms(text, why)) {
    check(plain && r->first > 0 && r->first <= r->second && r->second <= 10'000'000'000);
  } else {
    check(!why.empty());
  }
  for (const auto& s : {parse_run_size(text), parse_calibrate_size(text)}) {
    if (s) check(s->first >= 1 && s->first <= 16384 && s->second >= 1 && s->second <= 16384);
  }
  if (const auto s = parse_profile_size(text, 4096)) {
    check(s->first >= 1 && s->first <= 4096 && s->second >= 1 && s->second <= 4096);
  }
  if (const auto v = parse_real(text, -1e6, 1e9))
    check(plain && std::isfinite(*v) && *v >= -1e6 && *v <= 1e9);
  const size_t sign = !text.empty() && text[0] == '-' ? 1 : 0;
  if (const auto v = parse_whole(text, -1, 10'000)) {
    check(text.size() > sign && text.find_first_not_of("0123456789", sign) == std::string::npos &&
          *v >= -1 && *v <= 10'000);
  }
  if (const auto v = parse_unsigned(text, 0, UINT64_MAX)) {
    check(text.find_first_not_of("0123456789") == std::string::npos &&
          std::to_string(*v).size() <= text.size());
  }
  return 0;
}
