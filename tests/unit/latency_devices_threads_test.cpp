// Several devices in one latency run (run_latency_interleaved): turns block
// by block, the same deadlines per block index, and a device that fails
// ending only its own run. Sim devices with different clocks on the real
// host clock. Label threads (TSan in CI).
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "latlab/bench/latency_devices.hpp"
#include "latlab/bench/sim.hpp"
#include "latlab/bench/tick_mapper.hpp"

namespace latlab {
namespace {

// A sim device whose clock starts `offset_ticks` in and drifts `drift_ppm`;
// it fails its submit from frame id `fail_from` on (0: never).
struct SimLane {
  std::shared_ptr<HostTime> time = std::make_shared<RealHostTime>();
  std::unique_ptr<SimDevice> device;
  std::unique_ptr<TickMapper> mapper;

  SimLane(uint64_t offset_ticks, double drift_ppm, uint64_t fail_from) {
    SimDesc d;
    d.clock.start_ticks = offset_ticks;
    d.clock.drift_ppm = drift_ppm;
    d.frame = SimFrameScript{.submit_cost_ns = 5'000,
                             .queue_delay_ns = 10'000,
                             .gpu_duration_ns = 20'000,
                             .fence_wake_delay_ns = 5'000};
    if (fail_from > 0) {
      const SimFrameScript base = d.frame;
      d.script = [base, fail_from](uint64_t id) {
        SimFrameScript s = base;
        s.fail_submit = id >= fail_from;
        return s;
      };
    }
    device = std::make_unique<SimDevice>(d, time);
    SimDevice* dev = device.get();
    mapper = make_function_mapper(
        [dev](uint64_t ticks) {
          return std::optional<MappedTime>(MappedTime{dev->host_at(ticks), 0});
        },
        "sim truth");
  }

  DeviceLane lane(const LatencyRunDesc& desc) const {
    DeviceLane l;
    l.desc = desc;
    l.env.device = device.get();
    l.env.mapper = mapper.get();
    l.env.time = time.get();
    return l;
  }
};

LatencyRunDesc short_desc() {
  LatencyRunDesc d;
  d.schedule = ScheduleDesc{7, 1'000'000, 2'000'000};
  d.frames = 24;
  d.blocks = 3;
  d.warmup_frames = 3;
  d.cpu_step_iterations = 100;
  d.block_lead_ns = 1'000'000;
  return d;
}

TEST(BlockTurns, LanesTakeTurnsInBlockThenLaneOrder) {
  BlockTurns turns(2);
  std::vector<int> log;
  std::mutex m;
  auto lane = [&](size_t i) {
    for (uint32_t o = 0; o < 3; ++o) {
      turns.begin(i, o);
      {
        std::lock_guard g(m);
        log.push_back(static_cast<int>(o * 10 + i));
      }
      turns.end(i, o);
    }
    turns.finish(i);
  };
  std::thread b(lane, 1);  // started first: must still wait for lane 0
  std::thread a(lane, 0);
  a.join();
  b.join();
  EXPECT_EQ(log, (std::vector<int>{0, 1, 10, 11, 20, 21}));
}

TEST(BlockTurns, AFinishedLaneGivesUpItsTurns) {
  BlockTurns turns(3);
  turns.finish(0);  // failed before its first block
  std::vector<int> log;
  std::mutex m;
  auto lane = [&](size_t i) {
    for (uint32_t o = 0; o < 2; ++o) {
      turns.begin(i, o);
      {
        std::lock_guard g(m);
        log.push_back(static_cast<int>(o * 10 + i));
      }
      turns.end(i, o);
    }
    turns.finish(i);
  };
  std::thread c(lane, 2);
  std::thread b(lane, 1);
  b.join();
  c.join();
  EXPECT_EQ(log, (std::vector<int>{1, 2, 11, 12}));
}

TEST(LatencyDevices, BlocksInterleaveOnTheSameDeadlines) {
  SimLane a(1'000'000'000'000, 0.0, 0);
  SimLane b(7'000'000'000'000, 3.0, 0);  // another clock: offset and drift
  const LatencyRunDesc desc = short_desc();
  std::vector<Result<LatencyRun>> r = run_latency_interleaved({a.lane(desc), b.lane(desc)});
  ASSERT_EQ(r.size(), 2u);
  ASSERT_TRUE(r[0].ok() && r[1].ok());
  const LatencyRun& ra = r[0].value();
  const LatencyRun& rb = r[1].value();
  EXPECT_FALSE(ra.partial) << ra.partial_reason;
  EXPECT_FALSE(rb.partial) << rb.partial_reason;
  ASSERT_EQ(ra.blocks.size(), rb.blocks.size());
  for (size_t k = 0; k < ra.blocks.size(); ++k) {
    const BlockResult& x = ra.blocks[k];
    const BlockResult& y = rb.blocks[k];
    // a's block k, then b's block k, then a's block k+1.
    EXPECT_LE(x.end_ns, y.start_ns) << "block " << k;
    if (k + 1 < ra.blocks.size()) {
      EXPECT_LE(y.end_ns, ra.blocks[k + 1].start_ns) << "block " << k;
    }
    // The same deadlines, relative to each block's first.
    ASSERT_EQ(x.frames_run, y.frames_run);
    const int64_t a0 = ra.frames[x.first_frame].deadline_ns;
    const int64_t b0 = rb.frames[y.first_frame].deadline_ns;
    for (uint64_t i = 0; i < x.frames_run; ++i) {
      EXPECT_EQ(ra.frames[x.first_frame + i].deadline_ns - a0,
                rb.frames[y.first_frame + i].deadline_ns - b0);
    }
  }
  EXPECT_EQ(ra.measured_frames_run(), 24u);
  EXPECT_EQ(rb.measured_frames_run(), 24u);
  EXPECT_EQ(ra.total[static_cast<size_t>(Series::core_latency)].count, 24u);
  EXPECT_EQ(rb.total[static_cast<size_t>(Series::core_latency)].count, 24u);
}

TEST(LatencyDevices, TurnWarmupRunsUnrecordedFramesRightBeforeEachBlock) {
  SimLane a(1'000'000'000'000, 0.0, 0);
  SimLane b(7'000'000'000'000, 3.0, 0);
  LatencyRunDesc desc = short_desc();
  desc.turn_warmup_ns = 2'000'000;  // sim frames take ~40 us: dozens per warm-up
  std::vector<Result<LatencyRun>> r = run_latency_interleaved({a.lane(desc), b.lane(desc)});
  ASSERT_TRUE(r[0].ok() && r[1].ok());
  for (const Result<LatencyRun>& run : r) {
    const LatencyRun& lr = run.value();
    EXPECT_FALSE(lr.partial) << lr.partial_reason;
    uint64_t next_id = 0;
    uint64_t warmup_frames = 0;
    for (const BlockResult& blk : lr.blocks) {
      // At least one frame, back to back until the time is up: on a loaded
      // machine one preempted frame can take the whole 2 ms.
      EXPECT_GE(blk.turn_warmup_frames, 1u) << "block " << blk.order;
      warmup_frames += blk.turn_warmup_frames;
      EXPECT_GE(blk.turn_warmup_wall_ns, desc.turn_warmup_ns) << "block " << blk.order;
      // The warm-up used the ids right before the block's: none recorded.
      EXPECT_EQ(blk.first_device_frame, next_id + blk.turn_warmup_frames) << "block " << blk.order;
      next_id = blk.first_device_frame + blk.frames_run;
    }
    // Frames of ~40 us: across the blocks, far more than one each.
    EXPECT_GT(warmup_frames, 2 * lr.blocks.size());
    EXPECT_EQ(lr.measured_frames_run(), 24u);
    EXPECT_EQ(lr.total[static_cast<size_t>(Series::core_latency)].count, 24u);
    EXPECT_EQ(lr.next_frame_id, next_id);
  }
}

TEST(LatencyDevices, ATurnWarmupThatFailsEndsTheRunAsPartial) {
  SimLane a(1'000'000'000'000, 0.0, 1);  // submit fails from frame id 1: the first warm-up's second
  LatencyRunDesc desc = short_desc();
  desc.turn_warmup_ns = 2'000'000'000;  // reached unless frame 0 alone takes 2 s
  std::vector<Result<LatencyRun>> r = run_latency_interleaved({a.lane(desc)});
  ASSERT_TRUE(r[0].ok());
  const LatencyRun& lr = r[0].value();
  EXPECT_TRUE(lr.partial);
  EXPECT_NE(lr.partial_reason.find("turn warm-up"), std::string::npos) << lr.partial_reason;
  EXPECT_EQ(lr.measured_frames_run(), 0u);
}

TEST(LatencyDevices, AFailingDeviceLosesNothingOfTheOthers) {
  SimLane a(1'000'000'000'000, 0.0, 0);
  SimLane b(5'000'000'000'000, -2.0, 10);  // fails from its 11th frame (in block 0)
  const LatencyRunDesc desc = short_desc();
  std::vector<Result<LatencyRun>> r = run_latency_interleaved({a.lane(desc), b.lane(desc)});
  ASSERT_TRUE(r[0].ok() && r[1].ok());
  const LatencyRun& ra = r[0].value();
  const LatencyRun& rb = r[1].value();
  EXPECT_FALSE(ra.partial) << ra.partial_reason;
  EXPECT_EQ(ra.measured_frames_run(), 24u);
  EXPECT_TRUE(rb.partial);
  EXPECT_FALSE(rb.partial_reason.empty());
  EXPECT_LT(rb.measured_frames_run(), 24u);
}

}  // namespace
}  // namespace latlab
