// The compositor's presentation clock put on the host clock
// (src/capture/presentation_clock.hpp): CLOCK_MONOTONIC as is, the clocks
// that run beside it by their offset, the ones that step refused.
#include <gtest/gtest.h>

#include <ctime>

#include "capture/presentation_clock.hpp"
#include "latlab/host_clock.hpp"

namespace latlab::capture {
namespace {

TEST(PresentationClock, MonotonicIsTakenAsIs) {
  EXPECT_EQ(presentation_clock_refusal(CLOCK_MONOTONIC), "");
  EXPECT_EQ(presentation_to_host_ns(CLOCK_MONOTONIC, 123'456'789), 123'456'789);
}

TEST(PresentationClock, RawAndBoottimeLandOnTheHostClock) {
  for (const clockid_t id : {CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME}) {
    EXPECT_EQ(presentation_clock_refusal(static_cast<uint32_t>(id)), "") << clock_id_name(id);
    const int64_t before = host_now_ns();
    const auto clock = static_cast<uint32_t>(id);
    const int64_t mapped = presentation_to_host_ns(clock, clock_now_ns(clock));
    const int64_t after = host_now_ns();
    // The read on `id` lies between the two host reads; the offset's own
    // bracket adds at most a few microseconds (a preempted read, 1 ms).
    EXPECT_GE(mapped, before - 1'000'000) << clock_id_name(id);
    EXPECT_LE(mapped, after + 1'000'000) << clock_id_name(id);
  }
}

TEST(PresentationClock, ClocksThatStepAreRefusedWithTheReason) {
  const std::string realtime = presentation_clock_refusal(CLOCK_REALTIME);
  EXPECT_NE(realtime.find("CLOCK_REALTIME"), std::string::npos) << realtime;
  EXPECT_NE(realtime.find("steps"), std::string::npos) << realtime;
  const std::string unknown = presentation_clock_refusal(77);
  EXPECT_NE(unknown.find("clock 77"), std::string::npos) << unknown;
}

}  // namespace
}  // namespace latlab::capture
