// CPU zones (LATLAB_CPU_ZONE): host-clock spans kept in the profiler's frame
// beside its GPU zones, nested among themselves, bounded per frame, in the
// stat table as CPU rows and in the trace on the recording thread's track.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>

#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/bench/sim_timestamp_slots.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_trace.hpp"

namespace latlab {
namespace {

struct Rig {
  explicit Rig(GpuProfilerDesc desc = {}) : prof(GpuProfiler::create(writer, desc).value()) {}
  std::shared_ptr<SimTimestampSlots> writer = SimTimestampSlots::create();
  std::unique_ptr<GpuProfiler> prof;
  SimCommandStream cmd;
  // Closes the frame; the GPU zones' timestamps executed at 1000 + 10 k ticks.
  void close_frame() {
    writer->execute(cmd, 1000, 10);
    cmd.writes.clear();
    prof->next_frame();
  }
};

const ProfilerZone* find(const ProfilerFrame& f, std::string_view name, bool cpu) {
  for (const ProfilerZone& z : f.zones) {
    if (z.cpu == cpu && z.name == name) return &z;
  }
  return nullptr;
}

TEST(CpuZone, NestsInCpuZonesOnTheHostClock) {
  Rig r;
  const int64_t before = host_now_ns();
  {
    LATLAB_CPU_ZONE(r.prof, "update");
    {
      LATLAB_CPU_ZONE(r.prof, "physics");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    LATLAB_GPU_ZONE(r.prof, &r.cmd, "shadows");  // a GPU zone between: no CPU parent
    { LATLAB_CPU_ZONE_TRANSIENT(r.prof, std::string("cull ") + "lights"); }
  }
  const int64_t after = host_now_ns();
  r.close_frame();
  const auto f = r.prof->latest_frame();
  ASSERT_TRUE(f.has_value());
  ASSERT_EQ(f->zones.size(), 4u);
  const ProfilerZone* gpu = find(*f, "shadows", false);
  const ProfilerZone* update = find(*f, "update", true);
  const ProfilerZone* physics = find(*f, "physics", true);
  const ProfilerZone* cull = find(*f, "cull lights", true);
  ASSERT_TRUE(gpu && update && physics && cull);
  EXPECT_EQ(gpu, &f->zones[0]);  // GPU zones first, CPU zones after
  EXPECT_EQ(gpu->parent, kNoZone);
  EXPECT_EQ(update->parent, kNoZone);
  EXPECT_EQ(&f->zones[physics->parent], update);
  EXPECT_EQ(&f->zones[cull->parent], update);
  EXPECT_EQ(physics->depth, 1u);
  EXPECT_EQ(f->zones[update->first_child].name, std::string_view("physics"));
  for (const ProfilerZone* z : {update, physics, cull}) {
    EXPECT_TRUE(z->ok()) << z->name;
    EXPECT_TRUE(z->cpu_recorded) << z->name;
    EXPECT_FALSE(z->host_mapped) << z->name;
    EXPECT_EQ(z->duration_ns, z->cpu_end_ns - z->cpu_begin_ns) << z->name;
    EXPECT_GE(z->cpu_begin_ns, update->cpu_begin_ns) << z->name;
    EXPECT_LE(z->cpu_end_ns, update->cpu_end_ns) << z->name;
  }
  EXPECT_GE(update->cpu_begin_ns, before);
  EXPECT_LE(update->cpu_end_ns, after);
  EXPECT_GE(physics->duration_ns, 2'000'000);  // sleep_for sleeps at least that
  EXPECT_LE(physics->cpu_end_ns, cull->cpu_begin_ns);
  // Source location for the macro's literal name, none for the runtime one.
  ASSERT_NE(update->site, nullptr);
  EXPECT_STREQ(update->site->function, "TestBody");
  EXPECT_EQ(cull->site, nullptr);
  EXPECT_EQ(r.prof->counters().cpu_zones_collected, 3u);
}

TEST(CpuZone, NullProfilerRecordsNothing) {
  Rig r;
  GpuProfiler* off = nullptr;
  {
    LATLAB_CPU_ZONE(off, "off");
    const CpuZone z(nullptr, "off too");
    EXPECT_FALSE(z.recorded());
  }
  r.close_frame();
  EXPECT_FALSE(r.prof->latest_frame().has_value()) << "nothing was recorded: no frame to collect";
  EXPECT_EQ(r.prof->counters().cpu_zones_collected, 0u);
}

TEST(CpuZone, BoundedPerFrameAndDroppedZonesAreCounted) {
  Rig r({.max_cpu_zones_per_frame = 2});
  for (int i = 0; i < 5; ++i) {
    LATLAB_CPU_ZONE(r.prof, "tick");
  }
  r.close_frame();
  auto f = r.prof->latest_frame();
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->zones.size(), 2u);
  EXPECT_EQ(f->cpu_zones_dropped, 3u);
  EXPECT_EQ(f->zones_dropped, 0u);
  EXPECT_EQ(r.prof->counters().cpu_zones_dropped, 3u);
  // A frame that dropped CPU zones gives their names no sample.
  auto stats = r.prof->stats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].frames, 0u);
  EXPECT_EQ(stats[0].frames_missing, 1u);
  EXPECT_NE(format_frame_tree("q", *f).find("3 CPU zones dropped"), std::string::npos);
  // The next frame has its own records.
  { LATLAB_CPU_ZONE(r.prof, "tick"); }
  r.close_frame();
  f = r.prof->latest_frame();
  EXPECT_EQ(f->zones.size(), 1u);
  EXPECT_EQ(f->cpu_zones_dropped, 0u);

