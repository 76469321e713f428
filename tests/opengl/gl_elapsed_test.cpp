// The GL_TIME_ELAPSED fallback (durations only), forced on a context that
// has GL_TIMESTAMP too (llvmpipe, NVIDIA): one span at a time per context,
// nested or overlapping spans `overlapped` (never a number), and every
// consumer of absolute times refusing with "unavailable: only
// GL_TIME_ELAPSED". The pool's own tests run in this mode too
// (gl_query_pool_test.cpp, GlPoolModes).
#include <cstdlib>
#include <string>

#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/bench/gl_rig.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_opengl.hpp"
#include "opengl/gl_fixture.hpp"

namespace latlab::test {
namespace {

constexpr const char* kElapsedOnly = "unavailable: only GL_TIME_ELAPSED";

class GlElapsedTest : public GlTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(open(GlApiKind::automatic, GlTimer::elapsed));
    if (!ctx_) return;
    // Fragment passes: llvmpipe's GL_TIME_ELAPSED does not count compute
    // dispatches (docs/usage.md).
    auto w = GlWorkload::create(*ctx_, 32, 32, WorkloadForm::fragment);
    ASSERT_TRUE(w) << w.error().message;
    work_ = std::move(w.value());
  }
  void TearDown() override {
    work_.reset();
    GlTest::TearDown();
  }
  std::unique_ptr<GlWorkload> work_;
};

TEST_F(GlElapsedTest, TheDeviceReportSaysDurationsOnlyAndWhy) {
  const GlDeviceReport& r = ctx_->report();
  EXPECT_TRUE(ctx_->durations_only());
  EXPECT_EQ(ctx_->timer(), GlTimer::elapsed);
  EXPECT_EQ(r.timer, "GL_TIME_ELAPSED");
  ASSERT_FALSE(r.missing.empty());
  EXPECT_EQ(r.missing.front().name, "timestamps");
  EXPECT_NE(r.missing.front().reason.find("durations only"), std::string::npos)
      << r.missing.front().reason;
  EXPECT_EQ(ctx_->tick_format().valid_bits, 64u) << "GL_TIME_ELAPSED results are 64-bit ns";
}

TEST_F(GlElapsedTest, CalibrationIsUnavailableNotMadeUp) {
  auto pair = ctx_->sample_calibration();
  ASSERT_FALSE(pair);
  EXPECT_NE(pair.error().message.find(kElapsedOnly), std::string::npos) << pair.error().message;
}

TEST(GlElapsedDevice, TheLatencyDeviceRefusesWithTheReason) {
  auto dev = GlLatencyDevice::create({.context = {.device = gl_test_device(),
                                                  .api = GlApiKind::automatic,
                                                  .debug = false,
                                                  .timer = GlTimer::elapsed},
                                      .frames_in_flight = 2});
  if (!dev && dev.error().message.find("no OpenGL context") != std::string::npos) {
    GTEST_SKIP() << dev.error().message;
  }
  ASSERT_FALSE(dev) << "GPU begin/end on the host clock need GL_TIMESTAMP";
  EXPECT_NE(dev.error().message.find(kElapsedOnly), std::string::npos) << dev.error().message;
}

// Uid B opens while A is timed: B is overlapped (GL has one GL_TIME_ELAPSED
// query per context), A keeps its own time, and the next span is timed again.
TEST_F(GlElapsedTest, APairOpenedInsideAnotherIsOverlappedAndTheOuterOneKeepsItsTime) {
  auto slots = GlTimestampSlots::create(*ctx_, {.count = 8, .disjoint_probe = {}});
  ASSERT_TRUE(slots) << slots.error().message;
  auto pool_r =
      TimestampQueryPool::create(slots.value(), {.max_queries = 8, .kind = QueryKind::compute});
  ASSERT_TRUE(pool_r) << pool_r.error().message;
  TimestampQueryPool& pool = *pool_r.value();
  const auto a = pool.allocate_queries_for_context("c:0:a:f1", 1);
  const auto b = pool.allocate_queries_for_context("c:0:b:f1", 1);
  const auto c = pool.allocate_queries_for_context("c:0:c:f1", 1);
  ASSERT_TRUE(a && b && c);
  pool.write_begin(ctx_.get(), *a);
  work_->record_pass(4, 0);
  pool.write_begin(ctx_.get(), *b);
  work_->record_pass(4, 1);
  pool.write_end(ctx_.get(), *b);
  pool.write_end(ctx_.get(), *a);
  pool.write_begin(ctx_.get(), *c);
  work_->record_pass(4, 2);
  pool.write_end(ctx_.get(), *c);
  api().Finish();
  const ResolveTicket t = pool.resolve_queries_async();
  ASSERT_TRUE(t.is_ready());
  EXPECT_EQ(pool.timestamp("c:0:a:f1").status, QueryStatus::ok);
  EXPECT_GT(pool.timestamp("c:0:a:f1").duration_ns, 0);
  EXPECT_EQ(pool.timestamp("c:0:b:f1").status, QueryStatus::overlapped);
  EXPECT_EQ(pool.timestamp("c:0:b:f1").duration_ns, 0) << "an overlapped pair carries no number";
  EXPECT_EQ(pool.timestamp("c:0:c:f1").status, QueryStatus::ok)
      << "the context's one query target is free again";
  EXPECT_EQ(t.summary().resolved_ok, 2u);
  EXPECT_EQ(t.summary().invalid, 1u);
  EXPECT_EQ(slots.value()->overlapped_spans(), 1u);
  EXPECT_FALSE(pool.last_value().has_value()) << "frame 1 has a pair that is not ok";
}

