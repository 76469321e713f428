// Typed command streams (TypedGpuProfiler, profiler.hpp): a profiler typed by
// its stream records exactly as an untyped one, through every zone form, and
// its zones accept that stream type only. What must not compile is in
// testbed/compile_fail/ (ctest CompileFail.*); here, what must, and what the
// type traits say about the rest.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <type_traits>

#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/bench/sim_timestamp_slots.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_cuda.hpp"
#include "latlab/profiler_opengl.hpp"

namespace latlab {
namespace {

using SimGpuProfiler = TypedGpuProfiler<SimCommandStream*>;

// Each API's profiler carries its stream type; a typed profiler is a GpuProfiler.
static_assert(std::is_same_v<CudaGpuProfiler::stream_type, CUstream_st*>);
static_assert(std::is_same_v<GlGpuProfiler::stream_type, GlContext*>);
static_assert(std::is_base_of_v<GpuProfiler, CudaGpuProfiler>);
static_assert(sizeof(SimGpuProfiler) == sizeof(GpuProfiler));  // nothing added to the object
// The zone is unchanged by the typing.
static_assert(sizeof(GpuZone) == sizeof(GpuProfiler*) + sizeof(GpuCommandStream) +
                                     sizeof(GpuProfiler::ZoneRef) + sizeof(const GpuZone*));
static_assert(std::is_constructible_v<GpuZone, SimGpuProfiler*, SimCommandStream*, const char*>);
static_assert(std::is_constructible_v<GpuZone, CudaGpuProfiler*, CudaStream, const ZoneSite&>);
static_assert(std::is_constructible_v<GpuZone, GlGpuProfiler*, std::nullptr_t, const char*>);
static_assert(!std::is_constructible_v<GpuZone, SimGpuProfiler*, SimCommandStream*, ZoneSite>);
// The untyped path still takes any pointer.
static_assert(std::is_constructible_v<GpuZone, GpuProfiler*, CudaStream, const char*>);

struct TypedRig {
  std::shared_ptr<SimTimestampSlots> writer = SimTimestampSlots::create();
  std::unique_ptr<SimGpuProfiler> prof = SimGpuProfiler::create(writer).value();
  SimCommandStream cmd;
  ProfilerFrame collect() {
    writer->execute(cmd, 1000, 10);
    cmd.writes.clear();
    prof->next_frame();
    auto f = prof->latest_frame();
    EXPECT_TRUE(f.has_value());
    return f.value_or(ProfilerFrame{});
  }
};

TEST(TypedProfiler, EveryZoneFormRecordsIntoItsStream) {
  TypedRig r;
  static constexpr ZoneSite kSite{"site", "test", "profiler_typed_test.cpp", 1};
  {
    LATLAB_GPU_ZONE(r.prof, &r.cmd, "macro");
    { LATLAB_GPU_ZONE_TRANSIENT(*r.prof, &r.cmd, std::string("trans") + "ient"); }
    { const GpuZone z(r.prof.get(), &r.cmd, "bare"); }
    { const GpuZone z(r.prof.get(), &r.cmd, kSite); }
  }
  EXPECT_EQ(r.cmd.writes.size(), 8u);
  const ProfilerFrame f = r.collect();
  ASSERT_EQ(f.zones.size(), 4u);
  EXPECT_STREQ(f.zones[0].name, "macro");
  ASSERT_NE(f.zones[0].site, nullptr);
  EXPECT_EQ(f.zones[0].depth, 0u);
  EXPECT_STREQ(f.zones[1].name, "transient");
  EXPECT_STREQ(f.zones[2].name, "bare");
  EXPECT_EQ(f.zones[3].site, &kSite);
  for (uint32_t i = 1; i < 4; ++i) {
    EXPECT_EQ(f.zones[i].parent, 0u) << i;
    EXPECT_TRUE(f.zones[i].ok()) << i;
  }
}

TEST(TypedProfiler, NullProfilerRecordsNothing) {
  SimCommandStream cmd;
  SimGpuProfiler* none = nullptr;
  { LATLAB_GPU_ZONE(none, &cmd, "off"); }
  { LATLAB_GPU_ZONE_TRANSIENT(none, &cmd, std::string("off")); }
  EXPECT_TRUE(cmd.writes.empty());
}

TEST(TypedProfiler, HeldAsGpuProfilerIsTheSameProfiler) {
  TypedRig r;
  GpuProfiler& base = *r.prof;
  { LATLAB_GPU_ZONE(base, &r.cmd, "untyped"); }  // the untyped path
  { LATLAB_GPU_ZONE(r.prof, &r.cmd, "typed"); }
  const ProfilerFrame f = r.collect();
  ASSERT_EQ(f.zones.size(), 2u);
  EXPECT_TRUE(f.zones[0].ok());
  EXPECT_TRUE(f.zones[1].ok());
  // Destroyed through the base (virtual destructor): no leak under ASan.
  std::unique_ptr<GpuProfiler> owner = std::move(r.prof);
  owner.reset();
}

TEST(TypedProfiler, CreateChecksAsGpuProfilerDoes) {
  auto writer = SimTimestampSlots::create({.count = 8});
  auto p = SimGpuProfiler::create(writer, {.max_zones_per_frame = 4, .frames_in_flight = 3});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("are needed"), std::string::npos) << p.error().message;
  EXPECT_FALSE(SimGpuProfiler::create(nullptr).ok());
}

}  // namespace
}  // namespace latlab
