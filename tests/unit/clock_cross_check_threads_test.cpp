// The two-device clock cross-check (clock_cross_check.hpp) on sim devices with
// different clocks: models that are right agree, a model that is off by more
// than its bound does not. Real threads and the real host clock.
#include <gtest/gtest.h>

#include <memory>

#include "latlab/bench/clock_cross_check.hpp"
#include "latlab/bench/sim.hpp"

namespace latlab {
namespace {

std::unique_ptr<SimDevice> sim_device(uint64_t start_ticks, double drift_ppm) {
  SimDesc d;
  d.clock.start_ticks = start_ticks;
  d.clock.drift_ppm = drift_ppm;
  d.frame = SimFrameScript{.submit_cost_ns = 5'000,
                           .queue_delay_ns = 10'000,
                           .gpu_duration_ns = 20'000,
                           .fence_wake_delay_ns = 5'000};
  return std::make_unique<SimDevice>(d, std::make_shared<RealHostTime>());
}

// Sim truth shifted by `shift_ns`, claiming a bound of `bound_ns`.
std::unique_ptr<TickMapper> truth_mapper(const SimDevice& dev, int64_t shift_ns, int64_t bound_ns) {
  return make_function_mapper(
      [&dev, shift_ns, bound_ns](uint64_t t) {
        return std::optional<MappedTime>(MappedTime{dev.host_at(t) + shift_ns, bound_ns});
      },
      "sim truth");
}

ClockCrossCheckDesc short_desc() {
  ClockCrossCheckDesc d;
  d.trials = 31;
  d.interval_ns = 2'000'000;
  return d;
}

TEST(ClockCrossCheck, CalibratedModelsOfTwoClocksAgree) {
  auto a = sim_device(1'000'000'000'000, 3.0);
  auto b = sim_device(9'000'000'000'000, -5.0);
  auto ma = make_calibrated_mapper(*a);
  auto mb = make_calibrated_mapper(*b);
  ASSERT_TRUE(ma->start().ok());
  ASSERT_TRUE(mb->start().ok());
  const Result<ClockCrossCheckResult> r = run_clock_cross_check(*a, *ma, *b, *mb, short_desc());
  ma->stop();
  mb->stop();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->trials, 31u);
  EXPECT_EQ(r->trials_mapped, 31u);
  EXPECT_GT(r->bound_a_ns + r->bound_b_ns, 0);
  EXPECT_TRUE(r->agree) << r->verdict;
}

TEST(ClockCrossCheck, AModelOffByMoreThanItsBoundDisagrees) {
  auto a = sim_device(1'000'000'000'000, 0.0);
  auto b = sim_device(4'000'000'000'000, 0.0);
  auto ma = truth_mapper(*a, 0, 1'000);
  auto mb = truth_mapper(*b, 200'000, 1'000);  // 200 us off, claims 1 us
  const Result<ClockCrossCheckResult> r = run_clock_cross_check(*a, *ma, *b, *mb, short_desc());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->agree) << r->verdict;
  EXPECT_NEAR(r->start_skew_us.p50, -200.0, 20.0);
}

TEST(ClockCrossCheck, ADeviceErrorIsAnError) {
  auto a = sim_device(1'000'000'000'000, 0.0);
  SimDesc broken;
  broken.frame.fail_submit = true;
  SimDevice b(broken, std::make_shared<RealHostTime>());
  auto ma = truth_mapper(*a, 0, 1'000);
  auto mb = truth_mapper(b, 0, 1'000);
  const Result<ClockCrossCheckResult> r = run_clock_cross_check(*a, *ma, b, *mb, short_desc());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("device b"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace latlab
