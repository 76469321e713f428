// The GPU profiler on Vulkan (lavapipe on CI) with the validation layer on:
// nested zones around real dispatches, frames in flight, several recording
// threads, overflow, host timeline.
#include <atomic>
#include <thread>
#include <vector>

#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_trace.hpp"
#include "latlab/profiler_vulkan.hpp"
#include "vulkan/vulkan_fixture.hpp"

namespace latlab::test {
namespace {

// A command pool with one primary command buffer and a fence: what each
// recording thread owns.
struct Recorder {
  VkDevice device = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;

  explicit Recorder(const VulkanContext& ctx) : device(ctx.device()) {
    VkCommandPoolCreateInfo pi{};
    pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pi.queueFamilyIndex = ctx.queue_family();
    EXPECT_EQ(vkCreateCommandPool(device, &pi, nullptr, &pool), VK_SUCCESS);
    VkCommandBufferAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    EXPECT_EQ(vkAllocateCommandBuffers(device, &ai, &cmd), VK_SUCCESS);
    VkFenceCreateInfo fi{};
    fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    EXPECT_EQ(vkCreateFence(device, &fi, nullptr, &fence), VK_SUCCESS);
  }
  ~Recorder() {
    vkDestroyFence(device, fence, nullptr);
    vkDestroyCommandPool(device, pool, nullptr);
  }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  void begin() {
    vkResetCommandBuffer(cmd, 0);
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    ASSERT_EQ(vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);
  }
  void end_and_submit(const VulkanContext& ctx) {
    ASSERT_EQ(vkEndCommandBuffer(cmd), VK_SUCCESS);
    vkResetFences(device, 1, &fence);
    auto r = ctx.submit(cmd, fence);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  void wait() { ASSERT_EQ(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS); }
};

class ProfilerVulkanTest : public VulkanTest {
 protected:
  void make(GpuProfilerDesc desc = {.max_zones_per_frame = 64}) {
    auto w = VulkanTimestampSlots::create(
        *ctx_, {.count = GpuProfiler::slots_needed(desc), .require_host_reset = true});
    ASSERT_TRUE(w) << w.error().message;
    writer_ = w.value();
    auto p = VulkanGpuProfiler::create(writer_, desc);
    ASSERT_TRUE(p) << p.error().message;
    prof_ = std::move(p.value());
    auto work = VulkanComputeWorkload::create(*ctx_, {32, 32});
    ASSERT_TRUE(work) << work.error().message;
    work_ = std::move(work.value());
  }
  void TearDown() override {
    if (ctx_) vkDeviceWaitIdle(ctx_->device());
    prof_.reset();
    writer_.reset();
    work_.reset();
    VulkanTest::TearDown();
  }
  // Frames whose results are collected before the app waits their fences.
  void collect_every_frame_before_its_fence_wait(uint32_t in_flight);

  // A reference frame: frame{simulate, lighting{direct, indirect}}.
  void record_frame(VkCommandBuffer cmd) {
    LATLAB_GPU_ZONE(prof_, cmd, "frame");
    {
      LATLAB_GPU_ZONE(prof_, cmd, "simulate");
      work_->record_pass(cmd, 4, 0);
    }
    {
      LATLAB_GPU_ZONE(prof_, cmd, "lighting");
      {
        LATLAB_GPU_ZONE(prof_, cmd, "direct");
        work_->record_pass(cmd, 8, 1);
      }
      {
        LATLAB_GPU_ZONE(prof_, cmd, "indirect");
        work_->record_pass(cmd, 4, 2);
      }
    }
  }

