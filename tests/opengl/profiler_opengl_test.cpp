#include <cstdlib>
// The GPU profiler on OpenGL (llvmpipe on CI) with KHR_debug on: nested
// zones around real passes, 4x the work, frames in flight, a zone from a
// thread without the context, the host timeline.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <thread>
#include <vector>

#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/bench/gl_rig.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_opengl.hpp"
#include "one_mesa_worker.hpp"
#include "opengl/gl_fixture.hpp"

namespace latlab::test {
namespace {

class ProfilerGlTest : public GlTest {
 protected:
  // `own_slots`: the slots built here (kept in slots_) instead of by
  // create_gl_profiler, for tests that read their counters.
  void make(GpuProfilerDesc desc = {.max_zones_per_frame = 64}, uint32_t side = 32,
            bool own_slots = false) {
    if (!ctx_) GTEST_SKIP() << "no GL context";
    if (own_slots) {
      auto s = GlTimestampSlots::create(
          *ctx_, {.count = GpuProfiler::slots_needed(desc), .disjoint_probe = {}});
      ASSERT_TRUE(s) << s.error().message;
      slots_ = s.value();
      auto p = GlGpuProfiler::create(slots_, desc);
      ASSERT_TRUE(p) << p.error().message;
      prof_ = std::move(p.value());
    } else {
      auto p = create_gl_profiler(*ctx_, desc);
      ASSERT_TRUE(p) << p.error().message;
      prof_ = std::move(p.value());
    }
    const WorkloadForm form =
        ctx_->report().compute_shaders ? WorkloadForm::compute : WorkloadForm::fragment;
    auto w = GlWorkload::create(*ctx_, side, side, form);
    ASSERT_TRUE(w) << w.error().message;
    work_ = std::move(w.value());
    auto ring = GlFrameRing::create(*ctx_, desc.frames_in_flight);
    ASSERT_TRUE(ring) << ring.error().message;
    ring_ = std::move(ring.value());
  }
  void TearDown() override {
    if (ring_) {
      EXPECT_TRUE(ring_->wait_all().ok());
    }
    ring_.reset();
    prof_.reset();
    slots_.reset();
    work_.reset();
    GlTest::TearDown();
  }
  // A reference frame: frame{simulate, lighting{direct, indirect}}.
  void record_frame() {
    GlContext* s = ctx_.get();
    LATLAB_GPU_ZONE(prof_, s, "frame");
    {
      LATLAB_GPU_ZONE(prof_, s, "simulate");
      work_->record_pass(4, 0);
    }
    {
      LATLAB_GPU_ZONE(prof_, s, "lighting");
      {
        LATLAB_GPU_ZONE(prof_, s, "direct");
        work_->record_pass(8, 1);
      }
      {
        LATLAB_GPU_ZONE(prof_, s, "indirect");
        work_->record_pass(4, 2);
      }
    }
  }
  // Submits the current frame into `slot` (fence + flush) and notes its id.
  void submit(uint32_t slot) {
    ASSERT_TRUE(ring_->submit(slot).ok());
    if (frame_of_.size() <= slot) frame_of_.resize(slot + 1);
    frame_of_[slot] = prof_->current_frame_id();
  }
  // The app's fence wait, then retire_frame: what the profiler header asks.
  void wait(uint32_t slot) {
    auto w = ring_->wait(slot);
    ASSERT_TRUE(w) << w.error().message;
    ASSERT_TRUE(w.value()) << "fence timeout";
    prof_->retire_frame(frame_of_[slot]);
  }
  // One frame from record to collection; the collected frame.
  std::optional<ProfilerFrame> one_frame(const std::function<void()>& record) {
    const uint64_t id = prof_->current_frame_id();
    record();
    submit(0);
    wait(0);
    prof_->next_frame();
    return prof_->frame(id);
  }

