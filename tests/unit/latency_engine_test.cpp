// The latency engine on the sim device and a virtual clock, single-threaded
// (lockstep): every marker is scripted, so every stage must come out exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "bench/lockstep.hpp"
#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/sim.hpp"
#include "latlab/bench/tick_mapper.hpp"

namespace latlab {
namespace {

// Per-frame host-side script, different for every frame so a swapped marker
// cannot go unnoticed.
int64_t lateness(uint64_t f) { return 1'000 + static_cast<int64_t>(f % 7) * 100; }
int64_t to_signal(uint64_t f) { return 50 + static_cast<int64_t>(f % 3); }
int64_t wake_delay(uint64_t f) { return 3'000 + static_cast<int64_t>(f % 5) * 10; }
int64_t cpu_cost(uint64_t f) { return 20'000 + static_cast<int64_t>(f % 11); }
int64_t gap(uint64_t f) { return 400 + static_cast<int64_t>(f % 2); }

SimFrameScript device_script(uint64_t f) {
  SimFrameScript s;
  s.submit_cost_ns = 15'000 + static_cast<int64_t>(f % 4) * 7;
  s.queue_delay_ns = 40'000 + static_cast<int64_t>(f % 6) * 3;
  s.gpu_duration_ns = 100'000 + static_cast<int64_t>(f % 9) * 11;
  s.fence_wake_delay_ns = 8'000 + static_cast<int64_t>(f % 8) * 13;
  return s;
}

struct Fixture {
  std::unique_ptr<SimDevice> device;
  std::unique_ptr<TickMapper> mapper;
  LockstepScript script;
  LatencyRunEnv env;

  explicit Fixture(SimDesc dd = {}, bool use_mapper = true) {
    if (!dd.script) dd.script = device_script;
    dd.time = SimTime::virtual_time;
    dd.virtual_start_ns = 5'000'000'000;
    device = std::make_unique<SimDevice>(dd);
    SimDevice* dev = device.get();
    mapper = make_function_mapper(
        [dev](uint64_t t) {
          return std::optional<MappedTime>(MappedTime{dev->host_at(t), 0});
        },
        "sim truth");
    script.timer_lateness_ns = lateness;
    script.wake_to_signal_ns = to_signal;
    script.consumer_wake_delay_ns = wake_delay;
    script.cpu_cost_ns = cpu_cost;
    script.cpu_to_submit_ns = gap;
    env.device = device.get();
    env.mapper = use_mapper ? mapper.get() : nullptr;
    env.time = &device->time();
    env.lockstep = &script;
  }
};

LatencyRunDesc small_desc() {
  LatencyRunDesc d;
  d.schedule = ScheduleDesc{7, 8'000'000, 12'000'000};
  d.frames = 103;
  d.blocks = 4;
  d.warmup_frames = 9;
  return d;
}

// Lockstep polls every LockstepScript::poll_step_ns from the submit's end:
// the first poll at or after GPU end + poll_delay_ns sees completion.
int64_t submit_end_to_poll_wake(const SimFrameScript& d, int64_t step) {
  const int64_t to_seen = d.queue_delay_ns + d.gpu_duration_ns + d.poll_delay_ns;
  return (to_seen + step - 1) / step * step;
}

int64_t expect(const FrameRecord& f, Series s, uint64_t id) {
  const SimFrameScript d = device_script(id);
  const int64_t step = LockstepScript{}.poll_step_ns;
  switch (s) {
    case Series::signal_to_consumer_wake:
      return wake_delay(id);
    case Series::cpu_processing:
      return cpu_cost(id);
    case Series::cpu_end_to_submit_start:
      return gap(id);
    case Series::workload_submit_cpu_span:
      return d.submit_cost_ns;
    case Series::submit_start_to_gpu_begin:
      return d.submit_cost_ns + d.queue_delay_ns;
    case Series::gpu_execution:
      return d.gpu_duration_ns;
    case Series::gpu_end_to_fence_wake:
      return d.fence_wake_delay_ns;
    case Series::core_latency:
      return wake_delay(id) + cpu_cost(id) + gap(id) + d.submit_cost_ns + d.queue_delay_ns +
             d.gpu_duration_ns;
    case Series::fence_latency:
      return wake_delay(id) + cpu_cost(id) + gap(id) + d.submit_cost_ns + d.queue_delay_ns +
             d.gpu_duration_ns + d.fence_wake_delay_ns;
    case Series::poll_latency:
      return wake_delay(id) + cpu_cost(id) + gap(id) + d.submit_cost_ns +
             submit_end_to_poll_wake(d, step);
    case Series::gpu_end_to_poll_wake:
      return submit_end_to_poll_wake(d, step) - d.queue_delay_ns - d.gpu_duration_ns;
    case Series::poll_cpu:  // real CPU time of this thread: only its presence is scripted
      return static_cast<int64_t>(f.poll_cpu_ns);
    case Series::timer_lateness:
      return lateness(id) + to_signal(id);
    case Series::clock_map_error:
      return 0;
  }
  return -1;
}

TEST(LatencyEngine, EveryStageEqualsTheScriptPerFrame) {
  Fixture fx;
  const Result<LatencyRun> r = run_latency(small_desc(), fx.env);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const LatencyRun& run = r.value();
  EXPECT_FALSE(run.partial) << run.partial_reason;
  ASSERT_EQ(run.frames.size(), 112u);
  for (uint64_t id = 0; id < run.frames.size(); ++id) {
    const FrameRecord& f = run.frames[id];
    for (size_t s = 0; s < kSeriesCount; ++s) {
      const auto series = static_cast<Series>(s);
      const auto v = series_value_ns(f, series, run.device.ticks);
      ASSERT_TRUE(v.has_value()) << "frame " << id << " " << to_string(series);
      EXPECT_EQ(*v, expect(f, series, id)) << "frame " << id << " " << to_string(series);
    }
    EXPECT_EQ(f.generator_wake_ns - f.deadline_ns, lateness(id));
  }
  EXPECT_EQ(run.total[static_cast<size_t>(Series::core_latency)].count, 103u);
  EXPECT_EQ(run.total[static_cast<size_t>(Series::core_latency)].missing, 0u);
}

// The first device call on a thread that never made one costs 20 ms here
// (NVIDIA's first eglMakeCurrent on a thread costs tens of ms). The
// consumer prepares its thread before the first block's schedule starts, so
// with no warm-up frames to absorb it, measured frame 0 is still exactly as
// scripted; the first block reports the 20 ms, later blocks (the same thread
// in lockstep) nothing.
TEST(LatencyEngine, ThreadPreparationKeepsTheFirstCallsCostOutOfEveryFrame) {
  SimDesc dd;
  dd.first_call_on_thread_ns = 20'000'000;
  Fixture fx(dd);
  LatencyRunDesc d = small_desc();
  d.warmup_frames = 0;
  const Result<LatencyRun> r = run_latency(d, fx.env);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const LatencyRun& run = r.value();
  EXPECT_FALSE(run.partial) << run.partial_reason;
  ASSERT_EQ(run.frames.size(), 103u);
  for (uint64_t id = 0; id < run.frames.size(); ++id) {
    for (size_t s = 0; s < kSeriesCount; ++s) {
      const auto series = static_cast<Series>(s);
      const auto v = series_value_ns(run.frames[id], series, run.device.ticks);
      ASSERT_TRUE(v.has_value()) << "frame " << id << " " << to_string(series);
      EXPECT_EQ(*v, expect(run.frames[id], series, id))
          << "frame " << id << " " << to_string(series);
    }
  }
  ASSERT_EQ(run.blocks.size(), 4u);
  EXPECT_EQ(run.blocks[0].thread_preparation_ns, std::optional<int64_t>(20'000'000));
  for (size_t b = 1; b < run.blocks.size(); ++b)
    EXPECT_EQ(run.blocks[b].thread_preparation_ns, std::optional<int64_t>(0)) << b;
  // The schedule began after the preparation: lead, then the first interval.
  EXPECT_GE(run.frames[0].deadline_ns, run.blocks[0].start_ns + 20'000'000 + d.block_lead_ns);
}

// The poll observer in lockstep: it polls the sim's completion every
// poll_step_ns from the submit's end; a frame that completes for the poller
// only after the spin limit has its poll value missing and counted, never 0.
TEST(LatencyEngine, PollPastItsSpinLimitIsMissingAndCounted) {
  SimDesc dd;
  dd.script = [](uint64_t f) {
    SimFrameScript s = device_script(f);
    if (f == 12) s.poll_delay_ns = 1'000'000;  // past the 300 us limit below
    return s;
  };
  Fixture fx(dd);
  LatencyRunDesc desc = small_desc();
  desc.poll_limit_ns = 300'000;
  const Result<LatencyRun> r = run_latency(desc, fx.env);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const LatencyRun& run = r.value();
  EXPECT_TRUE(run.polled);
  EXPECT_EQ(run.frames[12].poll_status, QueryStatus::not_ready);
  EXPECT_FALSE(run.frames[12].has(Marker::poll_wake));
  EXPECT_TRUE(run.frames[12].flags & kFramePolled);  // its CPU cost is still reported
  EXPECT_EQ(run.frames[13].poll_status, QueryStatus::ok);
  EXPECT_EQ(run.total_missing.poll_limit, 1u);
  EXPECT_EQ(run.total_missing.poll_not_ok, 1u);
  const Distribution& poll = run.total[static_cast<size_t>(Series::poll_latency)];
  EXPECT_EQ(poll.missing, 1u);
  EXPECT_EQ(poll.count, 102u);
  EXPECT_GT(poll.min, 100.0);  // no zero slipped in
  EXPECT_EQ(run.total[static_cast<size_t>(Series::poll_cpu)].count, 103u);
}

TEST(LatencyEngine, WithoutThePollObserverPollSeriesAreMissingWithAReason) {
  Fixture fx;
  LatencyRunDesc desc = small_desc();
  desc.poll_completion = false;
  const Result<LatencyRun> r = run_latency(desc, fx.env);
  ASSERT_TRUE(r.ok());
  const LatencyRun& run = r.value();
  EXPECT_FALSE(run.polled);
  for (Series s : {Series::poll_latency, Series::gpu_end_to_poll_wake, Series::poll_cpu}) {
    EXPECT_EQ(run.total[static_cast<size_t>(s)].count, 0u) << to_string(s);
    EXPECT_EQ(run.total[static_cast<size_t>(s)].missing, 103u) << to_string(s);
  }
  EXPECT_EQ(run.total_missing.poll_not_ok, 103u);
  EXPECT_EQ(run.total_missing.poll_limit, 0u);
  bool reason = false;
  for (const MissingCapability& m : run.unavailable) reason |= m.name == "poll_latency";
  EXPECT_TRUE(reason);
  // The blocking observer is unchanged.
  EXPECT_EQ(run.total[static_cast<size_t>(Series::fence_latency)].count, 103u);
}

TEST(LatencyEngine, ATurnWarmupIsRefusedWithALockstepScript) {
  Fixture fx;
  LatencyRunDesc d = small_desc();
  d.turn_warmup_ns = 1'000'000;
  const Result<LatencyRun> r = run_latency(d, fx.env);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("turn warm-up"), std::string::npos) << r.error().message;
}

TEST(LatencyEngine, DeadlinesFollowTheScheduleWithoutRebasing) {
  LatencyRunDesc d = small_desc();
  d.blocks = 1;
  d.warmup_frames = 0;
  d.frames = 50;
  // GPU work longer than any interval: the consumer (same thread here) is
  // late for every later deadline; the deadlines must not move.
  SimDesc dd;
  dd.script = [](uint64_t) {
    SimFrameScript s;
    s.gpu_duration_ns = 25'000'000;
    return s;
  };
  Fixture slow(dd);
  const Result<LatencyRun> r = run_latency(d, slow.env);
  ASSERT_TRUE(r.ok());
  Schedule sched(d.schedule);
  const LatencyRun& run = r.value();
  const int64_t first = run.blocks[0].start_ns + d.block_lead_ns + sched.next_interval_ns();
  EXPECT_EQ(run.frames[0].deadline_ns, first);
  for (size_t i = 1; i < run.frames.size(); ++i) {
    EXPECT_EQ(run.frames[i].deadline_ns - run.frames[i - 1].deadline_ns, sched.next_interval_ns())
        << i;
  }
  // Lateness grows (about 15 ms per frame) and is reported, not hidden.
  const int64_t late_last = run.frames.back().signal_ns - run.frames.back().deadline_ns;
  EXPECT_GT(late_last, 40 * 10'000'000);
  EXPECT_GT(run.total[static_cast<size_t>(Series::timer_lateness)].max, 400'000.0);
}

TEST(LatencyEngine, BlocksSplitFramesAndWarmupIsLeftOut) {
  Fixture fx;
  const Result<LatencyRun> r = run_latency(small_desc(), fx.env);
  ASSERT_TRUE(r.ok());
  const LatencyRun& run = r.value();
  ASSERT_EQ(run.blocks.size(), 5u);
  EXPECT_EQ(run.blocks[0].kind, BlockKind::warmup);
  EXPECT_EQ(run.blocks[0].frames_run, 9u);
  const uint64_t sizes[] = {26, 26, 26, 25};
  uint64_t first = 9;
  for (int b = 0; b < 4; ++b) {
    const BlockResult& br = run.blocks[static_cast<size_t>(b) + 1];
    EXPECT_EQ(br.kind, BlockKind::measured);
    EXPECT_EQ(br.index, static_cast<uint32_t>(b));
    EXPECT_EQ(br.order, static_cast<uint32_t>(b) + 1);
    EXPECT_EQ(br.frames_run, sizes[b]);
    EXPECT_EQ(br.first_frame, first);
    EXPECT_EQ(br.series[0].count, sizes[b]);
    first += sizes[b];
  }
  EXPECT_EQ(run.measured_frames_run(), 103u);
  EXPECT_EQ(run.total[0].count, 103u);  // warm-up not included
}

TEST(LatencyEngine, DroppedGpuTimestampsCountOnlyInDependentStages) {
  SimDesc dd;
  dd.script = [](uint64_t f) {
    SimFrameScript s = device_script(f);
    if (f == 20) s.gpu_status = QueryStatus::not_ready;
    if (f == 30) s.gpu_status = QueryStatus::invalid;
    return s;
  };
  Fixture fx(dd);
  const Result<LatencyRun> r = run_latency(small_desc(), fx.env);
  ASSERT_TRUE(r.ok());
  const LatencyRun& run = r.value();
  for (size_t s = 0; s < kSeriesCount; ++s) {
    const auto series = static_cast<Series>(s);
    const bool needs_gpu =
        series == Series::submit_start_to_gpu_begin || series == Series::gpu_execution ||
        series == Series::gpu_end_to_fence_wake || series == Series::gpu_end_to_poll_wake ||
        series == Series::core_latency || series == Series::clock_map_error;
    EXPECT_EQ(run.total[s].missing, needs_gpu ? 2u : 0u) << to_string(series);
    EXPECT_EQ(run.total[s].count, needs_gpu ? 101u : 103u) << to_string(series);
  }
  EXPECT_EQ(run.total_missing.gpu_not_ok, 2u);
  EXPECT_EQ(run.total_missing.gpu_status_counts[static_cast<size_t>(QueryStatus::not_ready)], 1u);
  EXPECT_EQ(run.total_missing.gpu_status_counts[static_cast<size_t>(QueryStatus::invalid)], 1u);
  // No zero was slipped in: the smallest core latency is a real one.
  EXPECT_GT(run.total[static_cast<size_t>(Series::core_latency)].min, 100.0);
  EXPECT_FALSE(run.frames[20].has(Marker::gpu_end));
  EXPECT_TRUE(run.frames[20].has(Marker::fence_wake));
}

TEST(LatencyEngine, DroppedFenceCountsOnlyInFenceStages) {
  SimDesc dd;
  dd.script = [](uint64_t f) {
    SimFrameScript s = device_script(f);
    s.drop_fence = (f == 15);
    return s;
  };
  Fixture fx(dd);
  const Result<LatencyRun> r = run_latency(small_desc(), fx.env);
  ASSERT_TRUE(r.ok());
  const LatencyRun& run = r.value();
  for (size_t s = 0; s < kSeriesCount; ++s) {
    const auto series = static_cast<Series>(s);
    const bool needs_fence =
        series == Series::gpu_end_to_fence_wake || series == Series::fence_latency;
    EXPECT_EQ(run.total[s].missing, needs_fence ? 1u : 0u) << to_string(series);
  }
  EXPECT_EQ(run.total_missing.fence_not_ok, 1u);
}

TEST(LatencyEngine, WithoutAClockModelMappedStagesAreMissingWithAReason) {
  Fixture fx({}, /*use_mapper=*/false);
  const Result<LatencyRun> r = run_latency(small_desc(), fx.env);
  ASSERT_TRUE(r.ok());
  const LatencyRun& run = r.value();
  EXPECT_EQ(run.total[static_cast<size_t>(Series::core_latency)].count, 0u);
  EXPECT_EQ(run.total[static_cast<size_t>(Series::core_latency)].missing, 103u);
  EXPECT_EQ(run.total[static_cast<size_t>(Series::gpu_execution)].count,
            103u);  // ticks alone suffice
  EXPECT_EQ(run.total[static_cast<size_t>(Series::fence_latency)].count, 103u);
  ASSERT_FALSE(run.unavailable.empty());
  EXPECT_EQ(run.unavailable.back().name, "clock_model");
  EXPECT_EQ(run.total_missing.gpu_unmapped, 103u);
}

TEST(LatencyEngine, DeviceWithoutTimestampsKeepsTheFenceObserver) {
  SimDesc dd;
  dd.can_time = false;
  Fixture fx(dd);
  const Result<LatencyRun> r = run_latency(small_desc(), fx.env);
  ASSERT_TRUE(r.ok());
  const LatencyRun& run = r.value();
  EXPECT_EQ(run.total[static_cast<size_t>(Series::gpu_execution)].missing, 103u);
  EXPECT_EQ(run.total[static_cast<size_t>(Series::fence_latency)].count, 103u);
  ASSERT_FALSE(run.unavailable.empty());
  EXPECT_EQ(run.unavailable.front().name, "timestamps");
}

TEST(LatencyEngine, NonUnitTickPeriodAndDriftStayWithinATick) {
  SimDesc dd;
  dd.clock.ticks = TickFormat{125, 3, 64};  // 41.667 ns
  dd.clock.drift_ppm = -4.0;                // 4 ppm fast
  Fixture fx(dd);
  const Result<LatencyRun> r = run_latency(small_desc(), fx.env);
  ASSERT_TRUE(r.ok());
  const LatencyRun& run = r.value();
  for (uint64_t id = 0; id < run.frames.size(); ++id) {
    const FrameRecord& f = run.frames[id];
    const auto core = series_value_ns(f, Series::core_latency, run.device.ticks);
    ASSERT_TRUE(core.has_value());
    EXPECT_NEAR(static_cast<double>(*core),
                static_cast<double>(expect(f, Series::core_latency, id)), 43.0)
        << id;
    const auto gpu = series_value_ns(f, Series::gpu_execution, run.device.ticks);
    // Device time runs 4 ppm fast: 100 us of host time is 100.0004 us of device time.
    EXPECT_NEAR(static_cast<double>(*gpu),
                static_cast<double>(expect(f, Series::gpu_execution, id)), 43.0)
        << id;
  }
}

TEST(LatencyEngine, DeviceFailureGivesAPartialRunWithTheReason) {
  SimDesc dd;
  dd.script = [](uint64_t f) {
    SimFrameScript s = device_script(f);
    s.fail_wait = (f == 40);
    return s;
  };
  Fixture fx(dd);
  const Result<LatencyRun> r = run_latency(small_desc(), fx.env);
  ASSERT_TRUE(r.ok());
  const LatencyRun& run = r.value();
  EXPECT_TRUE(run.partial);
  EXPECT_NE(run.partial_reason.find("frame 40"), std::string::npos) << run.partial_reason;
  // warm-up 9 + block 0 (26) + 6 frames of block 1 (31..40) = frame 40 last
  ASSERT_EQ(run.blocks.size(), 3u);
  EXPECT_EQ(run.blocks[2].frames_run, 6u);
  EXPECT_EQ(run.measured_frames_run(), 32u);
  EXPECT_TRUE(run.frames[40].flags & kFrameDeviceError);
  // The failed frame has no GPU or fence markers and counts as missing there.
  EXPECT_EQ(run.total[static_cast<size_t>(Series::fence_latency)].missing, 1u);
  EXPECT_EQ(run.total[static_cast<size_t>(Series::cpu_processing)].missing, 0u);
}

TEST(LatencyEngine, InterruptStopsTheRunAsPartial) {
  Fixture fx;
  std::atomic<bool> stop{false};
  fx.env.interrupt = &stop;
  int calls = 0;
  fx.env.on_progress = [&](const RunProgress& p) {
    if (p.kind == BlockKind::measured && p.block == 1 && ++calls == 1) stop = true;
  };
  const Result<LatencyRun> r = run_latency(small_desc(), fx.env);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->partial);
  EXPECT_NE(r->partial_reason.find("interrupted"), std::string::npos) << r->partial_reason;
  EXPECT_EQ(r->measured_frames_run(), 52u);  // blocks 0 and 1 done, then stopped between blocks
}

TEST(LatencyEngine, BareComparisonInterleavesBlocksOnTheSameDeadlines) {
  Fixture fx;
  LatencyRunDesc d = small_desc();
  d.bare_comparison = true;
  const Result<LatencyRun> r = run_latency(d, fx.env);
  ASSERT_TRUE(r.ok());
  const LatencyRun& run = r.value();
  ASSERT_EQ(run.blocks.size(), 1u + 4u * 3u);
  const BlockKind order[] = {BlockKind::measured, BlockKind::bare_loop, BlockKind::raw_sleep};
  for (size_t i = 1; i < run.blocks.size(); ++i) {
    EXPECT_EQ(run.blocks[i].kind, order[(i - 1) % 3]) << i;
    EXPECT_EQ(run.blocks[i].index, (i - 1) / 3) << i;
  }
  // Device frame ids rise in run order: warm-up 0..8, measured 0 9..34,
  // bare 0 35..60, measured 1 61..86, ...
  uint64_t expect_id = 0;
  for (const BlockResult& b : run.blocks) {
    if (b.kind == BlockKind::raw_sleep) continue;
    EXPECT_EQ(b.first_device_frame, expect_id) << b.order;
    expect_id += b.frames_run;
  }
  EXPECT_EQ(run.blocks[2].first_device_frame, 35u);
  EXPECT_EQ(fx.device->frames_submitted(), 9u + 2 * 103u);
  // Lockstep bare loop: fence - signal is the device script alone (no host
  // delays), frame by frame under its own device frame id.
  EXPECT_EQ(run.bare_total.count, 103u);
  ASSERT_EQ(run.bare_frames.size(), 103u);
  for (const BlockResult& b : run.blocks) {
    if (b.kind != BlockKind::bare_loop) continue;
    for (uint64_t k = 0; k < b.frames_run; ++k) {
      const BareFrame& f = run.bare_frames[b.first_frame + k];
      const SimFrameScript s = device_script(b.first_device_frame + k);
      EXPECT_EQ(f.fence_wake_ns - f.signal_ns,
                s.submit_cost_ns + s.queue_delay_ns + s.gpu_duration_ns + s.fence_wake_delay_ns);
    }
  }
  EXPECT_EQ(run.raw_total.count, 103u);
  EXPECT_DOUBLE_EQ(run.raw_total.max, 0.0);  // the virtual clock wakes exactly on time
}

TEST(LatencyEngine, ComparisonSubtractsTheDeliberatePartsFrameByFrame) {
  SimDesc dd;
  dd.cost = SimCostModelDesc{.fixed_ns = 7'000.0, .ns_per_unit = 0.5, .fragment_factor = 1.0};
  Fixture fx(dd);
  LatencyRunDesc d = small_desc();
  d.bare_comparison = true;
  d.workload.complexity = 64;  // the measured frames' extra GPU work (the cost model)
  const Result<LatencyRun> r = run_latency(d, fx.env);
  ASSERT_TRUE(r.ok());
  const LatencyRun& run = r.value();
  EXPECT_FALSE(run.reference_what.empty());
  // Measured core - cpu_processing - (gpu_m - gpu_r), paired by deadline,
  // leaves the consumer wake, the CPU-to-submit gap, the measured frame's
  // submit and queue delay, and the reference frame's scripted GPU time.
  std::vector<double> want;
  for (const BlockResult& m : run.blocks) {
    if (m.kind != BlockKind::measured) continue;
    const BlockResult& ref = run.blocks[m.order + 1];
    ASSERT_EQ(ref.kind, BlockKind::bare_loop);
    for (uint64_t k = 0; k < m.frames_run; ++k) {
      const uint64_t im = m.first_device_frame + k;
      const uint64_t ir = ref.first_device_frame + k;
      const SimFrameScript sm = device_script(im);
      want.push_back(static_cast<double>(wake_delay(im) + gap(im) + sm.submit_cost_ns +
                                         sm.queue_delay_ns + device_script(ir).gpu_duration_ns) /
                     1000.0);
    }
  }
  const Distribution expect_d = summarize_in_place(want, 0);
  const Distribution& got = run.core_latency_without_deliberate;
  EXPECT_EQ(got.count, 103u);
  EXPECT_EQ(got.missing, 0u);
  EXPECT_DOUBLE_EQ(got.min, expect_d.min);
  EXPECT_DOUBLE_EQ(got.p50, expect_d.p50);
  EXPECT_DOUBLE_EQ(got.max, expect_d.max);
  // The reference frames carry no cost-model work and no CPU step.
  const Distribution& ref_gpu = run.reference_total[static_cast<size_t>(Series::gpu_execution)];
  EXPECT_EQ(ref_gpu.count, 103u);
  EXPECT_LT(ref_gpu.max, run.total[static_cast<size_t>(Series::gpu_execution)].min);
  EXPECT_EQ(run.reference_total[static_cast<size_t>(Series::cpu_processing)].count, 0u);
  EXPECT_EQ(run.reference_total[static_cast<size_t>(Series::core_latency)].count, 103u);
}

// A device that forwards to a SimDevice but keeps LatencyDevice's default
// open_reference (no reference path).
class NoReferenceDevice final : public LatencyDevice {
 public:
  explicit NoReferenceDevice(SimDevice& d) : d_(d) {}
  const DeviceInfo& info() const override { return d_.info(); }
  Result<void> submit_frame(uint64_t id, const FrameWorkload& w) override {
    return d_.submit_frame(id, w);
  }
  Result<GpuFrameTiming> wait_frame(uint64_t id) override { return d_.wait_frame(id); }
  Result<CalibrationPair> sample_calibration() override { return d_.sample_calibration(); }

 private:
  SimDevice& d_;
};

TEST(LatencyEngine, WithoutAReferencePathBareRunsNoReferenceBlockAndSaysWhy) {
  Fixture fx;
  NoReferenceDevice dev(*fx.device);
  fx.env.device = &dev;
  LatencyRunDesc d = small_desc();
  d.bare_comparison = true;
  const Result<LatencyRun> r = run_latency(d, fx.env);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->partial);
  bool said = false;
  for (const MissingCapability& m : r->unavailable) said |= m.name == "reference_path";
  EXPECT_TRUE(said);
  for (const BlockResult& b : r->blocks) EXPECT_NE(b.kind, BlockKind::bare_loop);
  EXPECT_EQ(r->bare_total.count, 0u);
  EXPECT_EQ(r->core_latency_without_deliberate.count, 0u);
  EXPECT_EQ(r->core_latency_without_deliberate.missing, 103u);
  EXPECT_EQ(r->raw_total.count, 103u);
}

TEST(LatencyEngine, InvalidSettingsAreRefused) {
  Fixture fx;
  LatencyRunDesc d = small_desc();
  d.frames = 3;
  d.blocks = 4;
  EXPECT_FALSE(run_latency(d, fx.env).ok());
  d = small_desc();
  d.schedule.min_interval_ns = 0;
  EXPECT_FALSE(run_latency(d, fx.env).ok());
  d = small_desc();
  d.schedule.max_interval_ns = d.schedule.min_interval_ns - 1;
  EXPECT_FALSE(run_latency(d, fx.env).ok());
  LatencyRunEnv no_device;
  EXPECT_FALSE(run_latency(small_desc(), no_device).ok());
}

// Two modes: warm-ups per mode, then measured blocks alternating baseline,
// loaded; each mode's frames carry its own workload (the sim device adds GPU
// time per work unit), device ids rise in run order from first_frame_id, and
// blocks of one index share deadlines.
TEST(LatencyEngine, ModesInterleaveBlocksWithTheirOwnWorkload) {
  SimDesc dd;
  // 0.5 ns per pixel, pass and complexity unit on top of the script
  dd.cost = SimCostModelDesc{.fixed_ns = 0.0, .ns_per_unit = 0.5, .fragment_factor = 1.0};
  Fixture fx(dd);
  LatencyRunDesc d = small_desc();
  d.frames = 10;
  d.blocks = 2;
  d.warmup_frames = 3;
  d.first_frame_id = 1000;
  FrameWorkload loaded;
  loaded.passes = 4;
  loaded.complexity = 10;  // 64*64*4*10*0.5 ns = 81.92 us more GPU time
  d.modes = {LatencyModeDesc{"baseline", d.workload, std::nullopt, std::nullopt},
             LatencyModeDesc{"loaded", loaded, std::nullopt, std::nullopt}};
  const Result<LatencyRun> r = run_latency(d, fx.env);
  ASSERT_TRUE(r) << r.error().message;
  const LatencyRun& run = *r;
  ASSERT_EQ(run.blocks.size(), 6u);
  const BlockKind kinds[] = {BlockKind::warmup,   BlockKind::warmup,   BlockKind::measured,
                             BlockKind::measured, BlockKind::measured, BlockKind::measured};
  const uint32_t modes[] = {0, 1, 0, 1, 0, 1};
  uint64_t next_id = 1000;
  for (size_t i = 0; i < run.blocks.size(); ++i) {
    EXPECT_EQ(run.blocks[i].kind, kinds[i]) << i;
    EXPECT_EQ(run.blocks[i].mode, modes[i]) << i;
    EXPECT_EQ(run.blocks[i].first_device_frame, next_id) << i;
    next_id += run.blocks[i].frames_run;
  }
  EXPECT_EQ(run.next_frame_id, next_id);
  ASSERT_EQ(run.modes.size(), 2u);
  EXPECT_EQ(run.modes[0].name, "baseline");
  EXPECT_EQ(run.modes[1].name, "loaded");
  EXPECT_EQ(run.modes[0].measured_frames, 10u);
  EXPECT_EQ(run.modes[1].measured_frames, 10u);
  const auto gpu = static_cast<size_t>(Series::gpu_execution);
  EXPECT_EQ(run.modes[0].total[gpu].count, 10u);
  EXPECT_EQ(run.modes[1].total[gpu].count, 10u);
  // Baseline: 64*64*1*1*0.5 = 2048 ns on top of the script; loaded: 81920.
  for (const BlockResult& b : run.blocks) {
    const int64_t extra = b.mode == 0 ? 2'048 : 81'920;
    for (uint64_t k = 0; k < b.frames_run; ++k) {
      const FrameRecord& f = run.frames[b.first_frame + k];
      const uint64_t id = b.first_device_frame + k;
      EXPECT_EQ(static_cast<int64_t>(f.gpu_end_ticks - f.gpu_begin_ticks),
                device_script(id).gpu_duration_ns + extra)
          << "block " << b.order << " frame " << k;
    }
  }
  EXPECT_EQ(run.total[gpu].p50, run.modes[0].total[gpu].p50) << "total is the first mode's";
  // Same deadlines for baseline k and loaded k (relative to the block start).
  for (size_t i = 2; i < 6; i += 2) {
    const BlockResult& a = run.blocks[i];
    const BlockResult& b = run.blocks[i + 1];
    for (uint64_t k = 0; k < a.frames_run; ++k) {
      EXPECT_EQ(run.frames[a.first_frame + k].deadline_ns - a.start_ns,
                run.frames[b.first_frame + k].deadline_ns - b.start_ns);
    }
  }
}

// Loaded's re-check in its warm-up (LatencyModeDesc::warmup_adjust_ms_per_complexity):
// the run sets the target `miss_steps` complexity steps above what the
// warm-up frames measure; the run returns what it saw and the complexity its
// measured frames ran.
LatencyRun run_rechecked(double target_offset_steps, double tolerance) {
  SimDesc dd;
  dd.cost = SimCostModelDesc{.fixed_ns = 0.0, .ns_per_unit = 0.5, .fragment_factor = 1.0};
  Fixture fx(dd);
  LatencyRunDesc d = small_desc();
  d.frames = 8;
  d.blocks = 2;
  d.warmup_frames = 6;
  FrameWorkload loaded;
  loaded.passes = 4;
  loaded.complexity = 10;
  const double step_ms = 64.0 * 64 * 4 * 0.5 / 1e6;  // 8.192 us per complexity step
  // The scripted part of the warm-up's later half, plus complexity 10's share.
  std::vector<double> later;
  for (uint64_t id = 3; id < 6; ++id)
    later.push_back(static_cast<double>(device_script(id).gpu_duration_ns) / 1e6);
  std::sort(later.begin(), later.end());
  const double warmup_ms = later[1] + 10 * step_ms;
  const GpuTimeTarget target{warmup_ms + target_offset_steps * step_ms, tolerance};
  d.modes = {LatencyModeDesc{"loaded", loaded, target, step_ms}};
  Result<LatencyRun> r = run_latency(d, fx.env);
  EXPECT_TRUE(r) << r.error().message;
  return r ? std::move(r.value()) : LatencyRun{};
}

TEST(LatencyEngine, WarmupRecheckMovesTheComplexityAlongTheSlope) {
  // Five steps are 18 % of this target: within three tolerances of 8 %.
  const LatencyRun run = run_rechecked(5.0, 0.08);
  ASSERT_EQ(run.modes.size(), 1u);
  const LatencyModeResult& m = run.modes[0];
  ASSERT_TRUE(m.gpu_target && m.gpu_target->warmup_check);
  const WarmupCheck& w = *m.gpu_target->warmup_check;
  EXPECT_EQ(w.frames_used, 3u) << "the later half of 6 warm-up frames";
  ASSERT_TRUE(w.median_ms);
  EXPECT_EQ(w.complexity_before, 10u);
  EXPECT_EQ(w.complexity_after, 15u) << w.outcome;
  EXPECT_EQ(m.workload.complexity, 15u) << "the result names the complexity the frames ran";
  EXPECT_NE(w.outcome.find("moved from 10 to 15"), std::string::npos) << w.outcome;
  // Warm-up frames ran complexity 10, measured frames 15.
  for (const BlockResult& b : run.blocks) {
    const int64_t units = b.kind == BlockKind::warmup ? 10 : 15;
    for (uint64_t k = 0; k < b.frames_run; ++k) {
      const FrameRecord& f = run.frames[b.first_frame + k];
      EXPECT_EQ(static_cast<int64_t>(f.gpu_end_ticks - f.gpu_begin_ticks),
                device_script(b.first_device_frame + k).gpu_duration_ns + units * 8'192)
          << "block " << b.order << " frame " << k;
    }
  }
}

TEST(LatencyEngine, WarmupRecheckKeepsAComplexityWithinHalfTheTolerance) {
  // Half a step off, with a tolerance of 40 %: well within its half.
  const LatencyRun run = run_rechecked(0.5, 0.4);
  ASSERT_EQ(run.modes.size(), 1u);
  ASSERT_TRUE(run.modes[0].gpu_target && run.modes[0].gpu_target->warmup_check);
  const WarmupCheck& w = *run.modes[0].gpu_target->warmup_check;
  EXPECT_EQ(w.complexity_after, 10u) << w.outcome;
  EXPECT_EQ(run.modes[0].workload.complexity, 10u);
  EXPECT_NE(w.outcome.find("within half the tolerance"), std::string::npos) << w.outcome;
}

TEST(LatencyEngine, WarmupRecheckLeavesAMissOfMoreThanThreeTolerancesAlone) {
  // The same 5 steps off, with a tolerance so small that the miss is far
  // beyond drift: another load on the device, not a complexity to move.
  const LatencyRun base = run_rechecked(5.0, 0.02);
  ASSERT_TRUE(base.modes.size() == 1 && base.modes[0].gpu_target &&
              base.modes[0].gpu_target->warmup_check &&
              base.modes[0].gpu_target->warmup_check->median_ms);
  const double miss = std::fabs(*base.modes[0].gpu_target->warmup_check->median_ms -
                                base.modes[0].gpu_target->target.target_ms) /
                      base.modes[0].gpu_target->target.target_ms;
  const LatencyRun run = run_rechecked(5.0, miss / 3.5);
  ASSERT_EQ(run.modes.size(), 1u);
  ASSERT_TRUE(run.modes[0].gpu_target && run.modes[0].gpu_target->warmup_check);
  const WarmupCheck& w = *run.modes[0].gpu_target->warmup_check;
  EXPECT_EQ(w.complexity_after, 10u) << w.outcome;
  EXPECT_EQ(run.modes[0].workload.complexity, 10u);
  EXPECT_NE(w.outcome.find("not drift"), std::string::npos) << w.outcome;
}

TEST(LatencyEngine, WarmupRecheckNeedsATargetAndAPositiveSlope) {
  LatencyRunDesc d = small_desc();
  d.modes = {LatencyModeDesc{"loaded", d.workload, std::nullopt, 0.01}};
  EXPECT_FALSE(validate(d)) << "a slope without a target";
  d.modes = {LatencyModeDesc{"loaded", d.workload, GpuTimeTarget{1.0, 0.02}, -0.01}};
  EXPECT_FALSE(validate(d)) << "a negative slope";
}

TEST(LatencyEngine, ModesRefuseTheBareComparison) {
  LatencyRunDesc d = small_desc();
  d.bare_comparison = true;
  d.modes = {LatencyModeDesc{"baseline", d.workload, std::nullopt, std::nullopt},
             LatencyModeDesc{"loaded", d.workload, std::nullopt, std::nullopt}};
  EXPECT_FALSE(validate(d));
}

}  // namespace
}  // namespace latlab
