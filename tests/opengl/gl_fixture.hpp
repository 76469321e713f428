// Shared fixture for the OpenGL tests: an EGL context (llvmpipe on CI) with
// KHR_debug on; any GL error or high-severity debug message fails the test
// (checked in TearDown), the GL counterpart of the Vulkan validation layer.
// A machine where no GL context with timestamps can be created skips, with
// the reason. LATLAB_TEST_GL_DEVICE picks the EGL device (index or name).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "backends/opengl/gl_state.hpp"
#include "latlab/bench/gl_rig.hpp"
#include "latlab/opengl.hpp"

namespace latlab::test {

inline std::string gl_test_device() {
  const char* d = std::getenv("LATLAB_TEST_GL_DEVICE");
  return d != nullptr ? d : "";
}

class GlTest : public ::testing::Test {
 protected:
  void SetUp() override { open(GlApiKind::automatic); }

  void open(GlApiKind api, GlTimer timer = GlTimer::automatic) {
    check_debug();
    ctx_.reset();
    auto ctx =
        GlContext::create({.device = gl_test_device(), .api = api, .debug = true, .timer = timer});
    if (!ctx) GTEST_SKIP() << "no GL context with timer queries here: " << ctx.error().message;
    ctx_ = std::move(ctx.value());
    ASSERT_TRUE(ctx_->is_current());
  }

  void TearDown() override { check_debug(); }

  void check_debug() {
    if (!ctx_) return;
    if (ctx_->is_current()) ctx_->drain_gl_errors("end of test");
    std::string all;
    for (const auto& m : ctx_->debug_messages()) all += m + "\n";
    EXPECT_EQ(ctx_->debug_error_count(), 0u) << all;
  }

  const gl::Api& api() { return ctx_->state().api; }

  std::unique_ptr<GlContext> ctx_;
};

// One pass of a frame: its uid (empty: untimed) and complexity.
struct GlPass {
  std::string uid;
  uint32_t complexity = 1;
};

struct PassResult {
  std::string uid;
  bool got_offset = false;
  TimestampResult result;
};

struct FrameResult {
  uint64_t frame_id = 0;
  std::vector<PassResult> passes;
};

// Runs `frames` frames (ids 1..frames) of make_passes(frame) through the
// timestamp query pool with two frames in flight (a fence per frame). After a
// frame's fence it resolves the pool, retires the frame and collects that
// frame's per-uid results. `allocate_first`: every pass of a frame takes its
// pair before any is written (so a pool too small for a frame overflows
// whatever the device's speed).
inline std::vector<FrameResult> run_gl_frames(
    GlContext& ctx, GlWorkload& work, TimestampQueryPool& pool, uint32_t frames,
    const std::function<std::vector<GlPass>(uint64_t)>& make_passes, bool allocate_first = false) {
  constexpr uint32_t kInFlight = 2;
  const gl::Api& api = ctx.state().api;
  std::vector<FrameResult> out;
  std::vector<FrameResult> slot_frame(kInFlight);
  std::vector<GLsync> fences(kInFlight, nullptr);
  const auto finish = [&](uint32_t slot) {
    if (fences[slot] == nullptr) return;
    const GLenum r =
        api.ClientWaitSync(fences[slot], GL_SYNC_FLUSH_COMMANDS_BIT, 20'000'000'000ull);
    EXPECT_TRUE(r == GL_CONDITION_SATISFIED || r == GL_ALREADY_SIGNALED)
        << "frame " << slot_frame[slot].frame_id;
    api.DeleteSync(fences[slot]);
    fences[slot] = nullptr;
    (void)pool.resolve_queries_async();
    FrameResult& f = slot_frame[slot];
    pool.retire_frame(f.frame_id);
    for (auto& p : f.passes) p.result = pool.timestamp(p.uid);
    out.push_back(f);
  };
  for (uint64_t frame = 1; frame <= frames; ++frame) {
    const auto slot = static_cast<uint32_t>(frame % kInFlight);
    finish(slot);
    FrameResult f;
    f.frame_id = frame;
    const std::vector<GlPass> passes = make_passes(frame);
    std::vector<std::optional<uint32_t>> offsets(passes.size());
    for (size_t i = 0; i < passes.size() && allocate_first; ++i) {
      if (!passes[i].uid.empty())
        offsets[i] = pool.allocate_queries_for_context(passes[i].uid, frame);
    }
    for (size_t i = 0; i < passes.size(); ++i) {
      if (passes[i].uid.empty()) {
        work.record_pass(passes[i].complexity, static_cast<uint32_t>(i));
        continue;
      }
      if (!allocate_first) offsets[i] = pool.allocate_queries_for_context(passes[i].uid, frame);
      if (offsets[i]) pool.write_begin(&ctx, *offsets[i]);
      work.record_pass(passes[i].complexity, static_cast<uint32_t>(i));
      if (offsets[i]) pool.write_end(&ctx, *offsets[i]);
      f.passes.push_back({passes[i].uid, offsets[i].has_value(), {}});
    }
    slot_frame[slot] = f;
    fences[slot] = api.FenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    api.Flush();
  }
  for (uint64_t frame = frames + 1; frame <= frames + kInFlight; ++frame)
    finish(static_cast<uint32_t>(frame % kInFlight));
  return out;
}

inline int64_t fastest_ns(const std::vector<FrameResult>& frames, size_t pass) {
  int64_t best = std::numeric_limits<int64_t>::max();
  for (const auto& f : frames) {
    if (pass < f.passes.size() && f.passes[pass].result.ok())
      best = std::min(best, f.passes[pass].result.duration_ns);
  }
  return best;
}

// GL_TIMESTAMP is written once every command before it has completed, so
// the ok results, in frame and pass order, tile the timeline: each begins at
// or after the previous one's end. A result read from the wrong slot, frame
// or reuse breaks this whatever the machine's load.
inline void expect_results_in_submission_order(const std::vector<FrameResult>& frames) {
  const TimestampResult* prev = nullptr;
  std::string prev_uid;
  for (const auto& f : frames) {
    for (const auto& p : f.passes) {
      if (!p.result.ok()) continue;
      ASSERT_TRUE(p.result.has_ticks) << p.uid;
      EXPECT_LT(p.result.begin_ticks, p.result.end_ticks) << p.uid;
      if (prev != nullptr) {
        EXPECT_LE(prev->end_ticks, p.result.begin_ticks) << prev_uid << " then " << p.uid;
      }
      prev = &p.result;
      prev_uid = p.uid;
    }
  }
}

inline std::string pass_uid(uint32_t pass, uint64_t frame) {
  return "c:0:pass" + std::to_string(pass) + ":f" + std::to_string(frame);
}

}  // namespace latlab::test