// A pair whose end never came (the caller forgot it; its frame retired) is
// invalid, and its open GL_TIME_ELAPSED query does not block later spans.
TEST_F(GlElapsedTest, ASpanLeftOpenIsInvalidAndDoesNotBlockTheNext) {
  auto slots = GlTimestampSlots::create(*ctx_, {.count = 2, .disjoint_probe = {}});
  ASSERT_TRUE(slots) << slots.error().message;
  auto pool_r =
      TimestampQueryPool::create(slots.value(), {.max_queries = 2, .kind = QueryKind::compute});
  ASSERT_TRUE(pool_r) << pool_r.error().message;
  TimestampQueryPool& pool = *pool_r.value();
  const auto a = pool.allocate_queries_for_context("c:0:a:f1", 1);
  ASSERT_TRUE(a);
  pool.write_begin(ctx_.get(), *a);
  work_->record_pass(4, 0);
  api().Finish();
  pool.retire_frame(1);
  EXPECT_EQ(pool.timestamp("c:0:a:f1").status, QueryStatus::invalid);
  const auto b = pool.allocate_queries_for_context("c:0:a:f2", 2);  // the same pair, reset
  ASSERT_TRUE(b);
  pool.write_begin(ctx_.get(), *b);
  work_->record_pass(4, 0);
  pool.write_end(ctx_.get(), *b);
  api().Finish();
  (void)pool.resolve_queries_async();
  EXPECT_EQ(pool.timestamp("c:0:a:f2").status, QueryStatus::ok);
  EXPECT_EQ(slots.value()->overlapped_spans(), 0u);
}

// The profiler: a root zone is timed, zones inside it are overlapped (no
// number, no wrong one), sibling roots are each timed; nothing is host
// mapped even with a mapper set.
TEST_F(GlElapsedTest, ProfilerTimesRootsAndMarksNestedZonesOverlapped) {
  auto prof_r = create_gl_profiler(*ctx_, {.max_zones_per_frame = 16, .frames_in_flight = 1});
  ASSERT_TRUE(prof_r) << prof_r.error().message;
  GlGpuProfiler& prof = *prof_r.value();
  EXPECT_TRUE(prof.durations_only());
  prof.set_clock_mapper([](uint64_t t) -> std::optional<MappedTime> {
    return MappedTime{static_cast<int64_t>(t), 0};  // would map if anything had ticks
  });
  const uint64_t id = prof.current_frame_id();
  GlContext* s = ctx_.get();
  {
    LATLAB_GPU_ZONE(prof, s, "frame");
    {
      LATLAB_GPU_ZONE(prof, s, "simulate");
      work_->record_pass(4, 0);
    }
    {
      LATLAB_GPU_ZONE(prof, s, "lighting");
      LATLAB_GPU_ZONE(prof, s, "direct");
      work_->record_pass(8, 1);
    }
  }
  {
    LATLAB_GPU_ZONE(prof, s, "post");
    work_->record_pass(4, 2);
  }
  api().Finish();
  prof.retire_frame(id);
  prof.next_frame();
  const auto f = prof.frame(id);
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(f->durations_only);
  EXPECT_FALSE(f->host_mapped);
  ASSERT_EQ(f->zones.size(), 5u);
  for (const auto& z : f->zones) {
    const bool root = z.parent == kNoZone;
    EXPECT_EQ(z.status, root ? QueryStatus::ok : QueryStatus::overlapped)
        << z.name << " " << to_string(z.status);
    EXPECT_EQ(z.duration_ns > 0, root) << z.name;
    EXPECT_FALSE(z.host_mapped) << z.name;
    EXPECT_EQ(z.begin_ticks, 0u) << z.name << ": no device clock";
    EXPECT_EQ(z.end_ticks, 0u) << z.name;
  }
  const ProfilerCounters c = prof.counters();
  EXPECT_EQ(c.zones_ok, 2u);
  EXPECT_EQ(c.zones_overlapped, 3u);
  EXPECT_EQ(c.zones_invalid, 0u);
  const auto stats = prof.stats();
  for (const auto& st : stats) {
    EXPECT_EQ(st.frames, st.name == "frame" || st.name == "post" ? 1u : 0u) << st.name;
  }
}

TEST(GlTimerChoice, NamesParseAndTheEnvironmentPicksTheAutomaticTimer) {
  EXPECT_EQ(parse_gl_timer("auto"), GlTimer::automatic);
  EXPECT_EQ(parse_gl_timer("timestamp"), GlTimer::timestamp);
  EXPECT_EQ(parse_gl_timer("elapsed"), GlTimer::elapsed);
  EXPECT_FALSE(parse_gl_timer("GL_TIME_ELAPSED").has_value());
  // The variable is this process's: gone again whatever the test's outcome.
  struct UnsetAtEnd {
    ~UnsetAtEnd() { unsetenv("LATLAB_GL_TIMER"); }
  } unset_at_end;
  setenv("LATLAB_GL_TIMER", "sometimes", 1);
  auto bad =
      GlContext::create({.device = gl_test_device(), .api = GlApiKind::automatic, .debug = false});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("LATLAB_GL_TIMER"), std::string::npos) << bad.error().message;
  setenv("LATLAB_GL_TIMER", "elapsed", 1);
  auto ctx =
      GlContext::create({.device = gl_test_device(), .api = GlApiKind::automatic, .debug = false});
  if (!ctx) GTEST_SKIP() << "no GL context with timer queries here: " << ctx.error().message;
  EXPECT_TRUE(ctx.value()->durations_only());
  // An explicit timer is not overridden.
  auto ts = GlContext::create({.device = gl_test_device(),
                               .api = GlApiKind::automatic,
                               .debug = false,
                               .timer = GlTimer::timestamp});
  if (ts) {
    EXPECT_FALSE(ts.value()->durations_only());
  }
}

}  // namespace
}  // namespace latlab::test
