// Source locations of zones (ZoneSite): LATLAB_GPU_ZONE records where it
// sits; zones given a bare or runtime name have none.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <type_traits>

#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/bench/sim_timestamp_slots.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_trace.hpp"

namespace latlab {
namespace {

struct Rig {
  std::shared_ptr<SimTimestampSlots> writer = SimTimestampSlots::create();
  std::unique_ptr<GpuProfiler> prof = GpuProfiler::create(writer).value();
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

uint32_t record_shadows(Rig& r) {
  const uint32_t line = __LINE__ + 1;
  LATLAB_GPU_ZONE(r.prof, &r.cmd, "shadows");
  return line;
}

TEST(ZoneSite, MacroZoneCarriesFunctionFileAndLine) {
  Rig r;
  const uint32_t line = record_shadows(r);
  const ProfilerFrame f = r.collect();
  ASSERT_EQ(f.zones.size(), 1u);
  const ProfilerZone& z = f.zones[0];
  ASSERT_NE(z.site, nullptr);
  EXPECT_STREQ(z.name, "shadows");
  EXPECT_EQ(z.site->name, z.name);
  EXPECT_STREQ(z.site->function, "record_shadows");
  EXPECT_TRUE(std::string_view(z.site->file).ends_with("zone_site_test.cpp")) << z.site->file;
  EXPECT_EQ(z.site->line, line);
  EXPECT_TRUE(z.ok());
}

TEST(ZoneSite, OneSitePerCallSite) {
  Rig r;
  record_shadows(r);
  record_shadows(r);
  { LATLAB_GPU_ZONE(r.prof, &r.cmd, "shadows"); }  // same name, another line
  const ProfilerFrame f = r.collect();
  ASSERT_EQ(f.zones.size(), 3u);
  EXPECT_EQ(f.zones[0].site, f.zones[1].site);  // static: one per call site
  ASSERT_NE(f.zones[2].site, nullptr);
  EXPECT_NE(f.zones[2].site, f.zones[0].site);
  EXPECT_STREQ(f.zones[2].site->function, "TestBody");
  // One stat row per name, whichever sites recorded it.
  const auto stats = r.prof->stats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_DOUBLE_EQ(stats[0].calls_per_frame, 3.0);
}

TEST(ZoneSite, BareAndRuntimeNamesHaveNoSite) {
  Rig r;
  { GpuZone z(r.prof.get(), &r.cmd, "bare"); }
  { LATLAB_GPU_ZONE_TRANSIENT(r.prof, &r.cmd, std::string("runtime")); }
  static constexpr ZoneSite kSite{"explicit", "caller", "file.cpp", 7};
  { GpuZone z(r.prof.get(), &r.cmd, kSite); }
  const ProfilerFrame f = r.collect();
  ASSERT_EQ(f.zones.size(), 3u);
  EXPECT_STREQ(f.zones[0].name, "bare");
  EXPECT_EQ(f.zones[0].site, nullptr);
  EXPECT_STREQ(f.zones[1].name, "runtime");
  EXPECT_EQ(f.zones[1].site, nullptr);
  EXPECT_EQ(f.zones[2].site, &kSite);
  EXPECT_EQ(f.zones[2].name, kSite.name);
}

// A site's pointer is stored: a temporary one would dangle.
static_assert(std::is_constructible_v<GpuZone, GpuProfiler*, GpuCommandStream, const ZoneSite&>);
static_assert(!std::is_constructible_v<GpuZone, GpuProfiler*, GpuCommandStream, ZoneSite>);

TEST(ZoneSite, NestingIsUnchangedBySites) {
  Rig r;
  {
    LATLAB_GPU_ZONE(r.prof, &r.cmd, "outer");
    { GpuZone z(r.prof.get(), &r.cmd, "bare_child"); }
    { LATLAB_GPU_ZONE(r.prof, &r.cmd, "site_child"); }
  }
  const ProfilerFrame f = r.collect();
  ASSERT_EQ(f.zones.size(), 3u);
  EXPECT_EQ(f.zones[1].parent, 0u);
  EXPECT_EQ(f.zones[2].parent, 0u);
  EXPECT_EQ(f.zones[2].depth, 1u);
}

TEST(ZoneSite, TraceSpansCarryTheSourceLocation) {
  Rig r;
  r.prof->set_clock_mapper([](uint64_t ticks) -> std::optional<MappedTime> {
    return MappedTime{static_cast<int64_t>(ticks), 0};
  });
  const uint32_t line = record_shadows(r);
  { GpuZone z(r.prof.get(), &r.cmd, "bare"); }
  ChromeTrace trace;
  trace.add_frame("gpu", r.collect());
  const std::string json = trace.to_json();
  EXPECT_NE(json.find("\"line\":" + std::to_string(line)), std::string::npos) << json;
  EXPECT_NE(json.find("\"function\":\"record_shadows\""), std::string::npos) << json;
  EXPECT_NE(json.find("zone_site_test.cpp\""), std::string::npos) << json;
}

}  // namespace
}  // namespace latlab
