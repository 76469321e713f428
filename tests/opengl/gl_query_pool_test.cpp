#include <cstdlib>
// The seed-000 pool and the seam's slots on GL query objects, with real
// compute dispatches (llvmpipe on CI), KHR_debug on. The pool's tests run in
// each mode (GlPoolModes): desktop GL or GLES 3.x, GL_TIMESTAMP pairs or the
// GL_TIME_ELAPSED fallback (durations only).
#include <cstdio>
#include <thread>

#include "latlab/engine/gl_rig.hpp"
#include "latlab/host_clock.hpp"
#include "one_mesa_worker.hpp"
#include "opengl/gl_fixture.hpp"

namespace latlab::test {
namespace {

class GlPoolTest : public GlTest {
 protected:
  void make(uint32_t max_queries, uint32_t side, GlTimestampSlotsDesc sdesc = {}) {
    if (!ctx_) GTEST_SKIP() << "no GL context";
    const WorkloadForm form =
        ctx_->report().compute_shaders && !fragment_only_ ? WorkloadForm::compute : WorkloadForm::fragment;
    auto w = GlWorkload::create(*ctx_, side, side, form);
    ASSERT_TRUE(w) << w.error().message;
    work_ = std::move(w.value());
    sdesc.count = max_queries;
    auto slots = GlTimestampSlots::create(*ctx_, sdesc);
    ASSERT_TRUE(slots) << slots.error().message;
    slots_ = slots.value();
    auto p = TimestampQueryPool::create(slots_, QueryPoolDesc{.max_queries = max_queries, .kind = QueryKind::compute});
    ASSERT_TRUE(p) << p.error().message;
    pool_ = std::move(p.value());
  }
  void TearDown() override {
    pool_.reset();
    slots_.reset();
    work_.reset();
    GlTest::TearDown();
  }
  std::unique_ptr<GlWorkload> work_;
  std::shared_ptr<GlTimestampSlots> slots_;
  std::unique_ptr<TimestampQueryPool> pool_;
  bool fragment_only_ = false;  // fragment passes even where compute shaders exist
};

// A context kind and timer the pool's tests run in.
struct GlPoolMode {
  const char* name;
  GlApiKind api;
  GlTimer timer;
};

// GLES: the context path where desktop GL is absent (GL_EXT_disjoint_timer_query).
// elapsed: GL_TIME_ELAPSED, forced where GL_TIMESTAMP exists (llvmpipe has both).
const GlPoolMode kGlPoolModes[] = {
    {"desktop_or_auto", GlApiKind::automatic, GlTimer::automatic},
    {"gles", GlApiKind::gles, GlTimer::automatic},
    {"elapsed", GlApiKind::automatic, GlTimer::elapsed},
    {"gles_elapsed", GlApiKind::gles, GlTimer::elapsed},
};

class GlPoolModeTest : public GlPoolTest, public ::testing::WithParamInterface<GlPoolMode> {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(open(GetParam().api, GetParam().timer));
    if (!ctx_) return;  // skipped, with the reason
    if (GetParam().api == GlApiKind::gles) {
      ASSERT_TRUE(ctx_->gles());
    }
    ASSERT_EQ(ctx_->durations_only(), GetParam().timer == GlTimer::elapsed);
    // llvmpipe's GL_TIME_ELAPSED counts rasterizer time only: a compute
    // dispatch reads 1 ns (docs/usage.md). Fragment passes are timed by
    // every driver.
    fragment_only_ = elapsed();
  }
  bool elapsed() const { return GetParam().timer == GlTimer::elapsed; }
};

std::string mode_name(const ::testing::TestParamInfo<GlPoolMode>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(GlPoolModes, GlPoolModeTest, ::testing::ValuesIn(kGlPoolModes), mode_name);

TEST_P(GlPoolModeTest, DispatchesHavePositiveDurations) {
  ASSERT_NO_FATAL_FAILURE(make(256, 64));
  ASSERT_TRUE(pool_->track_timestamp());
  const auto frames = run_gl_frames(*ctx_, *work_, *pool_, 6, [](uint64_t f) {
    return std::vector<GlPass>{{pass_uid(0, f), 8}, {pass_uid(1, f), 8}};
  });
  ASSERT_EQ(frames.size(), 6u);
  for (const auto& f : frames) {
    for (const auto& p : f.passes) {
      ASSERT_TRUE(p.got_offset) << p.uid;
      EXPECT_EQ(p.result.status, QueryStatus::ok) << p.uid << " " << to_string(p.result.status);
      EXPECT_GT(p.result.duration_ns, 0) << p.uid;
      EXPECT_EQ(p.result.frame_id, f.frame_id);
      // GL_TIME_ELAPSED has no device clock: no ticks, never a made-up 0 passed off as one.
      EXPECT_EQ(p.result.has_ticks, !elapsed()) << p.uid;
    }
  }
  EXPECT_EQ(pool_->durations_only(), elapsed());
  EXPECT_EQ(pool_->pairs_in_use(), 0u);
  EXPECT_EQ(pool_->overflow_count(), 0u);
  EXPECT_EQ(slots_->write_errors(), 0u);
  EXPECT_EQ(slots_->overlapped_spans(), 0u);
}

// One Mesa worker thread: see one_mesa_worker.hpp.
class GlPoolModeTestOneThread : public GlPoolModeTest {
 protected:
  void SetUp() override {
    test::use_one_mesa_worker();
    GlPoolModeTest::SetUp();
  }
};

INSTANTIATE_TEST_SUITE_P(GlPoolModes, GlPoolModeTestOneThread, ::testing::ValuesIn(kGlPoolModes), mode_name);

TEST_P(GlPoolModeTestOneThread, FourTimesTheWorkTakesMeasurablyLonger) {
  ASSERT_NO_FATAL_FAILURE(make(256, 128));
  // An untimed pass leads each frame (see ResultsMapToTheirUidAndFrame).
  // Big enough (about 16 ms) that llvmpipe's scheduling delays of a few ms
  // on a busy 2-core machine do not hide the work.
  constexpr uint32_t kBase = 1024;
  const auto frames = run_gl_frames(*ctx_, *work_, *pool_, 10, [](uint64_t f) {
    return std::vector<GlPass>{{"", 1}, {pass_uid(0, f), kBase}, {pass_uid(1, f), 4 * kBase}};
  });
  ASSERT_EQ(frames.size(), 10u);
  for (const auto& f : frames) ASSERT_TRUE(f.passes[0].result.ok() && f.passes[1].result.ok());
  // Fastest of 10 frames: other load on the machine only ever adds time.
  const double small = static_cast<double>(fastest_ns(frames, 0));
  const double large = static_cast<double>(fastest_ns(frames, 1));
  std::printf("%s: complexity %u: fastest %.3f ms; 4x: %.3f ms; ratio %.2f\n", GetParam().name, kBase, small / 1e6,
              large / 1e6, large / small);
  EXPECT_GT(large / small, 2.0);
}

TEST_P(GlPoolModeTest, ResultsMapToTheirUidAndFrame) {
  ASSERT_NO_FATAL_FAILURE(make(256, 64));
  // Different work per uid, 16x apart: the fastest frames of each uid come
  // back in that order, and all results tile the timeline in submission
  // order. An untimed pass leads each frame: llvmpipe charges a frame's first
  // timestamp with flushing the previous scene (about 4 ms here).
  const uint32_t complexity[3] = {16, 256, 4096};
  const auto frames = run_gl_frames(*ctx_, *work_, *pool_, 7, [&](uint64_t f) {
    return std::vector<GlPass>{{"", 1}, {pass_uid(0, f), complexity[0]}, {pass_uid(1, f), complexity[1]},
                               {pass_uid(2, f), complexity[2]}};
  });
  ASSERT_EQ(frames.size(), 7u);
  uint64_t expected_frame = 1;
  for (const auto& f : frames) {
    EXPECT_EQ(f.frame_id, expected_frame++);
    ASSERT_EQ(f.passes.size(), 3u);  // the untimed pass has no entry
    for (uint32_t i = 0; i < 3; ++i) {
      ASSERT_TRUE(f.passes[i].result.ok()) << f.passes[i].uid;
      EXPECT_EQ(f.passes[i].result.frame_id, f.frame_id);
      EXPECT_EQ(f.passes[i].uid, pass_uid(i, f.frame_id));
    }
  }
  // Durations only: no ticks to order; the work's order below still holds.
  if (!elapsed()) expect_results_in_submission_order(frames);
  // 256x apart end to end: what survives a busy 2-core machine (a 16x step
  // once lost to a 4 ms scheduling delay in every frame of one run).
  EXPECT_LT(fastest_ns(frames, 0), fastest_ns(frames, 2));
  EXPECT_LT(fastest_ns(frames, 1), fastest_ns(frames, 2));
}

TEST_P(GlPoolModeTest, TinyPoolOverflowLosesNoWrittenResult) {
  ASSERT_NO_FATAL_FAILURE(make(4, 64));
  // Two pairs, three passes per frame taking their pairs up front, two
  // frames in flight: some passes find no free pair.
  const auto frames = run_gl_frames(
      *ctx_, *work_, *pool_, 12,
      [](uint64_t f) {
        return std::vector<GlPass>{{pass_uid(0, f), 4}, {pass_uid(1, f), 4}, {pass_uid(2, f), 4}};
      },
      /*allocate_first=*/true);
  ASSERT_EQ(frames.size(), 12u);
  uint64_t timed = 0, overflowed = 0;
  for (const auto& f : frames) {
    for (const auto& p : f.passes) {
      if (p.got_offset) {
        ++timed;
        EXPECT_EQ(p.result.status, QueryStatus::ok) << p.uid << " " << to_string(p.result.status);
        EXPECT_GT(p.result.duration_ns, 0);
      } else {
        ++overflowed;
        EXPECT_EQ(p.result.status, QueryStatus::overflowed) << p.uid;
      }
    }
  }
  EXPECT_GE(timed, 12u);
  EXPECT_GT(overflowed, 0u);
  EXPECT_EQ(overflowed, pool_->overflow_count());
  EXPECT_EQ(timed + overflowed, 36u);
  EXPECT_EQ(pool_->pairs_in_use(), 0u);
}

// A read while the work is in flight returns at once, unavailable: never a
// wait, never an earlier value; it takes a small part of the work's own GPU
// time. (llvmpipe may run a dispatch while it is issued.)
TEST_F(GlPoolTest, ReadsNeverWaitForTheGpu) {
  ASSERT_NO_FATAL_FAILURE(make(16, 256));
  const gl::Api& a = api();
  // Slot 0/1 first hold an old, finished use: it must not come back.
  slots_->write(ctx_.get(), 0, TimestampEdge::begin);
  slots_->write(ctx_.get(), 1, TimestampEdge::end);
  a.Finish();
  slots_->reset(0, 2, true);
  slots_->write(ctx_.get(), 0, TimestampEdge::begin);
  work_->record_pass(1024, 0);
  work_->record_pass(1024, 1);
  slots_->write(ctx_.get(), 1, TimestampEdge::end);
  GLsync fence = a.FenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
  a.Flush();
  SlotReading r[2];
  const int64_t t0 = host_now_ns();
  slots_->read(0, r);
  const int64_t read_ns = host_now_ns() - t0;
  const int64_t w0 = host_now_ns();
  a.ClientWaitSync(fence, GL_SYNC_FLUSH_COMMANDS_BIT, 60'000'000'000ull);
  const int64_t wait_ns = host_now_ns() - w0;
  a.DeleteSync(fence);
  const SlotReading early = r[1];
  slots_->read(0, r);
  ASSERT_TRUE(r[0].available && r[1].available);
  // llvmpipe may have finished the work while it was issued; then the early
  // read may see it, but only this use's value, never the old one.
  if (early.available != 0) {
    EXPECT_EQ(early.ticks, r[1].ticks) << "an earlier use's value read as available";
  }
  EXPECT_EQ(completed_pair_status(r[0], r[1], slots_->tick_format()), QueryStatus::ok);
  const int64_t gpu_ns = slots_->tick_format().span_ns(r[0].ticks, r[1].ticks);
  std::printf("read %.3f ms; the work: %.3f ms on the GPU, fence wait %.3f ms\n", static_cast<double>(read_ns) / 1e6,
              static_cast<double>(gpu_ns) / 1e6, static_cast<double>(wait_ns) / 1e6);
  EXPECT_LT(read_ns * 10, gpu_ns) << "the read took as long as the GPU work: it waited";
}

TEST_F(GlPoolTest, ResetSlotReadsUnavailableUntilWrittenAgain) {
  ASSERT_NO_FATAL_FAILURE(make(4, 16));
  slots_->write(ctx_.get(), 0, TimestampEdge::begin);
  api().Finish();
  SlotReading r[1];
  slots_->read(0, r);
  ASSERT_EQ(r[0].available, 1u);
  slots_->reset(0, 1, true);
  slots_->read(0, r);
  EXPECT_EQ(r[0].available, 0u) << "the previous use's value came back after a reset";
}

// Disjoint through the GL-level seam (the probe stands in for
// GL_GPU_DISJOINT_EXT): a disjoint event marks the affected frame's pairs
// disjoint, never a number; frames after it are ok again.
TEST_P(GlPoolModeTest, DisjointEventMarksTheAffectedFramesPairs) {
  auto fire = std::make_shared<bool>(false);
  GlTimestampSlotsDesc sdesc;
  sdesc.disjoint_probe = [fire] {
    const bool f = *fire;
    *fire = false;  // read-and-clear, as GL_GPU_DISJOINT_EXT
    return f;
  };
  ASSERT_NO_FATAL_FAILURE(make(64, 32, sdesc));
  EXPECT_TRUE(slots_->has_disjoint_signal());
  const auto frames = run_gl_frames(*ctx_, *work_, *pool_, 6, [&](uint64_t f) {
    if (f == 3) *fire = true;  // the event happens while frame 3 is recorded
    return std::vector<GlPass>{{pass_uid(0, f), 4}, {pass_uid(1, f), 4}};
  });
  ASSERT_EQ(frames.size(), 6u);
  uint32_t disjoint = 0;
  for (const auto& f : frames) {
    for (const auto& p : f.passes) {
      if (f.frame_id == 3) {
        EXPECT_EQ(p.result.status, QueryStatus::disjoint) << p.uid << " " << to_string(p.result.status);
      }
      if (p.result.status == QueryStatus::disjoint) {
        ++disjoint;
        EXPECT_EQ(p.result.duration_ns, 0) << "a disjoint pair carries no number";
      } else {
        EXPECT_EQ(p.result.status, QueryStatus::ok) << p.uid;
      }
    }
  }
  EXPECT_EQ(slots_->disjoint_events(), 1u);
  EXPECT_GE(disjoint, 2u);
  EXPECT_LE(disjoint, 4u) << "only frames in flight at the event are affected";
  EXPECT_TRUE(frames.back().passes[0].result.ok());
}

TEST_F(GlPoolTest, WriteFromAThreadWithoutTheContextIsRefusedAndCounted) {
  ASSERT_NO_FATAL_FAILURE(make(4, 16));
  std::thread t([&] { slots_->write(ctx_.get(), 0, TimestampEdge::begin); });
  t.join();
  EXPECT_EQ(slots_->write_errors(), 1u);
  SlotReading r[1];
  slots_->read(0, r);
  EXPECT_EQ(r[0].available, 0u);
}

}  // namespace
}  // namespace latlab::test
