// GL-specific pool behaviour (disjoint events, a write without the context)
// on llvmpipe, KHR_debug on; the contract itself is tests/conformance, run by
// timestamp_contract_gl_test.cpp. The disjoint test runs in each mode
// (GlPoolModes): desktop GL or GLES 3.x, GL_TIMESTAMP pairs or the
// GL_TIME_ELAPSED fallback (durations only).
#include <thread>

#include "latlab/bench/gl_rig.hpp"
#include "latlab/host_clock.hpp"
#include "one_mesa_worker.hpp"
#include "opengl/gl_fixture.hpp"

namespace latlab::test {
namespace {

class GlPoolTest : public GlTest {
 protected:
  void make(uint32_t max_queries, uint32_t side, GlTimestampSlotsDesc sdesc = {}) {
    if (!ctx_) GTEST_SKIP() << "no GL context";
    const WorkloadForm form = ctx_->report().compute_shaders && !fragment_only_
                                  ? WorkloadForm::compute
                                  : WorkloadForm::fragment;
    auto w = GlWorkload::create(*ctx_, side, side, form);
    ASSERT_TRUE(w) << w.error().message;
    work_ = std::move(w.value());
    sdesc.count = max_queries;
    auto slots = GlTimestampSlots::create(*ctx_, sdesc);
    ASSERT_TRUE(slots) << slots.error().message;
    slots_ = slots.value();
    auto p = TimestampQueryPool::create(
        slots_, QueryPoolDesc{.max_queries = max_queries, .kind = QueryKind::compute});
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
        EXPECT_EQ(p.result.status, QueryStatus::disjoint)
            << p.uid << " " << to_string(p.result.status);
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
