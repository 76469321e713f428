// Runtime zone names (LATLAB_GPU_ZONE_TRANSIENT, intern_zone_name) on the
// sim timestamp writer.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <string_view>

#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/bench/sim_timestamp_slots.hpp"
#include "latlab/profiler.hpp"

namespace latlab {
namespace {

TEST(ZoneNames, EqualTextGivesOnePointer) {
  const std::string a = std::string("material_") + std::to_string(7);
  const std::string b = "material_7";
  ASSERT_NE(static_cast<const void*>(a.c_str()), static_cast<const void*>(b.c_str()));
  const char* ia = intern_zone_name(a);
  EXPECT_EQ(intern_zone_name(b), ia);
  EXPECT_EQ(intern_zone_name("material_7"), ia);
  EXPECT_STREQ(ia, "material_7");
  EXPECT_NE(static_cast<const void*>(ia), static_cast<const void*>(a.c_str()));  // a copy
  const char* other = intern_zone_name("material_8");
  EXPECT_NE(other, ia);
  EXPECT_STREQ(other, "material_8");
}

TEST(ZoneNames, ANulEndsTheName) {
  const std::string with_nul("pass\0hidden", 11);
  EXPECT_EQ(intern_zone_name(with_nul), intern_zone_name("pass"));
  EXPECT_STREQ(intern_zone_name(std::string_view()), "");
}

TEST(ZoneNames, TransientZoneKeepsItsNameAfterTheTextIsGone) {
  auto writer = SimTimestampSlots::create();
  auto prof = GpuProfiler::create(writer).value();
  SimCommandStream cmd;
  for (int i = 0; i < 3; ++i) {
    auto name = std::make_unique<std::string>("draw_" + std::to_string(i % 2));
    LATLAB_GPU_ZONE_TRANSIENT(prof, &cmd, *name);
    name.reset();  // the zone must not keep the caller's text
  }
  writer->execute(cmd, 1000, 10);
  prof->next_frame();
  const auto f = prof->latest_frame();
  ASSERT_TRUE(f.has_value());
  ASSERT_EQ(f->zones.size(), 3u);
  EXPECT_STREQ(f->zones[0].name, "draw_0");
  EXPECT_STREQ(f->zones[1].name, "draw_1");
  EXPECT_EQ(f->zones[2].name, f->zones[0].name);  // interned: one pointer per text
  // The stat table has one row per text: draw_0 twice in the frame.
  const auto stats = prof->stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].name, "draw_0");
  EXPECT_DOUBLE_EQ(stats[0].calls_per_frame, 2.0);
  EXPECT_EQ(stats[0].frames, 1u);
  EXPECT_EQ(stats[1].name, "draw_1");
}

TEST(ZoneNames, TransientAndLiteralNamesShareAStatRow) {
  auto writer = SimTimestampSlots::create();
  auto prof = GpuProfiler::create(writer).value();
  SimCommandStream cmd;
  { LATLAB_GPU_ZONE(prof, &cmd, "shadows"); }
  { LATLAB_GPU_ZONE_TRANSIENT(prof, &cmd, std::string("shad") + "ows"); }
  writer->execute(cmd, 0, 10);
  prof->next_frame();
  const auto stats = prof->stats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].name, "shadows");
  EXPECT_DOUBLE_EQ(stats[0].calls_per_frame, 2.0);
}

TEST(ZoneNames, NullProfilerRecordsNothing) {
  GpuProfiler* none = nullptr;
  SimCommandStream cmd;
  { LATLAB_GPU_ZONE_TRANSIENT(none, &cmd, std::string("unused")); }
  GpuZone z(nullptr, &cmd, TransientZoneName{"x"});
  EXPECT_FALSE(z.recorded());
  EXPECT_TRUE(cmd.writes.empty());
}

// In a child process: filling the process's table must not touch the names
// other tests in this process intern.
TEST(ZoneNamesDeathTest, BeyondTheLimitNamesAreRefusedAndCounted) {
  EXPECT_EXIT(
      {
        const uint64_t refused_before = zone_names_refused();
        const char* first = intern_zone_name("first");
        // Names until the table is full (other tests' names may be in it).
        uint32_t i = 0;
        while (i <= kMaxZoneNames && intern_zone_name("n" + std::to_string(i)) != kZoneNamesFull)
          ++i;
        const bool ok = i <= kMaxZoneNames && zone_names_refused() == refused_before + 1 &&
                        intern_zone_name("one too many") == kZoneNamesFull &&
                        zone_names_refused() == refused_before + 2 &&
                        intern_zone_name("first") == first &&  // known names still resolve
                        intern_zone_name("n0") != kZoneNamesFull;
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace latlab
