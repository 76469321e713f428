#include "capture/presentation_clock.hpp"

#include <ctime>
#include <limits>

#include "latlab/host_clock.hpp"

namespace latlab::capture {
int64_t clock_now_ns(uint32_t clock_id) {
  timespec ts{};
  clock_gettime(static_cast<clockid_t>(clock_id), &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string clock_id_name(uint32_t clock_id) {
  switch (static_cast<clockid_t>(clock_id)) {
    case CLOCK_MONOTONIC:
      return "CLOCK_MONOTONIC";
    case CLOCK_MONOTONIC_RAW:
      return "CLOCK_MONOTONIC_RAW";
    case CLOCK_BOOTTIME:
      return "CLOCK_BOOTTIME";
    case CLOCK_REALTIME:
      return "CLOCK_REALTIME";
    case CLOCK_TAI:
      return "CLOCK_TAI";
    default:
      return "clock " + std::to_string(clock_id);
  }
}

std::string presentation_clock_refusal(uint32_t clock_id) {
  const auto id = static_cast<clockid_t>(clock_id);
  if (id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW || id == CLOCK_BOOTTIME) return {};
  const std::string name = clock_id_name(clock_id);
  if (id == CLOCK_REALTIME || id == CLOCK_TAI)
    return "the compositor's presentation clock is " + name +
           ", which steps with the wall time: its times cannot be put on " + kHostClockName;
  return "the compositor's presentation clock is " + name +
         ", which latlab cannot relate to " + kHostClockName;
}

int64_t host_offset_ns(uint32_t clock_id) {
  if (static_cast<clockid_t>(clock_id) == CLOCK_MONOTONIC) return 0;
  int64_t best_width = std::numeric_limits<int64_t>::max();
  int64_t offset = 0;
  for (int i = 0; i < 3; ++i) {
    const int64_t before = host_now_ns();
    const int64_t other = clock_now_ns(clock_id);
    const int64_t after = host_now_ns();
    if (after - before < best_width) {
      best_width = after - before;
      offset = before + (after - before) / 2 - other;
    }
  }
  return offset;
}

int64_t presentation_to_host_ns(uint32_t clock_id, int64_t t_ns) {
  return t_ns + host_offset_ns(clock_id);
}

}  // namespace latlab::capture
