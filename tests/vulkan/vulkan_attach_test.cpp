// latlab attached to a device the test makes itself, as a program would:
// its own instance, debug messenger and device, with neither host query
// reset nor calibrated timestamps enabled unless a test asks. The
// validation layer is on; any validation error fails the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <string>
#include <vector>

#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/clock_sync.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_vulkan.hpp"
#include "temp_dir.hpp"
#include "vulkan/program_device.hpp"
#include "vulkan/vulkan_fixture.hpp"

namespace latlab::test {
namespace {

bool has_missing(const VulkanCapabilities& caps, const std::string& name) {
  return std::any_of(caps.missing.begin(), caps.missing.end(),
                     [&](const MissingCapability& m) { return m.name == name; });
}

std::string missing_reason(const VulkanCapabilities& caps, const std::string& name) {
  for (const auto& m : caps.missing) {
    if (m.name == name) return m.reason;
  }
  return "";
}

class VulkanAttachTest : public ::testing::Test {
 protected:
  // The program's device; false (with a skip) where there is none.
  bool open(ProgramDeviceDesc desc = {}) {
    desc.device = test_device();
    std::string error;
    program_ = ProgramDevice::create(desc, error);
    if (!program_) {
      skip_ = error;
      return false;
    }
    return true;
  }
  void TearDown() override {
    if (program_) {
      vkDeviceWaitIdle(program_->device);
      EXPECT_EQ(program_->validation_errors(), 0u) << program_->validation_messages();
    }
  }

  // A buffer the test fills to give a zone work (device-local, transfer dst).
  struct Buffer {
    VkDevice device = VK_NULL_HANDLE;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    ~Buffer() {
      if (buffer != VK_NULL_HANDLE) vkDestroyBuffer(device, buffer, nullptr);
      if (memory != VK_NULL_HANDLE) vkFreeMemory(device, memory, nullptr);
    }
  };
  void make_buffer(Buffer& b, VkDeviceSize size) {
    b.device = program_->device;
    VkBufferCreateInfo bci{};
    bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bci.size = size;
    bci.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    ASSERT_EQ(vkCreateBuffer(b.device, &bci, nullptr, &b.buffer), VK_SUCCESS);
    VkMemoryRequirements req{};
    vkGetBufferMemoryRequirements(b.device, b.buffer, &req);
    VkPhysicalDeviceMemoryProperties mem{};
    vkGetPhysicalDeviceMemoryProperties(program_->physical, &mem);
    uint32_t type = 0;
    while (type < mem.memoryTypeCount && (req.memoryTypeBits & (1u << type)) == 0) ++type;
    ASSERT_LT(type, mem.memoryTypeCount);
    VkMemoryAllocateInfo mai{};
    mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = type;
    ASSERT_EQ(vkAllocateMemory(b.device, &mai, nullptr, &b.memory), VK_SUCCESS);
    ASSERT_EQ(vkBindBufferMemory(b.device, b.buffer, b.memory, 0), VK_SUCCESS);
  }