  std::shared_ptr<VulkanTimestampSlots> writer_;
  std::unique_ptr<VulkanGpuProfiler> prof_;
  std::unique_ptr<VulkanComputeWorkload> work_;
};

const ProfilerZone* find(const ProfilerFrame& f, std::string_view name) {
  for (const auto& z : f.zones) {
    if (z.name == name) return &z;
  }
  return nullptr;
}

TEST_F(ProfilerVulkanTest, ChildrenLieInsideTheirParents) {
  ASSERT_NO_FATAL_FAILURE(make());
  Recorder rec(*ctx_);
  ASSERT_NO_FATAL_FAILURE(rec.begin());
  record_frame(rec.cmd);
  ASSERT_NO_FATAL_FAILURE(rec.end_and_submit(*ctx_));
  ASSERT_NO_FATAL_FAILURE(rec.wait());
  prof_->next_frame();
  const auto f = prof_->frame(0);
  ASSERT_TRUE(f.has_value());
  ASSERT_EQ(f->zones.size(), 5u);
  for (const auto& z : f->zones) {
    ASSERT_EQ(z.status, QueryStatus::ok) << z.name;
    if (z.parent == kNoZone) continue;
    const auto& p = f->zones[z.parent];
    EXPECT_GE(z.begin_ticks, p.begin_ticks) << z.name << " in " << p.name;
    EXPECT_LE(z.end_ticks, p.end_ticks) << z.name << " in " << p.name;
  }
  EXPECT_EQ(find(*f, "direct")->depth, 2u);
  EXPECT_GT(find(*f, "direct")->duration_ns, 0);
  EXPECT_GT(find(*f, "frame")->duration_ns, find(*f, "lighting")->duration_ns);
  EXPECT_EQ(writer_->read_errors(), 0u);
  const std::string tree = format_frame_tree("vulkan", *f);
  EXPECT_NE(tree.find("indirect"), std::string::npos) << tree;
}

TEST_F(ProfilerVulkanTest, FramesInFlightAreCollectedWithoutWaiting) {
  ASSERT_NO_FATAL_FAILURE(make({.max_zones_per_frame = 64, .frames_in_flight = 3}));
  constexpr int kFrames = 12;
  constexpr int kInFlight = 3;
  std::vector<std::unique_ptr<Recorder>> ring;
  for (int i = 0; i < kInFlight; ++i) ring.push_back(std::make_unique<Recorder>(*ctx_));
  std::vector<bool> in_flight(kInFlight, false);
  for (int frame = 0; frame < kFrames; ++frame) {
    Recorder& r = *ring[frame % kInFlight];
    if (in_flight[frame % kInFlight]) {
      ASSERT_NO_FATAL_FAILURE(r.wait());  // the app's fence wait
    }
    ASSERT_NO_FATAL_FAILURE(r.begin());
    record_frame(r.cmd);
    ASSERT_NO_FATAL_FAILURE(r.end_and_submit(*ctx_));
    in_flight[frame % kInFlight] = true;
    prof_->next_frame();  // collects whatever is ready; never waits for a fence
  }
  for (int i = 0; i < kInFlight; ++i) {
    if (in_flight[i]) {
      ASSERT_NO_FATAL_FAILURE(ring[i]->wait());
    }
  }
  prof_->collect();
  const ProfilerCounters c = prof_->counters();
  EXPECT_EQ(c.frames_collected, static_cast<uint64_t>(kFrames));
  EXPECT_EQ(c.zones_ok, static_cast<uint64_t>(kFrames) * 5u);
  EXPECT_EQ(c.zones_dropped, 0u);
  EXPECT_EQ(c.frames_without_queries, 0u);
  const auto stats = prof_->stats();
  ASSERT_EQ(stats.size(), 5u);
  for (const auto& s : stats) {
    EXPECT_EQ(s.frames, static_cast<uint32_t>(kFrames)) << s.name;
    EXPECT_GT(s.avg_ms, 0.0) << s.name;
    EXPECT_LE(s.min_ms, s.p95_ms);
    EXPECT_LE(s.p95_ms, s.max_ms);
  }
}

// A fast GPU: a frame's results are all available (and collected) before the
// app waits for its fence. When its queries are written again, the validation
// layer must see them reset after that wait: Vulkan-ValidationLayers #2521
// retires a submission's query states at the fence wait, over a host reset
// made before it (lavapipe is too slow to show it; a fast GPU does).
void ProfilerVulkanTest::collect_every_frame_before_its_fence_wait(uint32_t in_flight) {
  const int ring_size = static_cast<int>(in_flight);
  ASSERT_NO_FATAL_FAILURE(make({.max_zones_per_frame = 64, .frames_in_flight = in_flight}));
  std::vector<std::unique_ptr<Recorder>> ring;
  for (int i = 0; i < ring_size; ++i) ring.push_back(std::make_unique<Recorder>(*ctx_));
  constexpr uint64_t kFrames = 10;  // in_flight + 1 frame slots, each reused
  for (uint64_t frame = 0; frame < kFrames; ++frame) {
    Recorder& r = *ring[frame % ring_size];
    if (frame >= static_cast<uint64_t>(ring_size)) {
      ASSERT_NO_FATAL_FAILURE(r.wait());  // the fence of frame - in_flight
    }
    ASSERT_NO_FATAL_FAILURE(r.begin());
    record_frame(r.cmd);
    ASSERT_NO_FATAL_FAILURE(r.end_and_submit(*ctx_));
    prof_->next_frame();  // closes this frame
    // Collect it without touching any fence.
    const int64_t give_up = host_now_ns() + 10'000'000'000;
    while (prof_->counters().frames_collected < frame + 1 && host_now_ns() < give_up) {
      std::this_thread::yield();
      prof_->collect();
    }
    ASSERT_EQ(prof_->counters().frames_collected, frame + 1) << "frame " << frame;
  }
  for (int i = 0; i < ring_size; ++i) {
    ASSERT_NO_FATAL_FAILURE(ring[i]->wait());
  }
  const ProfilerCounters c = prof_->counters();
  EXPECT_EQ(c.frames_collected, kFrames);
  EXPECT_EQ(c.zones_ok, kFrames * 5u);
  EXPECT_EQ(c.zones_invalid, 0u);
  EXPECT_EQ(c.frames_without_queries, 0u);
  // TearDown fails the test on any validation error (QueryNotReset).
}

TEST_F(ProfilerVulkanTest, QueriesCollectedBeforeTheFenceWaitAreResetForTheirNextUse) {
  collect_every_frame_before_its_fence_wait(1);
}

TEST_F(ProfilerVulkanTest, QueriesCollectedBeforeTheFenceWaitAreResetForTheirNextUseThreeInFlight) {
  collect_every_frame_before_its_fence_wait(3);
}

TEST_F(ProfilerVulkanTest, SeveralThreadsRecordIntoTheirOwnCommandBuffers) {
  ASSERT_NO_FATAL_FAILURE(make({.max_zones_per_frame = 256}));
  constexpr int kThreads = 3;
  constexpr int kFrames = 4;
  std::vector<std::unique_ptr<Recorder>> recs;
  for (int i = 0; i < kThreads; ++i) recs.push_back(std::make_unique<Recorder>(*ctx_));
  for (int frame = 0; frame < kFrames; ++frame) {
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        Recorder& r = *recs[t];
        r.begin();
        for (int i = 0; i < 10; ++i) {
          LATLAB_GPU_ZONE(prof_, r.cmd, "thread_pass");
          LATLAB_GPU_ZONE(prof_, r.cmd, "thread_subpass");
        }
        if (vkEndCommandBuffer(r.cmd) != VK_SUCCESS) failures.fetch_add(1);
      });
    }
    for (auto& th : threads) th.join();
    ASSERT_EQ(failures.load(), 0);
    for (auto& r : recs) {
      vkResetFences(ctx_->device(), 1, &r->fence);
      auto s = ctx_->submit(r->cmd, r->fence);
      ASSERT_TRUE(s.ok()) << s.error().message;
    }
    for (auto& r : recs) ASSERT_NO_FATAL_FAILURE(r->wait());
    prof_->next_frame();
  }
  const ProfilerCounters c = prof_->counters();
  EXPECT_EQ(c.frames_collected, static_cast<uint64_t>(kFrames));
  EXPECT_EQ(c.zones_ok, static_cast<uint64_t>(kFrames * kThreads * 20));
  const auto f = prof_->latest_frame();
  ASSERT_TRUE(f.has_value());
  for (const auto& z : f->zones) {
    if (z.parent == kNoZone) {
      EXPECT_EQ(std::string_view(z.name), "thread_pass");
      continue;
    }
    const auto& p = f->zones[z.parent];
    EXPECT_EQ(p.thread, z.thread);
    EXPECT_GE(z.begin_ticks, p.begin_ticks);
    EXPECT_LE(z.end_ticks, p.end_ticks);
  }
}

