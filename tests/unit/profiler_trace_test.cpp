// Chrome trace export: well-formed JSON, matched and nested B/E per track,
// CPU and GPU on one host-clock axis, atomic file writes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

// The macros are tested whatever LATLAB_ENABLE_PROFILER the build chose (the
// library is the same either way).
#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/bench/sim_timestamp_slots.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_trace.hpp"
#include "trace_lanes.hpp"

namespace latlab {
namespace {

using nlohmann::json;

// Checks every (pid, tid) track: B/E matched by name, properly nested, ts
// non-decreasing in file order. Returns the spans per track name.
std::map<std::string, std::vector<std::string>> check_tracks(const json& doc) {
  std::map<std::string, std::vector<std::string>> spans;
  test::walk_trace_lanes(doc, [&](int, const std::string& thread, const std::string&,
                                  const std::string& name, double, std::optional<double> begin_ts) {
    if (!begin_ts) spans[thread].push_back(name);
  });
  return spans;
}

TEST(ChromeTrace, ProfilerFramesGiveMatchedCpuAndGpuTracks) {
  auto writer = SimTimestampSlots::create();
  auto prof = GpuProfiler::create(writer, {.name = "graphics", .cpu_zone_times = true}).value();
  // Device ticks are host ns + 1 s: the trace must show host times.
  prof->set_clock_mapper([](uint64_t t) {
    return std::optional<MappedTime>(MappedTime{static_cast<int64_t>(t) - 1'000'000'000, 100});
  });
  ChromeTrace trace;
  prof->set_frame_sink([&](const ProfilerFrame& f) { trace.add_frame("graphics", f); });
  SimCommandStream cmd;
  for (uint64_t k = 0; k < 3; ++k) {
    {
      LATLAB_GPU_ZONE(prof, &cmd, "frame");
      { LATLAB_GPU_ZONE(prof, &cmd, "shadow \"pass\""); }  // needs escaping
      { LATLAB_GPU_ZONE(prof, &cmd, "post"); }
    }
    writer->execute(cmd, 1'000'000'000 + 5'000'000 + k * 1'000'000, 1000);
    prof->next_frame();
  }
  EXPECT_EQ(prof->counters().frames_collected, 3u);
  EXPECT_EQ(trace.gpu_zones_unmapped(), 0u);

  const json doc = json::parse(trace.to_json());
  EXPECT_EQ(doc.at("displayTimeUnit"), "ns");
  EXPECT_EQ(doc.at("otherData").at("clock"), "CLOCK_MONOTONIC");
  const auto spans = check_tracks(doc);
  ASSERT_EQ(spans.count("GPU graphics (thread " +
                        std::to_string(prof->latest_frame()->zones[0].thread) + ")"),
            1u);
  const auto& gpu = spans.at("GPU graphics (thread " +
                             std::to_string(prof->latest_frame()->zones[0].thread) + ")");
  EXPECT_EQ(gpu.size(), 9u);
  EXPECT_EQ(gpu[1], "shadow \"pass\"");
  EXPECT_EQ(spans.at("CPU graphics frames").size(), 3u);
  EXPECT_EQ(spans.at("CPU thread " + std::to_string(prof->latest_frame()->zones[0].thread)).size(),
            9u);

  // The first GPU "frame" zone begins at host 5 ms = 5000 us, exactly.
  bool found = false;
  for (const auto& ev : doc.at("traceEvents")) {
    if (ev.at("ph") == "B" && ev.at("name") == "frame" && ev.at("pid") == 2) {
      EXPECT_DOUBLE_EQ(ev.at("ts").get<double>(), 5000.0);
      EXPECT_EQ(ev.at("args").at("frame"), 0);
      EXPECT_EQ(ev.at("args").at("duration_ns"), 5000);
      found = true;
      break;
    }
  }
  EXPECT_TRUE(found);
}

// A clock model with drift (here the device 35 ppm fast, as an estimated
// fit on lavapipe was): the trace places each frame by the model, but a
// span's length is its device time, ticks x period (never stretched by the
// fitted drift), and children stay in their parent's lane.
TEST(ChromeTrace, SpanLengthsAreDeviceTimeUnderADriftingClock) {
  auto writer = SimTimestampSlots::create();
  auto prof = GpuProfiler::create(writer, {.name = "q"}).value();
  const auto host_of = [](uint64_t t) {
    return 7'000'000 + std::llround(static_cast<double>(t) * (1 - 35e-6));
  };
  prof->set_clock_mapper([&](uint64_t t) {
    return std::optional<MappedTime>(MappedTime{host_of(t), 10});
  });
  ChromeTrace trace;
  prof->set_frame_sink([&](const ProfilerFrame& f) { trace.add_frame("q", f); });
  SimCommandStream cmd;
  {
    LATLAB_GPU_ZONE(prof, &cmd, "frame");
    { LATLAB_GPU_ZONE(prof, &cmd, "a"); }
    { LATLAB_GPU_ZONE(prof, &cmd, "b"); }
  }
  // 1 ns ticks, 1'199'611 apart: frame 5 steps = 5 998 055 ns of device time.
  constexpr int64_t kStep = 1'199'611;
  writer->execute(cmd, 1'000'000'000, kStep);
  prof->next_frame();
  const json doc = json::parse(trace.to_json());
  std::map<std::string, double> begin_us, end_us;
  std::map<std::string, int64_t> arg_ns;
  for (const auto& ev : doc.at("traceEvents")) {
    if (ev.at("pid") != 2 || (ev.at("ph") != "B" && ev.at("ph") != "E")) continue;
    const std::string name = ev.at("name");
    if (ev.at("ph") == "B") {
      begin_us[name] = ev.at("ts").get<double>();
      arg_ns[name] = ev.at("args").at("duration_ns").get<int64_t>();
    } else {
      end_us[name] = ev.at("ts").get<double>();
    }
  }
  ASSERT_EQ(begin_us.size(), 3u);
  const std::map<std::string, int64_t> device_ns{{"frame", 5 * kStep}, {"a", kStep}, {"b", kStep}};
  for (const auto& [name, ns] : device_ns) {
    EXPECT_EQ(arg_ns[name], ns) << name;
    EXPECT_NEAR((end_us[name] - begin_us[name]) * 1000.0, static_cast<double>(ns), 0.5) << name;
  }
  // Placed by the model: the frame begins where its first tick maps.
  EXPECT_NEAR(begin_us["frame"] * 1000.0, static_cast<double>(host_of(1'000'000'000)), 0.5);
  // One lane: every span nests (check_tracks fails otherwise).
  const auto spans = check_tracks(doc);
  EXPECT_EQ(spans.count("GPU q (thread " + std::to_string(prof->latest_frame()->zones[0].thread) +
                        ") #2"),
            0u);
}

TEST(ChromeTrace, OverlappingSpansGoToLanesWithoutChangingTimes) {
  ChromeTrace trace;
  EXPECT_TRUE(trace.add_span("GPU q", "a", 1000, 5000, true));
  EXPECT_TRUE(trace.add_span("GPU q", "b", 4000, 9000, true));  // overlaps a, not nested
  EXPECT_TRUE(trace.add_span("GPU q", "a.child", 1000, 2000, true));
  EXPECT_TRUE(trace.add_span("GPU q", "zero", 5000, 5000, true));
  EXPECT_FALSE(trace.add_span("GPU q", "reversed", 10, 5, true));
  EXPECT_EQ(trace.spans_refused(), 1u);
  const json doc = json::parse(trace.to_json());
  const auto spans = check_tracks(doc);
  EXPECT_EQ(spans.at("GPU q"), (std::vector<std::string>{"a", "a.child", "zero"}));
  EXPECT_EQ(spans.at("GPU q #2"), std::vector<std::string>{"b"});
  for (const auto& ev : doc.at("traceEvents")) {
    if (ev.at("name") != "b") continue;
    EXPECT_DOUBLE_EQ(ev.at("ts").get<double>(), ev.at("ph") == "B" ? 4.0 : 9.0);
  }
}

TEST(ChromeTrace, UnmappedAndUntimedZonesAreCountedNotDrawn) {
  auto writer = SimTimestampSlots::create();
  auto prof = GpuProfiler::create(writer).value();  // no clock mapper
  SimCommandStream cmd;
  { LATLAB_GPU_ZONE(prof, &cmd, "timed"); }
  { LATLAB_GPU_ZONE(prof, &cmd, "lost"); }
  writer->complete(cmd.writes[0].slot, 1);
  writer->complete(cmd.writes[1].slot, 2);
  prof->next_frame();
  prof->retire_frame(0);
  prof->collect();
  ChromeTrace trace;
  trace.add_frame("q", *prof->frame(0));
  EXPECT_EQ(trace.gpu_zones_unmapped(), 1u);
  EXPECT_EQ(trace.gpu_zones_without_time(), 1u);
  const json doc = json::parse(trace.to_json());
  EXPECT_EQ(doc.at("otherData").at("gpu_zones_unmapped"), 1);
  const auto spans = check_tracks(doc);
  EXPECT_EQ(spans.count("GPU q (thread 1)"), 0u);
}

TEST(ChromeTrace, WritesFilesAtomically) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("latlab_trace_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ChromeTrace trace;
  trace.add_span("CPU main", "work", 0, 1500);
  const auto path = (dir / "trace.json").string();
  {
    std::ofstream old(path);
    old << "old content";
  }
  const auto r = trace.write_file(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  const json doc = json::parse(ss.str());
  check_tracks(doc);
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u) << "no temp file left behind";

  const auto bad = trace.write_file((dir / "missing" / "trace.json").string());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("does not exist"), std::string::npos) << bad.error().message;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace latlab