  std::unique_ptr<ProgramDevice> program_;
  std::string skip_;
};

#define OPEN_OR_SKIP(...)                          \
  do {                                             \
    if (!open(__VA_ARGS__)) GTEST_SKIP() << skip_; \
  } while (0)

TEST_F(VulkanAttachTest, ReportsWhatTheProgramDidNotEnableWithReasons) {
  OPEN_OR_SKIP();
  auto dev = VulkanAttachment::create(program_->attach_desc());
  ASSERT_TRUE(dev) << dev.error().message;
  const VulkanCapabilities& caps = (*dev)->capabilities();
  EXPECT_TRUE(caps.timestamps);
  EXPECT_FALSE(caps.host_query_reset);
  EXPECT_FALSE(caps.calibrated_timestamps);
  EXPECT_EQ((*dev)->reset_query_pool_fn(), nullptr);
  // Neither calibrated timestamps nor a queue: no calibration, with why.
  EXPECT_TRUE(caps.calibration_method.empty());
  EXPECT_NE(missing_reason(caps, "calibration").find("no queue was handed"), std::string::npos);
  const Result<CalibrationPair> pair = (*dev)->sample_calibration();
  ASSERT_FALSE(pair);
  EXPECT_NE(pair.error().message.find("no queue was handed"), std::string::npos)
      << pair.error().message;
  const auto clock = start_clock_sync(**dev);
  EXPECT_FALSE(clock->available());
  EXPECT_NE(clock->reason().find("no queue was handed"), std::string::npos) << clock->reason();
  EXPECT_FALSE(clock->mapper()(12345).has_value());
  // Host query reset the device offers but the program did not enable.
  if ((*dev)->report().host_query_reset) {
    EXPECT_NE(missing_reason(caps, "host_query_reset").find("not enabled at vkCreateDevice"),
              std::string::npos);
  }
  EXPECT_NEAR((*dev)->tick_format().period_ns(), (*dev)->report().timestamp_period_ns,
              1e-6 * (*dev)->report().timestamp_period_ns);
}

TEST_F(VulkanAttachTest, WishesNameWhatTheDeviceOffers) {
  OPEN_OR_SKIP();
  VulkanAttachDesc d = program_->attach_desc();
  auto wishes = vulkan_attach_wishes(d);
  ASSERT_TRUE(wishes) << wishes.error().message;
  auto dev = VulkanAttachment::create(d);
  ASSERT_TRUE(dev) << dev.error().message;
  const VulkanDeviceReport& r = (*dev)->report();
  EXPECT_EQ(wishes->host_query_reset, r.host_query_reset);
  const bool wants_calibrated =
      std::any_of(wishes->extensions.begin(), wishes->extensions.end(), [](const char* e) {
        return std::string(e).find("calibrated_timestamps") != std::string::npos;
      });
  EXPECT_EQ(wants_calibrated, r.calibrated_timestamps);
  EXPECT_EQ(wishes->host_query_reset_features.hostQueryReset, VK_TRUE);
  EXPECT_EQ(wishes->host_query_reset_features.pNext, nullptr);
}

TEST_F(VulkanAttachTest, EnabledFeaturesAreReadFromTheCreateInfo) {
  const char* calibrated = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
  VkPhysicalDeviceVulkan12Features v12{};
  v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  v12.hostQueryReset = VK_TRUE;
  VkDeviceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  VulkanAttachDesc d;
  d.host_query_reset = true;
  d.calibrated_timestamps = true;
  vulkan_attach_enabled(info, d);
  EXPECT_FALSE(d.host_query_reset);
  EXPECT_FALSE(d.calibrated_timestamps);
  info.pNext = &v12;
  info.enabledExtensionCount = 1;
  info.ppEnabledExtensionNames = &calibrated;
  vulkan_attach_enabled(info, d);
  EXPECT_TRUE(d.host_query_reset);
  EXPECT_TRUE(d.calibrated_timestamps);
  VkPhysicalDeviceHostQueryResetFeatures reset{};
  reset.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES;
  reset.hostQueryReset = VK_FALSE;
  info.pNext = &reset;
  info.enabledExtensionCount = 0;
  vulkan_attach_enabled(info, d);
  EXPECT_FALSE(d.host_query_reset);
  EXPECT_FALSE(d.calibrated_timestamps);
}

TEST_F(VulkanAttachTest, BadDescriptionsAreErrors) {
  OPEN_OR_SKIP();
  VulkanAttachDesc d = program_->attach_desc();
  d.device = VK_NULL_HANDLE;
  EXPECT_FALSE(VulkanAttachment::create(d));
  d = program_->attach_desc();
  d.queue = program_->queue;  // a queue without the program's lock
  const auto no_lock = VulkanAttachment::create(d);
  ASSERT_FALSE(no_lock);
  EXPECT_NE(no_lock.error().message.find("queue_lock"), std::string::npos);
  d = program_->attach_desc();
  d.queue_family = 1000;
  const auto bad_family = VulkanAttachment::create(d);
  ASSERT_FALSE(bad_family);
  EXPECT_NE(bad_family.error().message.find("queue family 1000"), std::string::npos);
}

// The program's own entry points are used (volk or a dispatch of its own).
std::atomic<int> g_device_lookups{0};
VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL counting_gdpa(VkDevice device, const char* name) {
  ++g_device_lookups;
  return vkGetDeviceProcAddr(device, name);
}

TEST_F(VulkanAttachTest, UsesTheProgramsDeviceProcAddr) {
  OPEN_OR_SKIP();
  VulkanAttachDesc d = program_->attach_desc();
  d.get_device_proc_addr = &counting_gdpa;
  g_device_lookups = 0;
  auto dev = VulkanAttachment::create(d);
  ASSERT_TRUE(dev) << dev.error().message;
  EXPECT_GE(g_device_lookups.load(), 10);
}

// Zones on a device without host query reset: the queries a frame reuses are
// reset in the program's command buffer (new_frame), every zone gets its
// time, and the validation layer sees nothing wrong (no query written
// before its reset, none reset while in use).
TEST_F(VulkanAttachTest, ZonesWithResetsInTheProgramsCommandBuffer) {
  OPEN_OR_SKIP();
  auto dev = VulkanAttachment::create(program_->attach_desc());
  ASSERT_TRUE(dev) << dev.error().message;
  ASSERT_FALSE((*dev)->capabilities().host_query_reset);
  constexpr uint32_t kInFlight = 2;
  constexpr int kFrames = 12;
  auto gpu = vulkan::Gpu::attach(
      **dev, {.name = "attached", .max_zones_per_frame = 8, .frames_in_flight = kInFlight});
  ASSERT_TRUE(gpu) << gpu.error().message;
  EXPECT_FALSE((*gpu)->slots().uses_host_reset());
  Buffer big;
  make_buffer(big, 16u << 20);
  VkFence fences[kInFlight]{};
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  fci.flags = VK_FENCE_CREATE_SIGNALED_BIT;
  for (VkFence& f : fences)
    ASSERT_EQ(vkCreateFence(program_->device, &fci, nullptr, &f), VK_SUCCESS);
  std::vector<uint64_t> frame_ids;
  for (int frame = 0; frame < kFrames; ++frame) {
    VkFence fence = fences[frame % kInFlight];
    ASSERT_EQ(vkWaitForFences(program_->device, 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
    vkResetFences(program_->device, 1, &fence);
    VkCommandBuffer cmd = program_->begin();
    frame_ids.push_back((*gpu)->frame(cmd));
    EXPECT_EQ((*gpu)->slots().pending_resets(), 0u) << "frame " << frame;
    {
      LATLAB_GPU_ZONE(*gpu, cmd, "frame");
      { LATLAB_GPU_ZONE(*gpu, cmd, "empty"); }
      {
        LATLAB_GPU_ZONE(*gpu, cmd, "fill");
        vkCmdFillBuffer(cmd, big.buffer, 0, VK_WHOLE_SIZE, static_cast<uint32_t>(frame));
      }
    }
    ASSERT_EQ(program_->submit(cmd, fence), VK_SUCCESS);
  }
  vkWaitForFences(program_->device, kInFlight, fences, VK_TRUE, UINT64_MAX);
  VulkanGpuProfiler& prof = (*gpu)->profiler();
  prof.next_frame();
  prof.collect();
  const ProfilerCounters c = prof.counters();
  EXPECT_EQ(c.zones_dropped, 0u);
  EXPECT_EQ(c.zones_invalid, 0u);
  EXPECT_EQ(c.zones_ok, 3u * kFrames);
  // Each frame's tree: fill and empty inside frame; fill does 16 MiB of
  // work, empty none: the fastest fill is slower than the fastest empty.
  int64_t fastest_fill = std::numeric_limits<int64_t>::max();
  int64_t fastest_empty = std::numeric_limits<int64_t>::max();
  for (uint64_t id : frame_ids) {
    const auto f = prof.frame(id);
    if (!f) continue;  // only the newest retained_frames are kept
    ASSERT_EQ(f->zones.size(), 3u);
    EXPECT_EQ(f->zones[1].parent, 0u);
    EXPECT_EQ(f->zones[2].parent, 0u);
    fastest_empty = std::min(fastest_empty, f->zones[1].duration_ns);
    fastest_fill = std::min(fastest_fill, f->zones[2].duration_ns);
  }
  ASSERT_NE(fastest_fill, std::numeric_limits<int64_t>::max());
  EXPECT_GT(fastest_fill, fastest_empty);
  for (VkFence f : fences) vkDestroyFence(program_->device, f, nullptr);
}

// Without new_frame's command buffer, a zone's own write records its reset
// (outside render passes): still every zone ok.
TEST_F(VulkanAttachTest, ZonesRecordTheirOwnResetsWithoutNewFrameCommandBuffer) {
  OPEN_OR_SKIP();
  auto dev = VulkanAttachment::create(program_->attach_desc());
  ASSERT_TRUE(dev) << dev.error().message;
  auto gpu = vulkan::Gpu::attach(**dev, {.max_zones_per_frame = 4, .frames_in_flight = 1});
  ASSERT_TRUE(gpu) << gpu.error().message;
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  VkFence fence = VK_NULL_HANDLE;
  ASSERT_EQ(vkCreateFence(program_->device, &fci, nullptr, &fence), VK_SUCCESS);
  for (int frame = 0; frame < 6; ++frame) {
    (*gpu)->frame(VK_NULL_HANDLE);
    VkCommandBuffer cmd = program_->begin();
    { LATLAB_GPU_ZONE(*gpu, cmd, "a"); }
    { LATLAB_GPU_ZONE(*gpu, cmd, "b"); }
    ASSERT_EQ(program_->submit(cmd, fence), VK_SUCCESS);
    ASSERT_EQ(vkWaitForFences(program_->device, 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
    vkResetFences(program_->device, 1, &fence);
  }
  (*gpu)->profiler().next_frame();
  (*gpu)->profiler().collect();
  EXPECT_EQ((*gpu)->profiler().counters().zones_ok, 12u);
  vkDestroyFence(program_->device, fence, nullptr);
}

// A queue and its lock handed over: bracketed calibration, submitted only
// under the program's lock, and a GPU timestamp maps onto the host clock
// between the submit and the fence wake.
TEST_F(VulkanAttachTest, CalibratesOnTheHandedQueueUnderTheProgramsLock) {
  OPEN_OR_SKIP();
  auto dev = VulkanAttachment::create(program_->attach_desc_with_queue());
  ASSERT_TRUE(dev) << dev.error().message;
  const VulkanCapabilities& caps = (*dev)->capabilities();
  EXPECT_TRUE(caps.calibration_estimated);
  EXPECT_FALSE(has_missing(caps, "calibration"));
  const auto clock = start_clock_sync(**dev, {.refresh_interval_ns = 50'000'000});
  ASSERT_TRUE(clock->available()) << clock->reason();
  {
    std::lock_guard lock(program_->queue_mutex);
    EXPECT_GT(program_->lock_calls, 0u);  // every sample took the program's lock
  }
  auto slots = VulkanTimestampSlots::create(**dev, {.count = 2});
  ASSERT_TRUE(slots) << slots.error().message;
  slots.value()->reset(0, 2, true);
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  VkFence fence = VK_NULL_HANDLE;
  ASSERT_EQ(vkCreateFence(program_->device, &fci, nullptr, &fence), VK_SUCCESS);
  VkCommandBuffer cmd = program_->begin();
  slots.value()->write(cmd, 0, TimestampEdge::end);
  const int64_t before = host_now_ns();
  ASSERT_EQ(program_->submit(cmd, fence), VK_SUCCESS);
  ASSERT_EQ(vkWaitForFences(program_->device, 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
  const int64_t after = host_now_ns();
  SlotReading r[1];
  slots.value()->read(0, r);
  ASSERT_NE(r[0].available, 0u);
  const auto mapped = clock->mapper()(r[0].ticks);
  ASSERT_TRUE(mapped.has_value());
  EXPECT_GE(mapped->host_ns + mapped->error_ns, before);
  EXPECT_LE(mapped->host_ns - mapped->error_ns, after);
  vkDestroyFence(program_->device, fence, nullptr);
}

// The program uses its queue from its own thread with no lock at all:
// vkQueueSubmit, vkQueueWaitIdle and vkDeviceWaitIdle, while the ClockSync
// refreshes a bracketed calibration on the queue handed over. latlab submits
// only inside new_frame (the program's thread), so the validation layer's
// thread checks see no queue used by two threads (a refresh thread that
// submitted would make them report a THREADING ERROR).
TEST_F(VulkanAttachTest, ProgramsQueueWaitsNeedNoLockSharedWithLatlab) {
  OPEN_OR_SKIP();
  VulkanAttachDesc d = program_->attach_desc();
  d.queue = program_->queue;
  int lock_calls = 0;  // only ever on this thread: no lock needed
  d.queue_lock = [&lock_calls](const std::function<void()>& submit) {
    ++lock_calls;
    submit();
  };
  auto dev = VulkanAttachment::create(d);
  ASSERT_TRUE(dev) << dev.error().message;
  ASSERT_TRUE((*dev)->capabilities().calibration_estimated);
  auto gpu = vulkan::Gpu::attach(**dev, {.max_zones_per_frame = 2, .frames_in_flight = 1});
  ASSERT_TRUE(gpu) << gpu.error().message;
  const auto clock =
      start_clock_sync(**dev, {.samples_per_refresh = 2, .refresh_interval_ns = 1'000'000});
  ASSERT_TRUE(clock->available()) << clock->reason();
  const int start_calls = lock_calls;
  int frames = 0;
  for (; frames < 400 && clock->stats().refreshes < 4; ++frames) {
    VkCommandBuffer cmd = program_->begin();
    (*gpu)->frame(cmd);
    { LATLAB_GPU_ZONE(*gpu, cmd, "frame"); }
    vkEndCommandBuffer(cmd);
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    ASSERT_EQ(vkQueueSubmit(program_->queue, 1, &si, VK_NULL_HANDLE), VK_SUCCESS);
    ASSERT_EQ(vkQueueWaitIdle(program_->queue), VK_SUCCESS);
    if (frames % 4 == 3) {
      ASSERT_EQ(vkDeviceWaitIdle(program_->device), VK_SUCCESS);
    }
    vkFreeCommandBuffers(program_->device, program_->pool, 1, &cmd);
  }
  // The refresh ran on samples the frame loop submitted.
  EXPECT_GE(clock->stats().refreshes, 4u) << frames << " frames";
  EXPECT_GT(lock_calls, start_calls);
  clock->stop();
  EXPECT_EQ(program_->validation_messages().find("THREADING"), std::string::npos)
      << program_->validation_messages();
}

// With calibrated timestamps enabled by the program: the driver's pairs, no
// queue needed (none handed over), so latlab never submits.
TEST_F(VulkanAttachTest, CalibratedTimestampsNeedNoQueue) {
  OPEN_OR_SKIP({.calibrated_timestamps = true});
  if (!program_->calibrated_enabled)
    GTEST_SKIP() << program_->name << " offers no calibrated timestamps";
  auto dev = VulkanAttachment::create(program_->attach_desc());
  ASSERT_TRUE(dev) << dev.error().message;
  const VulkanCapabilities& caps = (*dev)->capabilities();
  EXPECT_TRUE(caps.calibrated_timestamps);
  if (caps.calibration_method.empty())
    GTEST_SKIP() << "no CLOCK_MONOTONIC domain: " << missing_reason(caps, "calibration");
  EXPECT_FALSE(caps.calibration_estimated);
  const auto clock = start_clock_sync(**dev);
  ASSERT_TRUE(clock->available()) << clock->reason();
  EXPECT_EQ(clock->method(), caps.calibration_method);
  EXPECT_FALSE(clock->fit()->estimated);
  EXPECT_EQ(program_->lock_calls, 0u);
}

// Host query reset enabled: the profiler's resets stay on the host, nothing
// is recorded into the program's command buffer.
TEST_F(VulkanAttachTest, HostQueryResetKeepsResetsOnTheHost) {
  OPEN_OR_SKIP({.host_query_reset = true});
  if (!program_->host_query_reset_enabled)
    GTEST_SKIP() << program_->name << " has no host query reset";
  auto dev = VulkanAttachment::create(program_->attach_desc());
  ASSERT_TRUE(dev) << dev.error().message;
  EXPECT_TRUE((*dev)->capabilities().host_query_reset);
  auto gpu = vulkan::Gpu::attach(**dev, {.max_zones_per_frame = 4, .frames_in_flight = 1});
  ASSERT_TRUE(gpu) << gpu.error().message;
  EXPECT_TRUE((*gpu)->slots().uses_host_reset());
  VkCommandBuffer cmd = program_->begin();
  (*gpu)->frame(cmd);
  EXPECT_EQ((*gpu)->slots().pending_resets(), 0u);
  EXPECT_EQ((*gpu)->slots().record_pending_resets(cmd), 0u);
  vkEndCommandBuffer(cmd);
}

// The timestamp query pool on the attached device, its resets in the command buffer.
TEST_F(VulkanAttachTest, QueryPoolOnTheProgramsDevice) {
  OPEN_OR_SKIP();
  auto dev = VulkanAttachment::create(program_->attach_desc());
  ASSERT_TRUE(dev) << dev.error().message;
  auto pool = create_vulkan_query_pool(**dev, {.max_queries = 8, .kind = QueryKind::compute});
  ASSERT_TRUE(pool) << pool.error().message;
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  VkFence fence = VK_NULL_HANDLE;
  ASSERT_EQ(vkCreateFence(program_->device, &fci, nullptr, &fence), VK_SUCCESS);
  for (uint64_t frame = 1; frame <= 3; ++frame) {
    const std::string uid = "c:0:work:f" + std::to_string(frame);
    const auto offset = (*pool)->allocate_queries_for_context(uid, frame);
    ASSERT_TRUE(offset.has_value());
    VkCommandBuffer cmd = program_->begin();
    (*pool)->write_begin(cmd, *offset);
    (*pool)->write_end(cmd, *offset);
    ASSERT_EQ(program_->submit(cmd, fence), VK_SUCCESS);
    ASSERT_EQ(vkWaitForFences(program_->device, 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
    vkResetFences(program_->device, 1, &fence);
    (void)(*pool)->resolve_queries_async();
    (*pool)->retire_frame(frame);
    const TimestampResult r = (*pool)->timestamp(uid);
    EXPECT_TRUE(r.ok()) << uid << ": " << to_string(r.status);
  }
  vkDestroyFence(program_->device, fence, nullptr);
}

// Frames of two zones each on the program's queue, one at a time; the
// number of zones the profiler timed.
uint64_t record_zones(ProgramDevice& program, vulkan::Gpu& gpu, int frames) {
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  VkFence fence = VK_NULL_HANDLE;
  if (vkCreateFence(program.device, &fci, nullptr, &fence) != VK_SUCCESS) return 0;
  for (int frame = 0; frame < frames; ++frame) {
    VkCommandBuffer cmd = program.begin();
    gpu.frame(cmd);
    {
      LATLAB_GPU_ZONE(gpu, cmd, "outer");
      { LATLAB_GPU_ZONE(gpu, cmd, "inner"); }
    }
    EXPECT_EQ(program.submit(cmd, fence), VK_SUCCESS);
    EXPECT_EQ(vkWaitForFences(program.device, 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
    vkResetFences(program.device, 1, &fence);
  }
  gpu.profiler().next_frame();
  gpu.profiler().collect();
  vkDestroyFence(program.device, fence, nullptr);
  return gpu.profiler().counters().zones_ok;
}

// A Vulkan 1.0 instance (as Sascha Willems' samples make): the instance
// enables what vulkan_attach_instance_extensions names, the device what the
// wishes name (each with its dependencies: no VUID-vkCreateDevice-01387),
// and the attach gives host query reset and calibrated timestamps through
// their extensions. The validation layer sees nothing wrong (TearDown).
TEST_F(VulkanAttachTest, Vulkan10InstanceFollowsTheWishes) {
  OPEN_OR_SKIP(
      {.host_query_reset = true, .calibrated_timestamps = true, .api_version = VK_API_VERSION_1_0});
  auto dev = VulkanAttachment::create(program_->attach_desc());
  ASSERT_TRUE(dev) << dev.error().message;
  EXPECT_EQ((*dev)->api_version(), VK_API_VERSION_1_0);
  const VulkanCapabilities& caps = (*dev)->capabilities();
  const bool props2 = !vulkan_attach_instance_extensions(VK_API_VERSION_1_0).empty();
  if (props2) {
    EXPECT_FALSE(has_missing(caps, "get_physical_device_properties2"));
    // What the device offers, enabled through the extensions.
    EXPECT_EQ(caps.host_query_reset, (*dev)->report().host_query_reset);
    EXPECT_EQ(caps.calibrated_timestamps, (*dev)->report().calibrated_timestamps);
    for (const char* e : program_->device_extensions)
      EXPECT_NE(std::string(e).find("VK_EXT_"), std::string::npos) << e;
  }
  auto gpu = vulkan::Gpu::attach(**dev, {.max_zones_per_frame = 4, .frames_in_flight = 1});
  ASSERT_TRUE(gpu) << gpu.error().message;
  EXPECT_EQ(record_zones(*program_, **gpu, 4), 8u);
  if (caps.calibrated_timestamps && !caps.calibration_method.empty()) {
    const auto clock = start_clock_sync(**dev);
    EXPECT_TRUE(clock->available()) << clock->reason();
  }
}

// A 1.0 instance without VK_KHR_get_physical_device_properties2: the wishes
// name no extension (both need it) and say why; the attach still times
// zones, resetting queries in the command buffer.
TEST_F(VulkanAttachTest, Vulkan10InstanceWithoutProperties2WishesNothing) {
  OPEN_OR_SKIP({.host_query_reset = true,
                .calibrated_timestamps = true,
                .api_version = VK_API_VERSION_1_0,
                .instance_wishes = false});
  auto wishes = vulkan_attach_wishes(program_->attach_desc());
  ASSERT_TRUE(wishes) << wishes.error().message;
  EXPECT_TRUE(wishes->extensions.empty());
  EXPECT_FALSE(wishes->host_query_reset);
  const auto why = std::find_if(
      wishes->unavailable.begin(), wishes->unavailable.end(),
      [](const MissingCapability& m) { return m.name == "get_physical_device_properties2"; });
  ASSERT_NE(why, wishes->unavailable.end());
  EXPECT_NE(why->reason.find("VK_KHR_get_physical_device_properties2"), std::string::npos);
  EXPECT_TRUE(program_->device_extensions.empty());
  auto dev = VulkanAttachment::create(program_->attach_desc());
  ASSERT_TRUE(dev) << dev.error().message;
  EXPECT_FALSE((*dev)->capabilities().host_query_reset);
  auto gpu = vulkan::Gpu::attach(**dev, {.max_zones_per_frame = 4, .frames_in_flight = 1});
  ASSERT_TRUE(gpu) << gpu.error().message;
  EXPECT_EQ(record_zones(*program_, **gpu, 3), 6u);
}

// vulkan::attach owns everything it made: the attachment, slots, clock sync
// and profiler; the trace it streams holds every frame once finish() ran,
// the stat table says which frames it covers, and a Gpu destroyed with its
// trace open leaves a trace marked partial. Frames number from 0 although
// the first frame() follows set-up.
TEST_F(VulkanAttachTest, OneObjectOwnsTheAttachmentTheTraceAndTheTeardown) {
  OPEN_OR_SKIP({.host_query_reset = false});
  TempDir dir("latlab-attach-owner");
  const std::string done_path = (dir.path / "done.json").string();
  const std::string partial_path = (dir.path / "partial.json").string();
  for (const bool finish : {true, false}) {
    auto gpu = vulkan::attach(
        {.device = program_->attach_desc_with_queue(),
         .profiler = {.name = "owner", .max_zones_per_frame = 4, .frames_in_flight = 1}});
    ASSERT_TRUE(gpu) << gpu.error().message;
    ASSERT_TRUE((*gpu)->clock().available()) << (*gpu)->clock().reason();
    ASSERT_TRUE((*gpu)->trace(finish ? done_path : partial_path));
    EXPECT_FALSE((*gpu)->trace(done_path)) << "a second trace while one is open";
    EXPECT_EQ(record_zones(*program_, **gpu, 5), 10u);
    if (finish) {
      ASSERT_TRUE((*gpu)->finish());
      EXPECT_EQ((*gpu)->counters().frames_collected, 5u);
      EXPECT_NE((*gpu)->stat_table().find("'owner': the newest 5 of 5 frames collected"),
                std::string::npos)
          << (*gpu)->stat_table();
      EXPECT_EQ((*gpu)->trace_spans(), 5u * 2u + 5u) << "two zones and one frame span a frame";
    }
  }
  const std::string done = slurp(done_path);
  EXPECT_NE(done.find("\"frame 0\""), std::string::npos);
  EXPECT_NE(done.find("\"frame 4\""), std::string::npos);
  EXPECT_EQ(done.find("\"frame 5\""), std::string::npos);
  EXPECT_EQ(done.find("\"partial\": true"), std::string::npos);
  const std::string partial = slurp(partial_path);
  EXPECT_NE(partial.find("\"partial\""), std::string::npos) << partial.substr(0, 400);
  EXPECT_NE(partial.find("destroyed before finish()"), std::string::npos);
}

// latlab's own context takes the same path: its attachment is what its
// slots and calibration use, and reports the same device.
TEST_F(VulkanTest, ContextIsBuiltOnTheAttachPath) {
  const VulkanAttachment& a = ctx_->attachment();
  EXPECT_EQ(a.device(), ctx_->device());
  EXPECT_EQ(a.queue_family(), ctx_->queue_family());
  EXPECT_EQ(a.capabilities().calibration_method, ctx_->capabilities().calibration_method);
  EXPECT_EQ(a.tick_format().period_ns(), ctx_->tick_format().period_ns());
  const auto clock = start_clock_sync(a);
  EXPECT_TRUE(clock->available()) << clock->reason();
}

}  // namespace
}  // namespace latlab::test