  Rig none({.max_cpu_zones_per_frame = 0});
  { LATLAB_CPU_ZONE(none.prof, "nowhere"); }
  none.close_frame();
  EXPECT_TRUE(none.prof->latest_frame()->zones.empty());
  EXPECT_EQ(none.prof->counters().cpu_zones_dropped, 1u);
}

TEST(CpuZone, AFrameWaitsForItsOpenCpuZones) {
  Rig r;
  std::optional<CpuZone> open;
  open.emplace(r.prof.get(), "spans the frame");
  r.close_frame();  // frame 0 closed with a CPU zone still open
  EXPECT_FALSE(r.prof->frame(0).has_value());
  EXPECT_EQ(r.prof->counters().frames_collected, 0u);
  open.reset();
  r.prof->collect();
  const auto f = r.prof->frame(0);
  ASSERT_TRUE(f.has_value());
  ASSERT_EQ(f->zones.size(), 1u);
  EXPECT_TRUE(f->zones[0].cpu);
}

TEST(CpuZone, StatRowsAreMarkedCpuApartFromGpuRowsOfTheSameName) {
  Rig r;
  for (int frame = 0; frame < 3; ++frame) {
    {
      LATLAB_CPU_ZONE(r.prof, "shadows");
      LATLAB_GPU_ZONE(r.prof, &r.cmd, "shadows");
    }
    r.close_frame();
  }
  const auto stats = r.prof->stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_FALSE(stats[0].cpu);
  EXPECT_TRUE(stats[1].cpu);
  for (const ZoneStat& s : stats) {
    EXPECT_EQ(s.name, "shadows");
    EXPECT_EQ(s.frames, 3u);
    EXPECT_DOUBLE_EQ(s.calls_per_frame, 1.0);
  }
  EXPECT_NEAR(stats[0].avg_ms, 10e-6, 1e-12);  // the sim's 10 ticks of 1 ns
  const std::string table = format_stat_table("graphics", stats);
  const size_t gpu_at = table.find("GPU zones on 'graphics' (per frame, device time, ms)");
  const size_t cpu_at = table.find("CPU zones on 'graphics' (per frame, host time, ms)");
  ASSERT_NE(gpu_at, std::string::npos) << table;
  ASSERT_NE(cpu_at, std::string::npos) << table;
  EXPECT_LT(gpu_at, cpu_at);
  // Without CPU zones the table is as before: no CPU section.
  Rig gpu_only;
  { LATLAB_GPU_ZONE(gpu_only.prof, &gpu_only.cmd, "a"); }
  gpu_only.close_frame();
  EXPECT_EQ(format_stat_table("q", gpu_only.prof->stats()).find("CPU zones"), std::string::npos);
}

TEST(CpuZone, TraceHasTheCpuZoneOnItsThreadsTrackAndTheGpuZoneOnTheStream) {
  Rig r;
  r.prof->set_clock_mapper([](uint64_t ticks) -> std::optional<MappedTime> {
    return MappedTime{static_cast<int64_t>(ticks), 0};
  });
  {
    LATLAB_CPU_ZONE(r.prof, "submit");
    LATLAB_GPU_ZONE(r.prof, &r.cmd, "draw");
  }
  r.close_frame();
  const auto f = r.prof->latest_frame();
  ASSERT_TRUE(f.has_value());
  const ProfilerZone* cpu = find(*f, "submit", true);
  ASSERT_NE(cpu, nullptr);
  ChromeTrace trace;
  trace.add_frame("gpu", *f);
  EXPECT_EQ(trace.gpu_zones_unmapped(), 0u);  // a CPU zone needs no mapping
  EXPECT_EQ(trace.gpu_zones_without_time(), 0u);
  const auto doc = nlohmann::json::parse(trace.to_json());
  // tid -> track name, per pid.
  std::map<std::pair<int, int>, std::string> tracks;
  for (const auto& ev : doc.at("traceEvents")) {
    if (ev.at("ph") == "M" && ev.at("name") == "thread_name") {
      tracks[{ev.at("pid").get<int>(), ev.at("tid").get<int>()}] = ev.at("args").at("name");
    }
  }
  int seen = 0;
  for (const auto& ev : doc.at("traceEvents")) {
    if (ev.at("ph") != "B") continue;
    const std::string track = tracks[{ev.at("pid").get<int>(), ev.at("tid").get<int>()}];
    if (ev.at("name") == "submit") {
      ++seen;
      EXPECT_EQ(track, "CPU thread " + std::to_string(cpu->thread));
      EXPECT_EQ(ev.at("cat"), "cpu");
      EXPECT_EQ(ev.at("args").at("duration_ns"), cpu->duration_ns);
      EXPECT_EQ(ev.at("args").at("function"), "TestBody");
    } else if (ev.at("name") == "draw") {
      ++seen;
      EXPECT_EQ(track, "GPU gpu (thread " + std::to_string(cpu->thread) + ")");
      EXPECT_EQ(ev.at("cat"), "gpu");
    }
  }
  EXPECT_EQ(seen, 2);
}

}  // namespace
}  // namespace latlab