TEST_F(ProfilerVulkanTest, OverflowDropsZonesAndWritesNothingForThem) {
  ASSERT_NO_FATAL_FAILURE(make({.max_zones_per_frame = 2}));
  Recorder rec(*ctx_);
  ASSERT_NO_FATAL_FAILURE(rec.begin());
  record_frame(rec.cmd);  // 5 zones, room for 2
  ASSERT_NO_FATAL_FAILURE(rec.end_and_submit(*ctx_));
  ASSERT_NO_FATAL_FAILURE(rec.wait());
  prof_->next_frame();
  const auto f = prof_->frame(0);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->zones.size(), 2u);
  EXPECT_EQ(f->zones_dropped, 3u);
  for (const auto& z : f->zones) EXPECT_TRUE(z.ok()) << z.name;
}

TEST_F(ProfilerVulkanTest, ZonesLandOnTheHostTimelineBetweenSubmitAndFence) {
  ASSERT_NO_FATAL_FAILURE(make());
  auto pair = ctx_->sample_calibration();
  ASSERT_TRUE(pair) << pair.error().message;
  const CalibrationPair cp = pair.value();
  const TickFormat tf = ctx_->tick_format();
  // Offset-only mapping through one fresh pair (the run is milliseconds long).
  prof_->set_clock_mapper([cp, tf](uint64_t t) -> std::optional<MappedTime> {
    const uint64_t fwd = tf.elapsed_ticks(cp.device_ticks, t);
    const int64_t d = fwd <= (tf.mask() >> 1)
                          ? tf.ticks_to_ns(fwd)
                          : -tf.ticks_to_ns(tf.elapsed_ticks(t, cp.device_ticks));
    return MappedTime{cp.host_ns + d, cp.max_deviation_ns};
  });
  Recorder rec(*ctx_);
  ASSERT_NO_FATAL_FAILURE(rec.begin());
  record_frame(rec.cmd);
  ASSERT_NO_FATAL_FAILURE(rec.end_and_submit(*ctx_));
  ASSERT_NO_FATAL_FAILURE(rec.wait());
  const int64_t fence_seen = host_now_ns();
  prof_->next_frame();
  const auto f = prof_->frame(0);
  ASSERT_TRUE(f && f->host_mapped);
  // Slack: the pair's deviation plus 1 ms for the calibration's own error.
  const int64_t slack = f->map_error_ns + 1'000'000;
  const int64_t record_start = f->cpu_begin_ns;
  for (const auto& z : f->zones) {
    ASSERT_TRUE(z.host_mapped) << z.name;
    EXPECT_GE(z.gpu_begin_host_ns, record_start - slack) << z.name;
    EXPECT_LE(z.gpu_end_host_ns, fence_seen + slack) << z.name;
    EXPECT_LE(z.gpu_begin_host_ns, z.gpu_end_host_ns) << z.name;
  }
}

