// run_clock_study on a SimClock with a virtual host clock: ten simulated
// minutes run in milliseconds, deterministically.
#include "latlab/bench/clock_study.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "latlab/bench/device_factory.hpp"
#include "latlab/bench/sim.hpp"

namespace latlab {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

struct VirtualTime {
  int64_t now = 0;
  void attach(ClockStudyDesc& d) {
    d.now = [this] { return now; };
    d.sleep_until = [this](int64_t t) { now = std::max(now, t); };
  }
};

TEST(ClockStudy, TenMinutesOfA4PpmClock) {
  VirtualTime vt;
  SimClockDesc sd;
  sd.offset_ns = -kSecond;
  sd.drift_ppm = 4.0;
  sd.host_clock = [&vt] { return vt.now; };
  SimClock clock(sd);
  ClockStudyDesc desc;
  desc.seconds = 600;
  desc.interval_ns = kSecond;
  desc.host_domain = "CLOCK_MONOTONIC";
  vt.attach(desc);
  int progress_calls = 0;
  desc.progress = [&](double f) {
    EXPECT_GE(f, 0.0);
    EXPECT_LE(f, 1.0);
    ++progress_calls;
  };
  Result<ClockStudyResult> r = run_clock_study(clock.source(), clock.ticks(), desc);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->host_domain, "CLOCK_MONOTONIC");
  EXPECT_EQ(r->refreshes, 601u);
  EXPECT_EQ(progress_calls, 600);
  EXPECT_NEAR(r->sampled_seconds, 600.0, 1e-9);
  EXPECT_EQ(r->pairs_used, 601u);  // window 1024
  EXPECT_NEAR(r->drift_ppm, 4.0, r->drift_uncertainty_ppm);
  EXPECT_LT(r->drift_uncertainty_ppm, 0.05);
  // Every pair the source gave: 8 per refresh, plus 8 per fresh pair.
  EXPECT_EQ(r->deviation_us.count, 8u * (601 + 32));
  EXPECT_GE(r->deviation_us.min, 1.0);
  EXPECT_LE(r->deviation_us.max, 2.0);
  EXPECT_EQ(r->residual_us.count, 601u);
  EXPECT_LE(std::fmax(-r->residual_us.min, r->residual_us.max), 2.5);
  // A single start-up pair is 4 ppm * 600 s = 2.4 ms off by the end (early:
  // the host ran 4 ppm faster than the device); the drift-corrected model is
  // within microseconds.
  EXPECT_EQ(r->fresh_count, 32u);
  EXPECT_NEAR(r->single_pair_error_us.mean, -2400.0, 5.0);
  EXPECT_LT(std::fabs(r->model_error_us.mean), 3.0);
  EXPECT_LT(std::fmax(std::fabs(r->model_error_us.min), std::fabs(r->model_error_us.max)), 5.0);
  EXPECT_EQ(r->fresh_within_bound, r->fresh_count);
  EXPECT_GT(r->bound_now_ns, 0);
  EXPECT_LT(r->bound_now_ns, 5'000);
  ASSERT_NE(r->fit, nullptr);
  ASSERT_NE(r->start_fit, nullptr);
  EXPECT_EQ(r->start_fit->pairs_used, 1u);
}

TEST(ClockStudy, SinglePairErrorSurvivesManyWraps) {
  // 32 bits at 1 ns wrap every 4.3 s: 140 wraps in 600 s.
  VirtualTime vt;
  SimClockDesc sd;
  sd.ticks = TickFormat{.valid_bits = 32};
  sd.offset_ns = -kSecond;
  sd.drift_ppm = -100.0;
  sd.host_clock = [&vt] { return vt.now; };
  SimClock clock(sd);
  ClockStudyDesc desc;
  desc.seconds = 600;
  desc.interval_ns = kSecond / 2;
  vt.attach(desc);
  Result<ClockStudyResult> r = run_clock_study(clock.source(), clock.ticks(), desc);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_NEAR(r->drift_ppm, -100.0, r->drift_uncertainty_ppm);
  EXPECT_NEAR(r->single_pair_error_us.mean, 60'000.0, 10.0);  // 100 ppm * 600 s, late
  EXPECT_EQ(r->fresh_within_bound, r->fresh_count);
}

TEST(ClockStudy, BadPairsAreRejectedAndCounted) {
  VirtualTime vt;
  SimClockDesc sd;
  sd.offset_ns = -kSecond;
  sd.drift_ppm = 12.0;
  sd.bad_every = 9;  // one in nine samples; best-of-8 rarely picks one, single samples would
  sd.host_clock = [&vt] { return vt.now; };
  SimClock clock(sd);
  ClockStudyDesc desc;
  desc.seconds = 60;
  desc.interval_ns = kSecond;
  desc.samples_per_refresh = 1;
  vt.attach(desc);
  Result<ClockStudyResult> r = run_clock_study(clock.source(), clock.ticks(), desc);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_GT(r->rejected_pairs, 5u);
  EXPECT_GE(r->deviation_us.max, 1000.0);  // the bad ones are in the distribution
  EXPECT_NEAR(r->drift_ppm, 12.0, r->drift_uncertainty_ppm);
  // Fresh bad pairs count as within: they carry their own large deviation.
  EXPECT_EQ(r->fresh_within_bound, r->fresh_count);
}

TEST(ClockStudy, FailingSourceIsAnError) {
  SimClock clock(SimClockDesc{});
  clock.set_failing(true);
  ClockStudyDesc desc;
  desc.seconds = 1;
  desc.max_tries = 4;
  Result<ClockStudyResult> r = run_clock_study(clock.source(), clock.ticks(), desc);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("start"), std::string::npos) << r.error().message;
  EXPECT_EQ(clock.calls(), 4u);
}

TEST(ClockStudy, FailuresDuringTheRunAreCounted) {
  VirtualTime vt;
  SimClockDesc sd;
  sd.offset_ns = -kSecond;
  sd.fail_every = 2;
  sd.host_clock = [&vt] { return vt.now; };
  SimClock clock(sd);
  ClockStudyDesc desc;
  desc.seconds = 10;
  desc.interval_ns = kSecond;
  desc.samples_per_refresh = 2;
  vt.attach(desc);
  Result<ClockStudyResult> r = run_clock_study(clock.source(), clock.ticks(), desc);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->source_errors * 2,
            r->source_calls - 1);  // every second call fails (calls end on a success)
  EXPECT_EQ(r->failed_refreshes, 0u);
}

