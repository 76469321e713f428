// Several queues on the sim timestamp slots: one profiler per queue, each
// with its own valid bits (a 32-bit transfer queue that wraps during the
// test), all mapped onto one host clock through one device clock fit
// (queue_clock_mapper); command-buffer zones. The tests play the GPU.
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/bench/sim_timestamp_slots.hpp"
#include "latlab/clock_model.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_queues.hpp"

namespace latlab {
namespace {

constexpr TickFormat kTicks64{.period_num = 1, .period_den = 1, .valid_bits = 64};
constexpr TickFormat kTicks32{.period_num = 1, .period_den = 1, .valid_bits = 32};
// Device time of the first frame: 38 us before the 32-bit counter wraps
// (5 * 2^32), so frames 3 and later run after the wrap and frame 3's
// transfer zones straddle it.
constexpr uint64_t kStartTicks = (5ull << 32) - 38'000;
constexpr int64_t kAnchorHostNs = 7'000'000'000;
constexpr uint64_t kFramePeriodTicks = 12'000;
constexpr uint64_t kStepTicks = 1'000;  // between successive timestamp writes of one stream

// One simulated queue: its slots, profiler and the frames it collected.
struct SimQueue {
  std::string name;
  std::shared_ptr<SimTimestampSlots> slots;
  std::unique_ptr<GpuProfiler> prof;
  std::vector<ProfilerFrame> frames;
};

std::unique_ptr<SimQueue> make_queue(std::string name, TickFormat ticks,
                                     const std::shared_ptr<const ClockFit>& fit) {
  auto q = std::make_unique<SimQueue>();
  q->name = std::move(name);
  q->slots = SimTimestampSlots::create({.count = 512, .ticks = ticks});
  auto p = GpuProfiler::create(q->slots, {.name = q->name, .max_zones_per_frame = 16});
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  q->prof = std::move(p).value();
  q->prof->set_clock_mapper(queue_clock_mapper([fit] { return fit; }, ticks));
  SimQueue* raw = q.get();
  q->prof->set_frame_sink([raw](const ProfilerFrame& f) { raw->frames.push_back(f); });
  return q;
}

const ProfilerZone* find(const ProfilerFrame& f, std::string_view name) {
  for (const auto& z : f.zones) {
    if (z.name == name) return &z;
  }
  return nullptr;
}

// A device clock model with one exact pair: device tick kStartTicks is host
// ns kAnchorHostNs, one tick per ns.
std::shared_ptr<const ClockFit> device_fit() {
  ClockModel model(kTicks64);
  EXPECT_TRUE(model.add_pair({.device_ticks = kStartTicks, .host_ns = kAnchorHostNs}));
  return model.fit();
}

int64_t host_of(uint64_t device_ticks) {
  return kAnchorHostNs + static_cast<int64_t>(device_ticks - kStartTicks);
}

TEST(ProfilerQueues, ThreeQueuesShareOneHostClockAcrossA32BitWrap) {
  const auto fit = device_fit();
  ASSERT_NE(fit, nullptr);
  auto graphics = make_queue("graphics", kTicks64, fit);
  auto compute = make_queue("compute", kTicks64, fit);
  auto transfer = make_queue("transfer", kTicks32, fit);
  constexpr uint32_t kFrames = 8;
  bool wrapped_inside_a_zone = false;
  for (uint32_t f = 0; f < kFrames; ++f) {
    SimCommandStream g, c, t;
    {
      LATLAB_GPU_COMMAND_BUFFER(transfer->prof, &t, "upload");
      { LATLAB_GPU_ZONE(transfer->prof, &t, "upload.copy"); }
    }
    {
      LATLAB_GPU_COMMAND_BUFFER(compute->prof, &c, "async compute");
      { LATLAB_GPU_ZONE(compute->prof, &c, "async.simulate"); }
    }
    {
      LATLAB_GPU_COMMAND_BUFFER(graphics->prof, &g, "graphics");
      { LATLAB_GPU_ZONE(graphics->prof, &g, "frame"); }
    }
    // The device: the upload starts the frame, compute follows its semaphore
    // 1 us later and overlaps the graphics queue, which starts 500 ns after it.
    const uint64_t t0 = kStartTicks + f * kFramePeriodTicks;
    const uint64_t upload_end = t0 + 3 * kStepTicks;
    if ((t0 & kTicks32.mask()) > (upload_end & kTicks32.mask())) wrapped_inside_a_zone = true;
    transfer->slots->execute(t, t0, kStepTicks);
    compute->slots->execute(c, upload_end + 1'000, kStepTicks);
    graphics->slots->execute(g, upload_end + 1'500, kStepTicks);
    for (auto* q : {graphics.get(), compute.get(), transfer.get()}) q->prof->next_frame();
  }
  ASSERT_TRUE(wrapped_inside_a_zone) << "the test must wrap the 32-bit queue inside a zone";
  for (auto* q : {graphics.get(), compute.get(), transfer.get()}) {
    q->prof->collect();
    ASSERT_EQ(q->frames.size(), kFrames) << q->name;
    const ProfilerCounters counters = q->prof->counters();
    EXPECT_EQ(counters.zones_ok, 2u * kFrames) << q->name;
    EXPECT_EQ(counters.zones_invalid, 0u) << q->name;
  }
  for (uint32_t f = 0; f < kFrames; ++f) {
    const uint64_t t0 = kStartTicks + f * kFramePeriodTicks;
    const ProfilerFrame& tf = transfer->frames[f];
    const ProfilerZone* upload = find(tf, "cmdbuf upload");
    const ProfilerZone* copy = find(tf, "upload.copy");
    ASSERT_NE(upload, nullptr);
    ASSERT_NE(copy, nullptr);
    ASSERT_TRUE(upload->ok()) << "frame " << f;
    // Wrap-aware span: the command buffer is its 4 writes, 3 steps long.
    EXPECT_EQ(upload->duration_ns, static_cast<int64_t>(3 * kStepTicks)) << "frame " << f;
    EXPECT_EQ(copy->duration_ns, static_cast<int64_t>(kStepTicks)) << "frame " << f;
    EXPECT_LE(upload->begin_ticks, kTicks32.mask());  // raw 32-bit values
    // The 32-bit queue lands on the host clock where the 64-bit ones do.
    ASSERT_TRUE(upload->host_mapped);
    EXPECT_EQ(upload->gpu_begin_host_ns, host_of(t0)) << "frame " << f;
    EXPECT_EQ(upload->gpu_end_host_ns, host_of(t0 + 3 * kStepTicks)) << "frame " << f;
    // Mapped as if it were a 64-bit value, the raw tick would land far off.
    EXPECT_NE(fit->map(upload->begin_ticks).host_ns, host_of(t0));
    const ProfilerZone* async = find(compute->frames[f], "cmdbuf async compute");
    const ProfilerZone* gfx = find(graphics->frames[f], "cmdbuf graphics");
    ASSERT_NE(async, nullptr);
    ASSERT_NE(gfx, nullptr);
    ASSERT_TRUE(async->host_mapped && gfx->host_mapped);
    EXPECT_EQ(async->gpu_begin_host_ns, host_of(t0 + 4 * kStepTicks)) << "frame " << f;
    // Ordered by the semaphore: compute begins after the upload ended ...
    EXPECT_GT(async->gpu_begin_host_ns, upload->gpu_end_host_ns);
    // ... and overlaps the graphics queue's command buffer.
    EXPECT_LT(gfx->gpu_begin_host_ns, async->gpu_end_host_ns);
    EXPECT_GT(gfx->gpu_end_host_ns, async->gpu_begin_host_ns);
  }
}

TEST(ProfilerQueues, CommandBufferZonesAreNamedAndTellable) {
  EXPECT_STREQ(command_buffer_zone_name(0), "cmdbuf 0");
  EXPECT_STREQ(command_buffer_zone_name(63), "cmdbuf 63");
  EXPECT_STREQ(command_buffer_zone_name(64), "cmdbuf 64+");
  // Static names: the same pointer every time (profiler frames keep it).
  EXPECT_EQ(command_buffer_zone_name(5), command_buffer_zone_name(5));
  EXPECT_TRUE(is_command_buffer_zone(command_buffer_zone_name(7)));
  EXPECT_TRUE(is_command_buffer_zone("cmdbuf upload"));
  EXPECT_FALSE(is_command_buffer_zone("upload.copy"));
  EXPECT_FALSE(is_command_buffer_zone(nullptr));

  auto slots = SimTimestampSlots::create({.count = 512});
  auto prof = GpuProfiler::create(slots, {.max_zones_per_frame = 16}).value();
  SimCommandStream cmd;
  {
    const GpuZone whole(prof.get(), &cmd, command_buffer_zone_name(0));
    LATLAB_GPU_ZONE(prof, &cmd, "pass");
  }
  slots->execute(cmd, 100, 10);
  prof->next_frame();
  prof->collect();
  const auto stats = prof->stats();
  ASSERT_EQ(stats.size(), 2u);
  const auto f = prof->frame(0);
  ASSERT_TRUE(f.has_value());
  const ProfilerZone* whole = find(*f, "cmdbuf 0");
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(whole->depth, 0u);
  EXPECT_EQ(whole->duration_ns, 30);
  const ProfilerZone* pass = find(*f, "pass");
  ASSERT_NE(pass, nullptr);
  EXPECT_EQ(pass->depth, 1u);  // inside its command buffer's zone
}

TEST(ProfilerQueues, MapperWithoutAFitMapsNothing) {
  const GpuClockMapper m =
      queue_clock_mapper([] { return std::shared_ptr<const ClockFit>(); }, kTicks32);
  EXPECT_FALSE(m(123).has_value());
}

TEST(ProfilerQueues, QueueAsWideAsTheFitMapsAsTheFitDoes) {
  const auto fit = device_fit();
  const GpuClockMapper m = queue_clock_mapper([fit] { return fit; }, kTicks64);
  const auto t = m(kStartTicks + 5'000);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->host_ns, fit->map(kStartTicks + 5'000).host_ns);
  EXPECT_EQ(t->host_ns, host_of(kStartTicks + 5'000));
}

}  // namespace
}  // namespace latlab