// CPU and GPU zones on one timeline: a CPU zone around the submit begins
// before the GPU work it submits, mapped through a calibration pair (within
// the pair's error bound), and both land in one trace.
TEST_F(ProfilerVulkanTest, CpuZoneAroundASubmitPrecedesItsGpuZone) {
  ASSERT_NO_FATAL_FAILURE(make());
  auto pair = ctx_->sample_calibration();
  ASSERT_TRUE(pair) << pair.error().message;
  const CalibrationPair cp = pair.value();
  const TickFormat tf = ctx_->tick_format();
  prof_->set_clock_mapper([cp, tf](uint64_t t) -> std::optional<MappedTime> {
    const uint64_t fwd = tf.elapsed_ticks(cp.device_ticks, t);
    const int64_t d = fwd <= (tf.mask() >> 1)
                          ? tf.ticks_to_ns(fwd)
                          : -tf.ticks_to_ns(tf.elapsed_ticks(t, cp.device_ticks));
    return MappedTime{cp.host_ns + d, cp.max_deviation_ns};
  });
  Recorder rec(*ctx_);
  ASSERT_NO_FATAL_FAILURE(rec.begin());
  record_frame(rec.cmd);
  {
    LATLAB_CPU_ZONE(prof_, "submit");
    ASSERT_NO_FATAL_FAILURE(rec.end_and_submit(*ctx_));
  }
  ASSERT_NO_FATAL_FAILURE(rec.wait());
  prof_->next_frame();
  const auto f = prof_->frame(0);
  ASSERT_TRUE(f && f->host_mapped);
  const ProfilerZone* submit = nullptr;
  const ProfilerZone* frame = nullptr;
  for (const auto& z : f->zones) {
    if (z.cpu && z.name == std::string_view("submit")) submit = &z;
    if (!z.cpu && z.name == std::string_view("frame")) frame = &z;
  }
  ASSERT_TRUE(submit && frame);
  ASSERT_TRUE(frame->host_mapped);
  EXPECT_LE(submit->cpu_begin_ns, frame->gpu_begin_host_ns + f->map_error_ns)
      << "the GPU began " << submit->cpu_begin_ns - frame->gpu_begin_host_ns
      << " ns before the submit (error bound " << f->map_error_ns << " ns)";
  ChromeTrace trace;
  trace.add_frame("graphics", *f);
  const std::string json = trace.to_json();
  const size_t cpu_at = json.find("\"name\":\"submit\",\"cat\":\"cpu\"");
  const size_t gpu_at = json.find("\"name\":\"frame\",\"cat\":\"gpu\"");
  EXPECT_NE(cpu_at, std::string::npos) << json;
  EXPECT_NE(gpu_at, std::string::npos) << json;
}

}  // namespace
}  // namespace latlab::test