TEST(ClockStudy, InvalidSettingsAreErrors) {
  SimClock clock(SimClockDesc{});
  ClockStudyDesc d;
  d.seconds = -1;
  EXPECT_FALSE(run_clock_study(clock.source(), clock.ticks(), d));
  d = {};
  d.interval_ns = 0;
  EXPECT_FALSE(run_clock_study(clock.source(), clock.ticks(), d));
  d = {};
  d.fresh_pairs = 0;
  Result<ClockStudyResult> r = run_clock_study(clock.source(), clock.ticks(), d);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("fresh_pairs"), std::string::npos);
  EXPECT_EQ(clock.calls(), 0u);
}

TEST(ClockStudy, RunsThroughTheDeviceInterface) {
  auto opened = open_latency_device(DeviceSelector{.backend = Backend::sim, .device = "clock"});
  ASSERT_TRUE(opened) << opened.error().message;
  LatencyDevice& dev = **opened;
  EXPECT_EQ(dev.info().backend, "sim");
  EXPECT_EQ(dev.info().calibration_domain, "CLOCK_MONOTONIC");
  EXPECT_FALSE(dev.info().can_time);
  ASSERT_FALSE(dev.info().missing.empty());
  EXPECT_FALSE(dev.submit_frame(1, FrameWorkload{}));  // a clock-only device runs no frames
  EXPECT_FALSE(dev.wait_frame(1));
  ClockStudyDesc desc;
  desc.seconds = 0.02;  // real host time: keep it short
  desc.interval_ns = 5'000'000;
  desc.fresh_pairs = 4;
  Result<ClockStudyResult> r =
      run_clock_study([&dev] { return dev.sample_calibration(); }, dev.info().ticks, desc);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->fresh_within_bound, r->fresh_count);
  EXPECT_GE(r->refreshes, 2u);
}

TEST(DeviceFactory, UnknownBackendOrDeviceIsAnError) {
  auto a = parse_backend("nosuch");
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("nosuch"), std::string::npos) << a.error().message;
  auto b = open_latency_device(DeviceSelector{.backend = Backend::sim, .device = "7"});
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("devices"), std::string::npos) << b.error().message;
}

}  // namespace
}  // namespace latlab