  std::shared_ptr<GlTimestampSlots> slots_;
  std::unique_ptr<GlGpuProfiler> prof_;
  std::unique_ptr<GlWorkload> work_;
  std::unique_ptr<GlFrameRing> ring_;
  std::vector<uint64_t> frame_of_;
};

const ProfilerZone* find(const ProfilerFrame& f, std::string_view name) {
  for (const auto& z : f.zones) {
    if (z.name == name) return &z;
  }
  return nullptr;
}

TEST_F(ProfilerGlTest, NestedZonesAreOkAndChildrenLieInsideTheirParents) {
  ASSERT_NO_FATAL_FAILURE(make());
  const auto f = one_frame([&] { record_frame(); });
  ASSERT_TRUE(f.has_value());
  ASSERT_EQ(f->zones.size(), 5u);
  for (const auto& z : f->zones) {
    ASSERT_EQ(z.status, QueryStatus::ok) << z.name << " " << to_string(z.status);
    EXPECT_GT(z.duration_ns, 0) << z.name;
    if (z.parent == kNoZone) continue;
    const auto& p = f->zones[z.parent];
    EXPECT_GE(z.begin_ticks, p.begin_ticks) << z.name << " in " << p.name;
    EXPECT_LE(z.end_ticks, p.end_ticks) << z.name << " in " << p.name;
  }
  EXPECT_EQ(find(*f, "direct")->depth, 2u);
  EXPECT_EQ(find(*f, "lighting")->depth, 1u);
  // GL_TIMESTAMP waits for every earlier command: siblings follow each other.
  EXPECT_LE(find(*f, "simulate")->end_ticks, find(*f, "lighting")->begin_ticks);
  EXPECT_LE(find(*f, "direct")->end_ticks, find(*f, "indirect")->begin_ticks);
  EXPECT_GT(find(*f, "frame")->duration_ns, find(*f, "lighting")->duration_ns);
  const std::string tree = format_frame_tree("gl", *f);
  EXPECT_NE(tree.find("indirect"), std::string::npos) << tree;
}

// One Mesa worker thread: see one_mesa_worker.hpp.
class ProfilerGlTestOneThread : public ProfilerGlTest {
 protected:
  void SetUp() override {
    test::use_one_mesa_worker();
    ProfilerGlTest::SetUp();
  }
};

TEST_F(ProfilerGlTestOneThread, FourTimesTheWorkTakesMeasurablyLonger) {
  ASSERT_NO_FATAL_FAILURE(make({.max_zones_per_frame = 8, .frames_in_flight = 1}, 128));
  // As in GlPoolTest: an untimed pass leads each frame (llvmpipe charges a
  // frame's first timestamp with flushing the previous scene), and the base
  // pass (about 16 ms on llvmpipe) is far above scheduling delays of a few
  // ms on a busy 2-core machine.
  constexpr uint32_t kBase = 1024;
  constexpr int kFrames = 8;
  int64_t small = std::numeric_limits<int64_t>::max();
  int64_t large = std::numeric_limits<int64_t>::max();
  for (int i = 0; i < kFrames; ++i) {
    const auto f = one_frame([&] {
      work_->record_pass(1, 0);
      {
        LATLAB_GPU_ZONE(prof_, ctx_.get(), "base");
        work_->record_pass(kBase, 1);
      }
      {
        LATLAB_GPU_ZONE(prof_, ctx_.get(), "base_x4");
        work_->record_pass(4 * kBase, 2);
      }
    });
    ASSERT_TRUE(f.has_value());
    ASSERT_EQ(f->zones.size(), 2u);
    ASSERT_TRUE(f->zones[0].ok() && f->zones[1].ok());
    small = std::min(small, f->zones[0].duration_ns);
    large = std::min(large, f->zones[1].duration_ns);
  }
  // Fastest of N: other load on the machine only ever adds time.
  const double ratio = static_cast<double>(large) / static_cast<double>(small);
  std::printf("complexity %u: fastest %.3f ms; 4x: %.3f ms; ratio %.2f\n", kBase,
              static_cast<double>(small) / 1e6, static_cast<double>(large) / 1e6, ratio);
  EXPECT_GT(ratio, 2.0);
}

TEST_F(ProfilerGlTest, FramesInFlightAreCollectedWithoutWaiting) {
  ASSERT_NO_FATAL_FAILURE(make({.max_zones_per_frame = 64, .frames_in_flight = 3}));
  constexpr uint32_t kFrames = 12;
  constexpr uint32_t kInFlight = 3;
  for (uint32_t frame = 0; frame < kFrames; ++frame) {
    const uint32_t slot = frame % kInFlight;
    if (ring_->in_flight(slot)) {
      ASSERT_NO_FATAL_FAILURE(wait(slot));
    }
    if (frame > 0) prof_->next_frame();  // collects whatever is ready; never waits for a fence
    record_frame();
    ASSERT_NO_FATAL_FAILURE(submit(slot));
  }
  for (uint32_t slot = 0; slot < kInFlight; ++slot) ASSERT_NO_FATAL_FAILURE(wait(slot));
  prof_->next_frame();
  prof_->collect();
  const ProfilerCounters c = prof_->counters();
  EXPECT_EQ(c.frames_collected, kFrames);
  EXPECT_EQ(c.zones_ok, kFrames * 5u);
  EXPECT_EQ(c.zones_dropped, 0u);
  EXPECT_EQ(c.zones_invalid, 0u);
  EXPECT_EQ(c.frames_without_queries, 0u);
  const auto stats = prof_->stats();
  ASSERT_EQ(stats.size(), 5u);
  for (const auto& s : stats) {
    EXPECT_EQ(s.frames, kFrames) << s.name;
    EXPECT_GT(s.avg_ms, 0.0) << s.name;
    EXPECT_LE(s.min_ms, s.p95_ms);
    EXPECT_LE(s.p95_ms, s.max_ms);
  }
}

TEST_F(ProfilerGlTest, AZoneFromAThreadWithoutTheContextIsRefusedAndInvalid) {
  ASSERT_NO_FATAL_FAILURE(make({.max_zones_per_frame = 64}, 32, /*own_slots=*/true));
  const auto f = one_frame([&] {
    LATLAB_GPU_ZONE(prof_, ctx_.get(), "here");
    work_->record_pass(4, 0);
    std::thread other([&] {
      ASSERT_FALSE(ctx_->is_current());
      LATLAB_GPU_ZONE(prof_, ctx_.get(), "elsewhere");  // refused: no context on this thread
    });
    other.join();
  });
  ASSERT_TRUE(f.has_value()) << "retire_frame lets the frame be collected";
  EXPECT_EQ(slots_->write_errors(), 2u);
  ASSERT_NE(find(*f, "here"), nullptr);
  ASSERT_NE(find(*f, "elsewhere"), nullptr);
  EXPECT_EQ(find(*f, "here")->status, QueryStatus::ok);
  EXPECT_EQ(find(*f, "elsewhere")->status, QueryStatus::invalid)
      << "never a time it did not measure";
}

TEST_F(ProfilerGlTest, ZonesLandOnTheHostTimelineBetweenRecordAndFence) {
  ASSERT_NO_FATAL_FAILURE(make());
  auto pair = ctx_->sample_calibration();
  ASSERT_TRUE(pair) << pair.error().message;
  const CalibrationPair cp = pair.value();
  const TickFormat tf = ctx_->tick_format();
  // Offset-only mapping through one fresh pair (the frame is milliseconds long).
  prof_->set_clock_mapper([cp, tf](uint64_t t) -> std::optional<MappedTime> {
    return MappedTime{cp.host_ns + tf.signed_delta(cp.device_ticks, t), cp.max_deviation_ns};
  });
  const uint64_t id = prof_->current_frame_id();
  record_frame();
  ASSERT_NO_FATAL_FAILURE(submit(0));
  ASSERT_NO_FATAL_FAILURE(wait(0));
  const int64_t fence_seen = host_now_ns();
  prof_->next_frame();
  const auto f = prof_->frame(id);
  ASSERT_TRUE(f && f->host_mapped);
  // Slack: the pair's deviation plus 1 ms for the calibration's own error.
  const int64_t slack = f->map_error_ns + 1'000'000;
  for (const auto& z : f->zones) {
    ASSERT_TRUE(z.host_mapped) << z.name;
    EXPECT_GE(z.gpu_begin_host_ns, f->cpu_begin_ns - slack) << z.name;
    EXPECT_LE(z.gpu_end_host_ns, fence_seen + slack) << z.name;
    EXPECT_LE(z.gpu_begin_host_ns, z.gpu_end_host_ns) << z.name;
  }
}

}  // namespace
}  // namespace latlab::test
