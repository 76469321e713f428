// ClockSync: the calibrator and its refresh started for a program in one
// call, and the mapper it hands the profiler (a threads test: its refresh
// thread and mappers used from other threads). A scripted source: device ns =
// host ns + a known offset, so the mapping is exact up to the pairs' bounds.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "latlab/clock_sync.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {
namespace {

constexpr int64_t kOffsetNs = 5'000'000'000;  // device clock = host clock + 5 s
constexpr TickFormat kNs{1, 1, 64};

Calibrator::Source offset_source(std::atomic<int>* calls = nullptr) {
  return [calls]() -> Result<CalibrationPair> {
    if (calls != nullptr) ++*calls;
    const int64_t host = host_now_ns();
    return CalibrationPair{.device_ticks = static_cast<uint64_t>(host + kOffsetNs),
                           .host_ns = host,
                           .max_deviation_ns = 100,
                           .estimated = true};
  };
}

TEST(ClockSync, MapsDeviceTicksOntoTheHostClock) {
  const auto clock = ClockSync::start(offset_source(), kNs, "scripted");
  ASSERT_TRUE(clock->available()) << clock->reason();
  EXPECT_TRUE(clock->reason().empty());
  EXPECT_EQ(clock->method(), "scripted");
  const int64_t host = host_now_ns();
  const auto m = clock->mapper()(static_cast<uint64_t>(host + kOffsetNs));
  ASSERT_TRUE(m.has_value());
  EXPECT_LE(std::abs(m->host_ns - host), m->error_ns + 1000) << "error bound " << m->error_ns;
  EXPECT_GE(clock->stats().refreshes, 1u);
}

TEST(ClockSync, RefreshesOnItsOwnThread) {
  std::atomic<int> calls{0};
  const auto clock = ClockSync::start(offset_source(&calls), kNs, "scripted",
                                      {.samples_per_refresh = 2, .refresh_interval_ns = 5'000'000});
  ASSERT_TRUE(clock->available());
  const int64_t deadline = host_now_ns() + 5'000'000'000;
  while (clock->stats().refreshes < 3 && host_now_ns() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_GE(clock->stats().refreshes, 3u);
  EXPECT_GT(calls.load(), 2);
}

TEST(ClockSync, AFailingSourceLeavesItUnavailableWithTheReason) {
  std::atomic<int> calls{0};
  const auto clock = ClockSync::start(
      [&calls]() -> Result<CalibrationPair> {
        ++calls;
        return make_error("the device cannot be asked");
      },
      kNs, "scripted", {.max_tries = 4});
  EXPECT_FALSE(clock->available());
  EXPECT_NE(clock->reason().find("the device cannot be asked"), std::string::npos)
      << clock->reason();
  EXPECT_EQ(calls.load(), 4);  // bounded: max_tries, and no refresh thread after
  EXPECT_FALSE(clock->mapper()(123).has_value());
  EXPECT_EQ(clock->fit(), nullptr);
}

TEST(ClockSync, UnavailableMapsNothing) {
  const auto clock = ClockSync::unavailable("no queue was handed to latlab");
  EXPECT_FALSE(clock->available());
  EXPECT_EQ(clock->reason(), "no queue was handed to latlab");
  EXPECT_FALSE(clock->mapper()(1).has_value());
  EXPECT_EQ(clock->stats().refreshes, 0u);
}

TEST(ClockSync, AMapperOutlivesItWithTheLastFit) {
  std::function<std::optional<MappedTime>(uint64_t)> mapper;
  int64_t host = 0;
  {
    const auto clock = ClockSync::start(offset_source(), kNs, "scripted");
    ASSERT_TRUE(clock->available());
    mapper = clock->mapper();
    host = host_now_ns();
  }
  const auto m = mapper(static_cast<uint64_t>(host + kOffsetNs));
  ASSERT_TRUE(m.has_value());
  EXPECT_LE(std::abs(m->host_ns - host), m->error_ns + 1000);
}

// Mappers are used from other threads (the profiler's collector) while the
// ClockSync refreshes and then stops and goes away: every call gives the
// newest fit or the last one, never a torn one (run under TSan with the
// threads label).
TEST(ClockSync, MappersFromOtherThreadsWhileItRefreshesAndStops) {
  std::function<std::optional<MappedTime>(uint64_t)> mapper;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> mapped{0};
  std::vector<std::thread> readers;
  {
    const auto clock =
        ClockSync::start(offset_source(), kNs, "scripted",
                         {.samples_per_refresh = 1, .refresh_interval_ns = 1'000'000});
    ASSERT_TRUE(clock->available());
    mapper = clock->mapper();
    for (int t = 0; t < 3; ++t) {
      readers.emplace_back([&mapper, &done, &mapped] {
        while (!done.load()) {
          if (mapper(static_cast<uint64_t>(host_now_ns() + kOffsetNs))) ++mapped;
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    clock->stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }  // destroyed while the readers still map
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  done = true;
  for (auto& r : readers) r.join();
  EXPECT_GT(mapped.load(), 0u);
}

}  // namespace
}  // namespace latlab
