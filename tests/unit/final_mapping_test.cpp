// The latency run's final mapping on the sim device,
// lockstep on virtual time: a short run on a drifting device clock. Online,
// a frame was mapped by the fit of the moment, extrapolated past its newest
// pair (in the first second a one-pair fit, 500 ppm of unknown drift); once
// the run is over every frame is interpolated between the pairs on both
// sides of it (one is taken at every block's end), so its bound is the
// pairs' own and its error shrinks with it.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "bench/lockstep.hpp"
#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/sim.hpp"
#include "latlab/bench/tick_mapper.hpp"
#include "unit/online_mapping.hpp"

namespace latlab {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

// The sim device's pairs: 2-3 us deviations, errors up to them (seeded), a
// clock 100 ppm slow.
SimDesc drifting_device() {
  SimDesc dd;
  dd.time = SimTime::virtual_time;
  dd.clock.drift_ppm = 100.0;
  dd.clock.deviation_ns = 2'000;
  dd.clock.deviation_spread_ns = 1'000;
  dd.clock.error_fraction = 1.0;
  dd.clock.seed = 5;
  return dd;
}
// A pair's bound on that device (pair_error_bound_ns: deviation + 1 tick + 1).
constexpr int64_t kLargestPairBoundNs = 2'000 + 1'000 + 1 + 1;

struct ShortRun {
  std::unique_ptr<SimDevice> dev;
  std::unique_ptr<TickMapper> mapper;
  Result<LatencyRun> run = make_error("not run");
};

// 200 measured frames in 2 blocks after 20 warm-up frames at 8-12 ms, as
// `latlab run --frames 200 --blocks 2 --warmup 20`. The calibrator's periodic
// refresh runs on the real clock, far slower than this virtual run: the pairs
// are the start-up one and those at block ends, as in the first second of a
// run on real time.
ShortRun short_run() {
  ShortRun s;
  s.dev = std::make_unique<SimDevice>(drifting_device());
  CalibratorDesc cd;
  cd.refresh_interval_ns = 3'600 * kSecond;
  s.mapper = make_calibrated_mapper(*s.dev, cd);
  static const LockstepScript script;  // no host delays beyond the device's
  LatencyRunEnv env;
  env.device = s.dev.get();
  env.mapper = s.mapper.get();
  env.time = &s.dev->time();
  env.lockstep = &script;
  LatencyRunDesc d;
  d.frames = 200;
  d.blocks = 2;
  d.warmup_frames = 20;
  s.run = run_latency(d, env);
  return s;
}

TEST(FinalMapping, EveryFrameIsInterpolatedBetweenPairsWithinItsBound) {
  const ShortRun s = short_run();
  ASSERT_TRUE(s.run.ok()) << s.run.error().message;
  const LatencyRun& r = *s.run;
  ASSERT_FALSE(r.partial) << r.partial_reason;
  const ClockModelReport& cm = r.clock_model;
  EXPECT_EQ(cm.frame_mapping, "interpolated");
  EXPECT_EQ(cm.block_end_pairs, 3u);  // after the warm-up and both blocks
  EXPECT_EQ(cm.failed_block_end_pairs, 0u);
  EXPECT_EQ(cm.pairs_accepted, 4u);
  EXPECT_EQ(cm.frames_between_pairs, 220u);
  EXPECT_EQ(cm.frames_outside_pairs, 0u);
  EXPECT_EQ(cm.interpolation_misfit_ns, 0);
  for (const FrameRecord& f : r.frames) {
    ASSERT_TRUE(f.has(Marker::gpu_begin_host) && f.has(Marker::gpu_end_host));
    const int64_t truth = s.dev->host_at(f.gpu_end_ticks);
    EXPECT_LE(std::llabs(f.gpu_end_host_ns - truth), static_cast<int64_t>(f.map_error_ns))
        << "mapped " << f.gpu_end_host_ns << " truth " << truth;
    EXPECT_LE(std::llabs(f.gpu_begin_host_ns - s.dev->host_at(f.gpu_begin_ticks)),
              static_cast<int64_t>(f.map_error_ns));
    // Interpolated: the pairs' own bound (+ 2 ns of rounding), however far the pairs.
    EXPECT_LE(f.map_error_ns, kLargestPairBoundNs + 2);
  }
  // The stages use the final mapping: clock_map_error is the frames' bound.
  const Distribution& err = r.total[static_cast<size_t>(Series::clock_map_error)];
  ASSERT_EQ(err.count, 200u);
  EXPECT_LE(err.max, static_cast<double>(kLargestPairBoundNs + 2) / 1000.0);
}

// Bounds as the result reports them (clock_map_error p90 over the measured
// frames), errors over every frame of the run against the sim's truth: the
// warm-up's frames had the one-pair fit online, off by the drift times their
// distance from the start-up pair (100 ppm x 0.2 s = 20 us at the warm-up's
// end), whatever the pairs' own errors.
TEST(FinalMapping, BoundAndErrorShrinkAgainstTheOnlineMapping) {
  const ShortRun s = short_run();
  ASSERT_TRUE(s.run.ok()) << s.run.error().message;
  const LatencyRun& r = *s.run;
  const auto measured = std::span<const FrameRecord>(r.frames).subspan(r.desc.warmup_frames);
  const test::MappingErrors online_measured = test::online_errors(r, measured, *s.dev);
  const test::MappingErrors final_measured = test::carried_errors(measured, *s.dev);
  ASSERT_EQ(online_measured.bound_ns.size(), 200u);
  ASSERT_EQ(final_measured.bound_ns.size(), 200u);
  const double online_bound = test::quantile(online_measured.bound_ns, 0.9);
  const double final_bound = test::quantile(final_measured.bound_ns, 0.9);

  const test::MappingErrors online_all = test::online_errors(r, r.frames, *s.dev);
  const test::MappingErrors final_all = test::carried_errors(r.frames, *s.dev);
  ASSERT_EQ(online_all.error_ns.size(), 220u);
  ASSERT_EQ(final_all.error_ns.size(), 220u);
  const double online_err = test::quantile(online_all.error_ns, 1.0);
  const double final_err = test::quantile(final_all.error_ns, 1.0);
  RecordProperty("online_bound_p90_ns", static_cast<int>(online_bound));
  RecordProperty("final_bound_p90_ns", static_cast<int>(final_bound));
  RecordProperty("online_error_max_ns", static_cast<int>(online_err));
  RecordProperty("final_error_max_ns", static_cast<int>(final_err));
  EXPECT_LT(final_bound * 4, online_bound)
      << "bound p90: final " << final_bound << " ns, online " << online_bound << " ns";
  EXPECT_LT(final_err * 4, online_err)
      << "error max: final " << final_err << " ns, online " << online_err << " ns";
}

}  // namespace
}  // namespace latlab
