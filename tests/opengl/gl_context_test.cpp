// The EGL context without a window: device report, KHR_debug, calibration pairs.
#include <thread>

#include "latlab/host_clock.hpp"
#include "opengl/gl_fixture.hpp"

namespace latlab::test {
namespace {

TEST_F(GlTest, ReportsRendererVersionAndTimestampBits) {
  const GlDeviceReport& r = ctx_->report();
  EXPECT_FALSE(r.renderer.empty());
  EXPECT_FALSE(r.version.empty());
  EXPECT_TRUE(r.timer_query);
  EXPECT_GT(r.timestamp_bits, 0);
  EXPECT_LE(r.timestamp_bits, 64);
  EXPECT_EQ(ctx_->tick_format().valid_bits, static_cast<uint32_t>(r.timestamp_bits));
  // Desktop GL has no disjoint signal: it is listed missing, with the reason.
  const bool listed = std::any_of(r.missing.begin(), r.missing.end(),
                                  [](const MissingCapability& m) { return m.name == "disjoint_detection"; });
  EXPECT_EQ(listed, !r.disjoint_signal);
}

TEST(GlDevices, EnumerationListsEveryEglDeviceWithAReason) {
  auto devices = enumerate_gl_devices();
  if (!devices) GTEST_SKIP() << "EGL unusable here: " << devices.error().message;
  ASSERT_FALSE(devices->empty());
  for (const auto& d : *devices) {
    // Either a probed context, or why not.
    if (d.renderer.empty()) {
      ASSERT_FALSE(d.missing.empty());
      EXPECT_EQ(d.missing.front().name, "context");
    } else {
      EXPECT_FALSE(d.version.empty()) << d.renderer;
    }
  }
}

TEST_F(GlTest, KhrDebugCatchesAGlError) {
  if (!ctx_->report().khr_debug) GTEST_SKIP() << "no KHR_debug on " << ctx_->report().renderer;
  // A deliberate error (an invalid buffer target: GL_INVALID_ENUM) must be
  // seen, or the checker of every other test proves nothing.
  api().BindBuffer(0x1234u, 0);
  EXPECT_EQ(api().GetError(), static_cast<GLenum>(GL_INVALID_ENUM));
  EXPECT_GE(ctx_->debug_error_count(), 1u);
  ctx_.reset();  // this test's error is expected
}

TEST_F(GlTest, CalibrationPairsAreBracketedAndAdvance) {
  auto a = ctx_->sample_calibration();
  ASSERT_TRUE(a) << a.error().message;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto b = ctx_->sample_calibration();
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_TRUE(a->estimated);
  EXPECT_GE(a->max_deviation_ns, 0);
  EXPECT_LT(a->max_deviation_ns, 50'000'000) << "a bracket is one driver call, not a frame";
  // 20 ms later on both clocks: the GPU clock advanced by about as much as
  // the host's (within both brackets and a generous 5% rate tolerance).
  const double host = static_cast<double>(b->host_ns - a->host_ns);
  const double dev = static_cast<double>(ctx_->tick_format().span_ns(a->device_ticks, b->device_ticks));
  EXPECT_NEAR(dev, host, 0.05 * host + static_cast<double>(a->max_deviation_ns + b->max_deviation_ns));
}

TEST_F(GlTest, CalibrationRunsOnAnyThreadWhileTheContextIsCurrentHere) {
  Result<CalibrationPair> other = make_error("not run");
  std::thread t([&] { other = ctx_->sample_calibration(); });
  t.join();
  ASSERT_TRUE(other) << other.error().message;
  EXPECT_TRUE(ctx_->is_current()) << "the frame context stays current on its thread";
}

TEST_F(GlTest, AnotherThreadCannotTakeTheContextWhileItIsCurrentHere) {
  Result<void> r;
  std::thread t([&] { r = ctx_->make_current(); });
  t.join();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("current on another thread"), std::string::npos) << r.error().message;
  ctx_->release_current();
  std::thread t2([&] {
    r = ctx_->make_current();
    ctx_->release_current();
  });
  t2.join();
  EXPECT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(ctx_->make_current());
}

TEST_F(GlTest, GlesContextHasTheDisjointSignal) {
  ASSERT_NO_FATAL_FAILURE(open(GlApiKind::gles));
  if (!ctx_) return;
  EXPECT_TRUE(ctx_->gles());
  const GlDeviceReport& r = ctx_->report();
  EXPECT_EQ(r.api, "OpenGL ES");
  EXPECT_TRUE(r.disjoint_signal) << "GLES timestamps come from GL_EXT_disjoint_timer_query";
  EXPECT_GT(r.timestamp_bits, 0);
}

// The GLES tests (GlPoolModes gles*) rely on the fixture's KHR_debug check
// there too: a deliberate error must reach it on a GLES context.
TEST_F(GlTest, KhrDebugCatchesAGlErrorOnGles) {
  ASSERT_NO_FATAL_FAILURE(open(GlApiKind::gles));
  if (!ctx_) return;
  if (!ctx_->report().khr_debug) GTEST_SKIP() << "no KHR_debug on GLES " << ctx_->report().renderer;
  api().BindBuffer(0x1234u, 0);
  EXPECT_EQ(api().GetError(), static_cast<GLenum>(GL_INVALID_ENUM));
  EXPECT_GE(ctx_->debug_error_count(), 1u);
  ctx_.reset();  // this test's error is expected
}

TEST(GlContextErrors, ANameThatMatchesNothingFailsWithTheDevices) {
  auto ctx = GlContext::create({.device = "no-such-gpu-xyz", .api = GlApiKind::automatic, .debug = false});
  ASSERT_FALSE(ctx);
  EXPECT_NE(ctx.error().message.find("no-such-gpu-xyz"), std::string::npos) << ctx.error().message;
}

}  // namespace
}  // namespace latlab::test
