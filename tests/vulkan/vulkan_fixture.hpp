// Shared fixture for the Vulkan tests: a context with the Khronos validation
// layer on; any validation error fails the test (checked in TearDown).
// LATLAB_TEST_VULKAN_DEVICE picks the device (index or name substring);
// default: the context's default device (lavapipe on CI).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/vulkan.hpp"

namespace latlab::test {

inline std::string test_device() {
  const char* d = std::getenv("LATLAB_TEST_VULKAN_DEVICE");
  return d != nullptr ? d : "";
}

class VulkanTest : public ::testing::Test {
 protected:
  void SetUp() override { open({}); }

  // (Re)opens the context with validation on; `desc.device` defaults to test_device().
  void open(VulkanContextDesc desc) {
    desc.validation = true;
    if (desc.device.empty()) desc.device = test_device();
    check_validation();
    ctx_.reset();
    auto ctx = VulkanContext::create(desc);
    ASSERT_TRUE(ctx) << ctx.error().message;
    ctx_ = std::move(ctx.value());
  }

  void TearDown() override { check_validation(); }

  void check_validation() {
    if (!ctx_) return;
    std::string all;
    for (const auto& m : ctx_->validation_messages()) all += m + "\n";
    EXPECT_EQ(ctx_->validation_error_count(), 0u) << all;
  }

  std::unique_ptr<VulkanContext> ctx_;
};

// What one pass of one frame gave.
struct PassResult {
  std::string uid;
  bool got_offset = false;
  TimestampResult result;
};

struct FrameResult {
  uint64_t frame_id = 0;
  std::vector<PassResult> passes;
};

// Runs `frames` frames (ids 1..frames) of make_passes(frame) with two frames
// in flight. After a frame's fence it resolves the pool and retires the
// frame, then collects that frame's per-uid results.
// `Work` is VulkanComputeWorkload or VulkanFragmentWorkload.
template <class Work>
std::vector<FrameResult> run_frames(
    VulkanContext& ctx, Work& work, TimestampQueryPool& pool, uint32_t frames,
    const std::function<std::vector<WorkloadPass>(uint64_t)>& make_passes) {
  constexpr uint32_t kInFlight = 2;
  auto ring_r = VulkanFrameRing::create(ctx, kInFlight);
  if (!ring_r) {
    ADD_FAILURE() << ring_r.error().message;
    return {};
  }
  auto& ring = *ring_r.value();
  std::vector<FrameResult> out;
  std::vector<FrameResult> slot_frame(kInFlight);
  const auto finish = [&](uint32_t slot) -> bool {
    if (!ring.in_flight(slot)) return true;
    auto w = ring.wait(slot);
    if (!w || !*w) {
      ADD_FAILURE() << "fence wait failed";
      return false;
    }
    (void)pool.resolve_queries_async();
    FrameResult& f = slot_frame[slot];
    pool.retire_frame(f.frame_id);
    for (auto& p : f.passes) p.result = pool.timestamp(p.uid);
    out.push_back(f);
    return true;
  };
  for (uint64_t frame = 1; frame <= frames; ++frame) {
    const auto slot = static_cast<uint32_t>(frame % kInFlight);
    if (!finish(slot)) return out;
    auto cmd = ring.begin(slot);
    if (!cmd) {
      ADD_FAILURE() << cmd.error().message;
      return out;
    }
    const auto passes = make_passes(frame);
    const auto offsets = work.record(*cmd, passes, frame, &pool);
    FrameResult f;
    f.frame_id = frame;
    for (size_t i = 0; i < passes.size(); ++i)
      f.passes.push_back({passes[i].uid, offsets[i].has_value(), {}});
    slot_frame[slot] = f;
    if (auto s = ring.submit(slot); !s) {
      ADD_FAILURE() << s.error().message;
      return out;
    }
  }
  for (uint64_t frame = frames + 1; frame <= frames + kInFlight; ++frame) {
    if (!finish(static_cast<uint32_t>(frame % kInFlight))) break;
  }
  return out;
}

// The shortest ok duration of pass `pass` over all frames. On a CPU device
// (lavapipe) other work on the machine only ever adds time, so comparing the
// fastest frames of two passes is what survives a busy CI machine; a
// per-frame or median comparison failed there.
inline int64_t fastest_ns(const std::vector<FrameResult>& frames, size_t pass) {
  int64_t best = std::numeric_limits<int64_t>::max();
  for (const auto& f : frames) {
    if (pass < f.passes.size() && f.passes[pass].result.ok())
      best = std::min(best, f.passes[pass].result.duration_ns);
  }
  return best;
}

// One queue runs the frames' passes one after the other (each pass starts
// behind a barrier on the previous pass's writes, across submissions too), so
// the ok results, taken in frame and pass order, must tile the timeline: each
// begins at or after the previous one's end. A result read from the wrong slot, frame or
// reuse breaks this whatever the machine's load.
inline void expect_results_in_submission_order(const std::vector<FrameResult>& frames) {
  const TimestampResult* prev = nullptr;
  std::string prev_uid;
  for (const auto& f : frames) {
    for (const auto& p : f.passes) {
      if (!p.result.ok()) continue;
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
