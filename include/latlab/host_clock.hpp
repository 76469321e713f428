// The run's host clock: CLOCK_MONOTONIC, in int64 nanoseconds.
//
// Every host time in latlab is a value of this clock. It is the clock that
// clock_nanosleep/timerfd wait on, and the one every Linux Vulkan driver seen
// here calibrates against (lavapipe offers no CLOCK_MONOTONIC_RAW). Never mix
// clocks in one run. Thread-safe.
#pragma once

#include <cstdint>
#include <ctime>

namespace latlab {

inline constexpr clockid_t kHostClockId = CLOCK_MONOTONIC;
inline constexpr const char* kHostClockName = "CLOCK_MONOTONIC";

// Now, in host-clock nanoseconds.
inline int64_t host_now_ns() {
  timespec ts{};
  clock_gettime(kHostClockId, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline timespec host_ns_to_timespec(int64_t ns) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  return ts;
}

}  // namespace latlab
