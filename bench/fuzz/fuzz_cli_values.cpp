// libFuzzer target: the CLI's option-value parsers (apps/latlab/cli_values.hpp)
// on any text. Each must return a value within its documented range or none.
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
  if (const auto r = parse_interval_ms(text, why)) {
    check(r->first > 0 && r->first <= r->second && r->second <= 10'000'000'000);
  } else {
    check(!why.empty());
  }
  for (const auto& s : {parse_run_size(text), parse_calibrate_size(text)}) {
    if (s) check(s->first >= 1 && s->first <= 16384 && s->second >= 1 && s->second <= 16384);
  }
  if (const auto s = parse_profile_size(text, 4096)) {
    check(s->first >= 1 && s->first <= 4096 && s->second >= 1 && s->second <= 4096);
  }
  return 0;
}
