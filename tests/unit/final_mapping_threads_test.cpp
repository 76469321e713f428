// The final mapping with the latency run's real threads on the real host
// clock, the Calibrator refreshing on its own thread while block-end pairs
// are taken on the run's: a short run scaled down from the H200's (pairs
// every 100 ms instead of every second, frames every 1-2 ms instead of
// 8-12), on a sim clock 100 ppm slow. Every frame comes out interpolated,
// within its bound of the truth, the bound the pairs' own. (The comparison
// with the online fit is final_mapping_test.cpp's, on virtual time: here the
// online bounds depend on when frames complete between refreshes.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/sim.hpp"
#include "latlab/bench/tick_mapper.hpp"

namespace latlab {
namespace {

TEST(FinalMappingThreads, RefreshesAndBlockEndPairsInterpolateEveryFrame) {
  auto time = std::make_shared<RealHostTime>();
  SimDesc dd;
  dd.clock.drift_ppm = 100.0;
  dd.clock.deviation_ns = 2'000;
  dd.clock.deviation_spread_ns = 1'000;
  dd.clock.error_fraction = 1.0;
  auto dev = std::make_unique<SimDevice>(dd, time);
  CalibratorDesc cd;
  cd.refresh_interval_ns = 100'000'000;
  auto mapper = make_calibrated_mapper(*dev, cd);
  LatencyRunEnv env;
  env.device = dev.get();
  env.mapper = mapper.get();
  env.time = time.get();
  LatencyRunDesc d;
  d.schedule = ScheduleDesc{3, 1'000'000, 2'000'000};
  d.frames = 200;
  d.blocks = 2;
  d.warmup_frames = 20;
  d.cpu_step_iterations = 500;
  d.block_lead_ns = 2'000'000;
  d.poll_completion = false;
  const Result<LatencyRun> r = run_latency(d, env);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->partial) << r->partial_reason;
  const ClockModelReport& cm = r->clock_model;
  EXPECT_EQ(cm.block_end_pairs, 3u);
  EXPECT_EQ(cm.frames_between_pairs, 220u);
  EXPECT_EQ(cm.frames_outside_pairs, 0u);
  EXPECT_GE(cm.refreshes, 4u);  // start-up + 3 block ends (+ periodic ones)
  for (const FrameRecord& f : r->frames) {
    ASSERT_TRUE(f.has(Marker::gpu_end_host));
    const int64_t truth = dev->host_at(f.gpu_end_ticks);
    EXPECT_LE(std::llabs(f.gpu_end_host_ns - truth), static_cast<int64_t>(f.map_error_ns))
        << "mapped " << f.gpu_end_host_ns << " truth " << truth;
    EXPECT_LE(f.map_error_ns, 3'000u + 1 + 1 + 2);  // the pairs' own bound
  }
}

}  // namespace
}  // namespace latlab
