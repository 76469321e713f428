// The scoped GPU profiler on the sim timestamp writer: the tests play the GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

// The macros are tested whatever LATLAB_ENABLE_PROFILER the build chose (the
// library is the same either way).
#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/bench/sim_timestamp_slots.hpp"
#include "latlab/clock_model.hpp"
#include "latlab/profiler.hpp"
#include "latlab/stats.hpp"

namespace latlab {
namespace {

struct Rig {
  std::shared_ptr<SimTimestampSlots> writer;
  std::unique_ptr<GpuProfiler> prof;
};

Rig make_rig(GpuProfilerDesc desc = {}, SimTimestampSlotsDesc wdesc = {}) {
  Rig r;
  r.writer = SimTimestampSlots::create(wdesc);
  auto p = GpuProfiler::create(r.writer, std::move(desc));
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  if (p.ok()) r.prof = std::move(p).value();
  return r;
}

// The first zone of `f` named `name`, or nullptr.
const ProfilerZone* find(const ProfilerFrame& f, std::string_view name) {
  for (const auto& z : f.zones) {
    if (z.name == name) return &z;
  }
  return nullptr;
}

std::vector<std::string> child_names(const ProfilerFrame& f, uint32_t i) {
  std::vector<std::string> out;
  const uint32_t first = i == kNoZone ? f.first_root : f.zones[i].first_child;
  for (uint32_t c = first; c != kNoZone; c = f.zones[c].next_sibling)
    out.emplace_back(f.zones[c].name);
  return out;
}

uint32_t index_of(const ProfilerFrame& f, const ProfilerZone* z) {
  return static_cast<uint32_t>(z - f.zones.data());
}

TEST(Profiler, CreateRefusesBadSettings) {
  auto w = SimTimestampSlots::create({.count = 64});
  auto none = GpuProfiler::create(nullptr);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no timestamp slots"), std::string::npos);

  auto small = GpuProfiler::create(w, {.max_zones_per_frame = 16, .frames_in_flight = 3});
  ASSERT_FALSE(small.ok());  // needs 2 * 16 * 4 = 128 queries
  EXPECT_NE(small.error().message.find("128 are needed"), std::string::npos)
      << small.error().message;

  auto zero = GpuProfiler::create(w, {.max_zones_per_frame = 0});
  ASSERT_FALSE(zero.ok());

  auto fits = GpuProfiler::create(w, {.max_zones_per_frame = 8, .frames_in_flight = 3});
  EXPECT_TRUE(fits.ok());
}

TEST(Profiler, NestedZonesFormATreeInRecordingOrder) {
  Rig r = make_rig();
  SimCommandStream cmd;
  {
    LATLAB_GPU_ZONE(r.prof, &cmd, "frame");
    {
      LATLAB_GPU_ZONE(r.prof, &cmd, "shadows");
      { LATLAB_GPU_ZONE(r.prof, &cmd, "cascade0"); }
      {
        LATLAB_GPU_ZONE(r.prof, &cmd, "cascade1");
        { LATLAB_GPU_ZONE(r.prof, &cmd, "deep"); }
      }
    }
    { LATLAB_GPU_ZONE(r.prof, &cmd, "lighting"); }
  }
  // The stream holds begin/end writes in command order: begin frame, begin
  // shadows, begin cascade0, end cascade0, ...
  ASSERT_EQ(cmd.writes.size(), 12u);
  EXPECT_EQ(cmd.writes.front().edge, TimestampEdge::begin);
  EXPECT_EQ(cmd.writes.back().edge, TimestampEdge::end);
  r.writer->execute(cmd, 1000, 10);
  EXPECT_EQ(r.prof->next_frame(), 1u);

  auto f = r.prof->frame(0);
  ASSERT_TRUE(f.has_value());
  ASSERT_EQ(f->zones.size(), 6u);
  EXPECT_EQ(child_names(*f, kNoZone), std::vector<std::string>{"frame"});
  const auto* frame = find(*f, "frame");
  EXPECT_EQ(child_names(*f, index_of(*f, frame)),
            (std::vector<std::string>{"shadows", "lighting"}));
  const auto* shadows = find(*f, "shadows");
  EXPECT_EQ(child_names(*f, index_of(*f, shadows)),
            (std::vector<std::string>{"cascade0", "cascade1"}));
  const auto* deep = find(*f, "deep");
  EXPECT_EQ(deep->depth, 3u);
  EXPECT_EQ(f->zones[deep->parent].name, std::string_view("cascade1"));

  // Every child lies inside its parent; durations follow the ticks.
  for (const auto& z : f->zones) {
    ASSERT_TRUE(z.ok()) << z.name;
    EXPECT_FALSE(z.orphan);
    if (z.parent == kNoZone) continue;
    const auto& p = f->zones[z.parent];
    EXPECT_GE(z.begin_ticks, p.begin_ticks) << z.name;
    EXPECT_LE(z.end_ticks, p.end_ticks) << z.name;
  }
  EXPECT_EQ(frame->begin_ticks, 1000u);
  EXPECT_EQ(frame->duration_ns, 110);  // 12 writes, 10 ticks apart
  EXPECT_EQ(find(*f, "cascade0")->duration_ns, 10);
  EXPECT_EQ(r.writer->double_writes(), 0u);
}

TEST(Profiler, ZoneNamesArePointersNotCopies) {
  Rig r = make_rig();
  SimCommandStream cmd;
  static const char kName[] = "static name";
  { GpuZone z(r.prof.get(), &cmd, kName); }
  r.writer->execute(cmd, 0);
  r.prof->next_frame();
  auto f = r.prof->latest_frame();
  ASSERT_TRUE(f && f->zones.size() == 1);
  EXPECT_EQ(f->zones[0].name, kName);  // the same pointer
}

TEST(Profiler, NullProfilerZoneDoesNothing) {
  GpuProfiler* none = nullptr;
  SimCommandStream cmd;
  { LATLAB_GPU_ZONE(none, &cmd, "nothing"); }
  GpuZone z(nullptr, &cmd, "x");
  EXPECT_FALSE(z.recorded());
  EXPECT_TRUE(cmd.writes.empty());
}

TEST(Profiler, ZonesOnAnotherStreamDoNotNest) {
  Rig r = make_rig();
  SimCommandStream a, b;
  {
    LATLAB_GPU_ZONE(r.prof, &a, "on_a");
    { LATLAB_GPU_ZONE(r.prof, &b, "on_b"); }
    { LATLAB_GPU_ZONE(r.prof, &a, "child_a"); }
  }
  r.writer->execute(a, 100);
  r.writer->execute(b, 5000);
  r.prof->next_frame();
  auto f = r.prof->latest_frame();
  ASSERT_TRUE(f);
  EXPECT_EQ(child_names(*f, kNoZone), (std::vector<std::string>{"on_a", "on_b"}));
  EXPECT_EQ(child_names(*f, index_of(*f, find(*f, "on_a"))), std::vector<std::string>{"child_a"});
}

TEST(Profiler, FramesInFlightAreCollectedLateAndInOrder) {
  Rig r = make_rig({.frames_in_flight = 3});
  SimCommandStream cmd[3];
  for (int i = 0; i < 3; ++i) {
    { LATLAB_GPU_ZONE(r.prof, &cmd[i], "pass"); }
    r.prof->next_frame();  // nothing executed yet: nothing collected, nothing waited for
  }
  EXPECT_EQ(r.prof->counters().frames_collected, 0u);
  EXPECT_FALSE(r.prof->latest_frame().has_value());

  // The device finishes frame 2 before frame 1: frame 2 waits behind frame 1.
  r.writer->execute(cmd[0], 100, 7);
  r.writer->execute(cmd[2], 300, 9);
  EXPECT_EQ(r.prof->collect(), 1u);
  EXPECT_EQ(r.prof->latest_frame()->frame_id, 0u);
  EXPECT_EQ(r.prof->latest_frame()->zones[0].duration_ns, 7);
  EXPECT_EQ(r.prof->collect(), 0u);

  r.writer->execute(cmd[1], 200, 8);
  EXPECT_EQ(r.prof->collect(), 2u);
  EXPECT_EQ(r.prof->frame(1)->zones[0].duration_ns, 8);
  EXPECT_EQ(r.prof->frame(2)->zones[0].duration_ns, 9);
  EXPECT_EQ(r.prof->counters().frames_without_queries, 0u);
}

TEST(Profiler, HalfWrittenFrameIsNotReady) {
  Rig r = make_rig();
  SimCommandStream cmd;
  { LATLAB_GPU_ZONE(r.prof, &cmd, "a"); }
  r.prof->next_frame();
  ASSERT_EQ(cmd.writes.size(), 2u);
  r.writer->complete(cmd.writes[0].slot, 10);  // begin written, end not yet
  EXPECT_EQ(r.prof->collect(), 0u);
  r.writer->complete(cmd.writes[1].slot, 25);
  EXPECT_EQ(r.prof->collect(), 1u);
  EXPECT_EQ(r.prof->latest_frame()->zones[0].duration_ns, 15);
}

TEST(Profiler, FullFrameDropsAndCountsZonesNeverInventsTimes) {
  Rig r = make_rig({.max_zones_per_frame = 4});
  SimCommandStream cmd;
  std::vector<bool> recorded;
  {
    GpuZone outer(r.prof.get(), &cmd, "outer");
    recorded.push_back(outer.recorded());
    for (int i = 0; i < 3; ++i) {
      GpuZone z(r.prof.get(), &cmd, "inner");
      recorded.push_back(z.recorded());
    }
    GpuZone late(r.prof.get(), &cmd, "late");  // the frame is full
    recorded.push_back(late.recorded());
    GpuZone under_late(r.prof.get(), &cmd, "under_late");
    recorded.push_back(under_late.recorded());
  }
  EXPECT_EQ(recorded, (std::vector<bool>{true, true, true, true, false, false}));
  EXPECT_EQ(cmd.writes.size(), 8u);  // dropped zones write nothing
  r.writer->execute(cmd, 0);
  r.prof->next_frame();
  auto f = r.prof->latest_frame();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->zones.size(), 4u);
  EXPECT_EQ(f->zones_dropped, 2u);
  EXPECT_EQ(find(*f, "late"), nullptr);
  EXPECT_EQ(r.prof->counters().zones_dropped, 2u);
  EXPECT_EQ(r.prof->counters().zones_ok, 4u);
}

TEST(Profiler, ChildOfADroppedZoneIsAnOrphanRoot) {
  Rig r = make_rig({.max_zones_per_frame = 2});
  SimCommandStream cmd;
  {
    LATLAB_GPU_ZONE(r.prof, &cmd, "a");
    LATLAB_GPU_ZONE(r.prof, &cmd, "b");
    LATLAB_GPU_ZONE(r.prof, &cmd, "dropped");
  }
  r.writer->execute(cmd, 0);
  r.prof->next_frame();
  {
    // The next frame has room again.
    LATLAB_GPU_ZONE(r.prof, &cmd, "again");
  }
  r.writer->execute(cmd, 100);
  r.prof->next_frame();
  EXPECT_EQ(r.prof->frame(0)->zones_dropped, 1u);
  ASSERT_TRUE(r.prof->frame(1).has_value());
  EXPECT_EQ(r.prof->frame(1)->zones.size(), 1u);
}

TEST(Profiler, ZoneSpanningNextFrameHoldsItsFrameAndOrphansChildren) {
  Rig r = make_rig();
  SimCommandStream cmd;
  {
    LATLAB_GPU_ZONE(r.prof, &cmd, "long");
    r.prof->next_frame();  // frame 0 closes while "long" is still open
    { LATLAB_GPU_ZONE(r.prof, &cmd, "child_in_frame1"); }
    r.writer->execute(cmd, 0);  // writes so far: begin long, child begin/end
    EXPECT_EQ(r.prof->collect(), 0u) << "frame 0 must wait for its open zone";
  }
  r.writer->execute(cmd, 50);  // end of long
  r.prof->next_frame();
  ASSERT_TRUE(r.prof->frame(0).has_value());
  ASSERT_TRUE(r.prof->frame(1).has_value());
  const auto f1 = r.prof->frame(1);
  const auto& child = f1->zones.at(0);
  EXPECT_TRUE(child.orphan);
  EXPECT_EQ(child.parent, kNoZone);
  EXPECT_EQ(child.depth, 0u);
  EXPECT_TRUE(r.prof->frame(0)->zones.at(0).ok());
}

TEST(Profiler, FrameWithoutFreeSlotDropsItsZones) {
  Rig r = make_rig({.max_zones_per_frame = 4, .frames_in_flight = 1}, {.count = 16});
  SimCommandStream c0, c1, c2;
  { LATLAB_GPU_ZONE(r.prof, &c0, "f0"); }
  r.prof->next_frame();  // 0 pending
  { LATLAB_GPU_ZONE(r.prof, &c1, "f1"); }
  r.prof->next_frame();  // 1 pending; both slots wait: frame 2 has none
  {
    LATLAB_GPU_ZONE(r.prof, &c2, "f2");
    LATLAB_GPU_ZONE(r.prof, &c2, "f2b");
  }
  EXPECT_TRUE(c2.writes.empty());
  auto c = r.prof->counters();
  EXPECT_EQ(c.frames_without_queries, 1u);
  r.writer->execute(c0, 0);
  r.writer->execute(c1, 100);
  r.prof->next_frame();  // closes frame 2 (2 zones dropped), frame 3 gets a slot
  c = r.prof->counters();
  EXPECT_EQ(c.zones_dropped, 2u);
  EXPECT_EQ(c.frames_collected, 2u);
  EXPECT_FALSE(r.prof->frame(2).has_value());
  { LATLAB_GPU_ZONE(r.prof, &c2, "f3"); }
  EXPECT_EQ(c2.writes.size(), 2u);
}

TEST(Profiler, RetiredFrameMarksUnwrittenZonesInvalidAndFreesItsQueries) {
  Rig r = make_rig({.max_zones_per_frame = 2, .frames_in_flight = 1}, {.count = 8});
  const uint64_t resets_at_create = r.writer->slots_reset();  // every slot, once
  EXPECT_EQ(resets_at_create, 8u);
  SimCommandStream cmd;
  { LATLAB_GPU_ZONE(r.prof, &cmd, "written"); }
  { LATLAB_GPU_ZONE(r.prof, &cmd, "lost"); }
  ASSERT_EQ(cmd.writes.size(), 4u);
  r.writer->complete(cmd.writes[0].slot, 10);
  r.writer->complete(cmd.writes[1].slot, 20);
  r.prof->next_frame();
  EXPECT_EQ(r.prof->collect(), 0u);
  r.prof->retire_frame(0);
  EXPECT_EQ(r.prof->collect(), 1u);
  auto f = r.prof->frame(0);
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->retired);
  EXPECT_EQ(find(*f, "written")->status, QueryStatus::ok);
  EXPECT_EQ(find(*f, "lost")->status, QueryStatus::invalid);
  EXPECT_EQ(r.prof->counters().zones_invalid, 1u);
  // Its queries are reset when its slot is next opened (frame 2), not before:
  // the app may not have waited the frame's fence yet.
  EXPECT_EQ(r.writer->slots_reset() - resets_at_create, 0u);
  // The retired frame's queries are reusable: no double write.
  cmd.writes.clear();
  for (int i = 0; i < 3; ++i) {
    { LATLAB_GPU_ZONE(r.prof, &cmd, "next"); }
    r.writer->execute(cmd, 1000 + 100 * static_cast<uint64_t>(i));
    r.prof->next_frame();
    if (i == 0) {
      EXPECT_EQ(r.writer->slots_reset() - resets_at_create, 4u);
    }
  }
  EXPECT_EQ(r.writer->double_writes(), 0u);
  EXPECT_EQ(r.prof->counters().frames_without_queries, 0u);
}

TEST(Profiler, DisjointAndReversedAreNotTimes) {
  Rig r = make_rig();
  SimCommandStream cmd;
  { LATLAB_GPU_ZONE(r.prof, &cmd, "disjoint"); }
  { LATLAB_GPU_ZONE(r.prof, &cmd, "reversed"); }
  { LATLAB_GPU_ZONE(r.prof, &cmd, "fine"); }
  r.writer->complete(cmd.writes[0].slot, 10);
  r.writer->complete(cmd.writes[1].slot, 20);
  r.writer->mark_disjoint(cmd.writes[1].slot);
  r.writer->complete(cmd.writes[2].slot, 50);
  r.writer->complete(cmd.writes[3].slot, 40);  // end before begin
  r.writer->complete(cmd.writes[4].slot, 60);
  r.writer->complete(cmd.writes[5].slot, 64);
  r.prof->next_frame();
  auto f = r.prof->latest_frame();
  ASSERT_TRUE(f);
  EXPECT_EQ(find(*f, "disjoint")->status, QueryStatus::disjoint);
  EXPECT_EQ(find(*f, "reversed")->status, QueryStatus::invalid);
  EXPECT_EQ(find(*f, "fine")->duration_ns, 4);
  auto stats = r.prof->stats();
  ASSERT_EQ(stats.size(), 3u);
  EXPECT_EQ(stats[0].name, "disjoint");
  EXPECT_EQ(stats[0].frames, 0u);
  EXPECT_EQ(stats[0].missing, 1u);
  EXPECT_EQ(stats[0].frames_missing, 1u);
  EXPECT_EQ(stats[2].frames, 1u);
  EXPECT_EQ(stats[2].frames_missing, 0u);
  EXPECT_DOUBLE_EQ(stats[2].avg_ms, 4e-6);
}

// Without a final next_frame the last frame would vanish without a word:
// finish() closes it, retires what the device never wrote and collects
// every frame into the sink and the stats.
TEST(Profiler, FinishCollectsTheOpenFrameAndEveryPendingOne) {
  Rig r = make_rig({.frames_in_flight = 2});
  uint32_t sunk = 0;
  r.prof->set_frame_sink([&](const ProfilerFrame&) { ++sunk; });
  constexpr int kFrames = 5;
  for (int f = 0; f < kFrames; ++f) {
    if (f > 0) r.prof->next_frame();
    SimCommandStream cmd;
    {
      LATLAB_GPU_ZONE(r.prof, &cmd, "frame");
      { LATLAB_GPU_ZONE(r.prof, &cmd, "pass"); }
    }
    // The device ran every frame but the fourth (a lost submit, say).
    if (f != 3) r.writer->execute(cmd, 1000 + 100 * static_cast<uint64_t>(f), 10);
  }
  // The fifth frame is still open; the fourth waits for results forever.
  r.prof->collect();
  EXPECT_EQ(sunk, 3u);
  EXPECT_EQ(r.prof->finish(), 2u);
  EXPECT_EQ(sunk, 5u);
  const ProfilerCounters c = r.prof->counters();
  EXPECT_EQ(c.frames_collected, 5u);
  EXPECT_EQ(c.zones_ok, 8u);
  EXPECT_EQ(c.zones_invalid, 2u);  // the fourth frame's, counted, never given a time
  EXPECT_EQ(r.prof->stats().at(0).frames, 4u);
  EXPECT_EQ(r.prof->finish(), 0u);  // nothing open: no empty frame added
  EXPECT_EQ(sunk, 5u);
}

// A frame without a zone is never collected: the GL pattern's next_frame()
// after its last frame, or the Vulkan pattern's first new_frame() after
// set-up, adds no empty frame to the stat window, and both patterns number
// their frames from 0.
TEST(Profiler, AFrameWithoutZonesStaysOpenAndIsNeverCollected) {
  for (const bool close_first : {false, true}) {
    Rig r = make_rig({.frames_in_flight = 2, .stat_window_frames = 4});
    std::vector<uint64_t> ids;
    r.prof->set_frame_sink([&](const ProfilerFrame& f) { ids.push_back(f.frame_id); });
    for (int f = 0; f < 4; ++f) {
      if (close_first) r.prof->next_frame();  // the first closes nothing: set-up only
      SimCommandStream cmd;
      { LATLAB_GPU_ZONE(r.prof, &cmd, "frame"); }
      r.writer->execute(cmd, 100 * (static_cast<uint64_t>(f) + 1));
      if (!close_first) r.prof->next_frame();
    }
    if (!close_first) r.prof->next_frame();  // one more, on the empty open frame
    r.prof->finish();
    const char* how = close_first ? "next_frame first" : "next_frame last";
    EXPECT_EQ(r.prof->stats().at(0).frames, 4u) << how;
    EXPECT_EQ(r.prof->counters().frames_collected, 4u) << how;
    EXPECT_EQ(ids, (std::vector<uint64_t>{0, 1, 2, 3})) << how;
  }
}

// A profiler destroyed with frames never collected says so (and how to keep
// them); one that finished says nothing.
TEST(Profiler, DestroyedWithFramesNotCollectedSaysSo) {
  Rig r = make_rig({.name = "lost"});
  SimCommandStream cmd;
  { LATLAB_GPU_ZONE(r.prof, &cmd, "open"); }
  r.writer->execute(cmd, 100);
  testing::internal::CaptureStderr();
  r.prof.reset();
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("'lost' destroyed with 1 frame(s) not collected (1 zones)"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("finish()"), std::string::npos) << said;

  Rig done = make_rig();
  { LATLAB_GPU_ZONE(done.prof, &cmd, "kept"); }
  done.writer->execute(cmd, 100);
  EXPECT_EQ(done.prof->finish(), 1u);
  testing::internal::CaptureStderr();
  done.prof.reset();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(Profiler, WrapAroundTicksGiveTheRightSpan) {
  Rig r = make_rig({}, {.ticks = TickFormat{.period_num = 1, .period_den = 1, .valid_bits = 16}});
  SimCommandStream cmd;
  { LATLAB_GPU_ZONE(r.prof, &cmd, "wraps"); }
  r.writer->complete(cmd.writes[0].slot, 65530);
  r.writer->complete(cmd.writes[1].slot, 65536 + 4);  // masked to 4
  r.prof->set_clock_mapper([](uint64_t t) -> std::optional<MappedTime> {
    // A fake device whose 16-bit counter has wrapped once before 65530.
    const uint64_t unwrapped = t < 32768 ? t + 65536 : t;
    return MappedTime{static_cast<int64_t>(unwrapped) + 1'000'000, 3};
  });
  r.prof->next_frame();
  const auto latest = r.prof->latest_frame();
  const auto& z = latest->zones.at(0);
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z.duration_ns, 10);
  EXPECT_EQ(z.gpu_begin_host_ns, 1'065'530);
  EXPECT_EQ(z.gpu_end_host_ns, 1'065'540);
}

TEST(Profiler, ClockMapperPlacesZonesOnTheHostTimeline) {
  // 41.666 ns ticks (125/3), a device running 5 ppm fast against the host.
  const TickFormat tf{.period_num = 125, .period_den = 3, .valid_bits = 64};
  Rig r = make_rig({}, {.ticks = tf});
  const int64_t anchor_host = 5'000'000'000;
  r.prof->set_clock_mapper([&](uint64_t t) -> std::optional<MappedTime> {
    const double device_ns = static_cast<double>(tf.ticks_to_ns(t));
    return MappedTime{anchor_host + static_cast<int64_t>(std::llround(device_ns * (1 + 5e-6))),
                      250};
  });
  SimCommandStream cmd;
  {
    LATLAB_GPU_ZONE(r.prof, &cmd, "outer");
    { LATLAB_GPU_ZONE(r.prof, &cmd, "inner"); }
  }
  r.writer->execute(cmd, 24'000'000, 12'000);  // ~1 s into the device clock, 0.5 ms apart
  r.prof->next_frame();
  auto f = r.prof->latest_frame();
  ASSERT_TRUE(f && f->host_mapped);
  EXPECT_EQ(f->map_error_ns, 250);
  for (const auto& z : f->zones) {
    ASSERT_TRUE(z.host_mapped);
    const auto expect = [&](uint64_t t) {
      return anchor_host + std::llround(static_cast<double>(tf.ticks_to_ns(t)) * (1 + 5e-6));
    };
    EXPECT_NEAR(static_cast<double>(z.gpu_begin_host_ns),
                static_cast<double>(expect(z.begin_ticks)), 2.0);
    EXPECT_NEAR(static_cast<double>(z.gpu_end_host_ns), static_cast<double>(expect(z.end_ticks)),
                2.0);
  }
  const auto* inner = find(*f, "inner");
  EXPECT_EQ(inner->duration_ns, tf.ticks_to_ns(12'000));  // device time, exact

  // Without a mapping the frame keeps device times only.
  r.prof->set_clock_mapper([](uint64_t) { return std::optional<MappedTime>{}; });
  { LATLAB_GPU_ZONE(r.prof, &cmd, "unmapped"); }
  r.writer->execute(cmd, 1);
  r.prof->next_frame();
  f = r.prof->latest_frame();
  EXPECT_FALSE(f->host_mapped);
  EXPECT_FALSE(f->zones[0].host_mapped);
  EXPECT_TRUE(f->zones[0].ok());
}

// The mapping line is anchored on two of the frame's ticks; zones before the
// first anchor (another stream that ran first) and after the second (a zone
// outlasting the frame's last) are still placed exactly, and a frame whose
// ok ticks are all equal is still mapped.
TEST(Profiler, ClockMapperPlacesZonesOutsideItsAnchors) {
  Rig r = make_rig();
  // 1 ns ticks, the device 20 ppm slow against the host, 7 ms offset.
  const auto host_of = [](uint64_t t) {
    return 7'000'000 + std::llround(static_cast<double>(t) * (1 - 20e-6));
  };
  r.prof->set_clock_mapper([&](uint64_t t) -> std::optional<MappedTime> {
    return MappedTime{host_of(t), 10};
  });
  SimCommandStream a, b;
  { LATLAB_GPU_ZONE(r.prof, &a, "first_recorded"); }
  { LATLAB_GPU_ZONE(r.prof, &b, "ran_before"); }
  { LATLAB_GPU_ZONE(r.prof, &a, "last_recorded"); }
  // Stream b ran first, far earlier; the first recorded zone lasts longest.
  r.writer->complete(b.writes[0].slot, 1'000'000);
  r.writer->complete(b.writes[1].slot, 1'100'000);
  r.writer->complete(a.writes[0].slot, 50'000'000);
  r.writer->complete(a.writes[1].slot, 90'000'000);
  r.writer->complete(a.writes[2].slot, 60'000'000);
  r.writer->complete(a.writes[3].slot, 61'000'000);
  r.prof->next_frame();
  auto f = r.prof->latest_frame();
  ASSERT_TRUE(f && f->host_mapped);
  for (const auto& z : f->zones) {
    ASSERT_TRUE(z.host_mapped) << z.name;
    EXPECT_NEAR(static_cast<double>(z.gpu_begin_host_ns),
                static_cast<double>(host_of(z.begin_ticks)), 2.0)
        << z.name;
    EXPECT_NEAR(static_cast<double>(z.gpu_end_host_ns), static_cast<double>(host_of(z.end_ticks)),
                2.0)
        << z.name;
  }

  // Every zone empty, at one tick.
  SimCommandStream c;
  { LATLAB_GPU_ZONE(r.prof, &c, "empty"); }
  { LATLAB_GPU_ZONE(r.prof, &c, "empty_too"); }
  for (const auto& w : c.writes) r.writer->complete(w.slot, 123'456'789);
  r.prof->next_frame();
  f = r.prof->latest_frame();
  ASSERT_TRUE(f && f->host_mapped);
  for (const auto& z : f->zones) {
    ASSERT_TRUE(z.ok() && z.host_mapped) << z.name;
    EXPECT_EQ(z.duration_ns, 0);
    EXPECT_NEAR(static_cast<double>(z.gpu_begin_host_ns), static_cast<double>(host_of(123'456'789)),
                1.0);
    EXPECT_EQ(z.gpu_end_host_ns, z.gpu_begin_host_ns);
  }
}

TEST(Profiler, ClockMapperFromAClockFit) {
  EXPECT_FALSE(clock_mapper_from_fit(nullptr)(123).has_value());
  auto fit = std::make_shared<ClockFit>();
  fit->ticks = TickFormat{};
  fit->anchor_device_ticks = 1'000'000;
  fit->anchor_host_ns = 9'000'000;
  fit->drift = 0.0;
  fit->base_error_ns = 40;
  fit->pairs_used = 2;
  Rig r = make_rig();
  r.prof->set_clock_mapper(clock_mapper_from_fit(fit));
  SimCommandStream cmd;
  { LATLAB_GPU_ZONE(r.prof, &cmd, "z"); }
  r.writer->execute(cmd, 1'000'500, 250);
  r.prof->next_frame();
  const auto f = r.prof->latest_frame();
  ASSERT_TRUE(f && f->host_mapped);
  EXPECT_EQ(f->zones[0].gpu_begin_host_ns, 9'000'500);
  EXPECT_EQ(f->zones[0].gpu_end_host_ns, 9'000'750);
  EXPECT_GE(f->map_error_ns, 40);
}

TEST(Profiler, StatsOverASlidingWindow) {
  Rig r = make_rig({.stat_window_frames = 4});
  SimCommandStream cmd;
  // Frame k: "pass" lasts (k + 1) * 10 ns, "twice" twice 5 ns each.
  for (uint64_t k = 0; k < 6; ++k) {
    { LATLAB_GPU_ZONE(r.prof, &cmd, "pass"); }
    { LATLAB_GPU_ZONE(r.prof, &cmd, "twice"); }
    { LATLAB_GPU_ZONE(r.prof, &cmd, "twice"); }
    r.writer->complete(cmd.writes[0].slot, 1000);
    r.writer->complete(cmd.writes[1].slot, 1000 + (k + 1) * 10);
    for (size_t w = 2; w < 6; w += 2) {
      r.writer->complete(cmd.writes[w].slot, 2000);
      r.writer->complete(cmd.writes[w + 1].slot, 2005);
    }
    cmd.writes.clear();
    r.prof->next_frame();
  }
  auto stats = r.prof->stats();
  ASSERT_EQ(stats.size(), 2u);
  const ZoneStat& pass = stats[0];
  EXPECT_EQ(pass.name, "pass");
  EXPECT_EQ(pass.frames, 4u);  // frames 2..5: 30, 40, 50, 60 ns
  EXPECT_DOUBLE_EQ(pass.min_ms, 30e-6);
  EXPECT_DOUBLE_EQ(pass.max_ms, 60e-6);
  EXPECT_DOUBLE_EQ(pass.avg_ms, 45e-6);
  const std::vector<double> v{30e-6, 40e-6, 50e-6, 60e-6};
  EXPECT_DOUBLE_EQ(pass.p95_ms, summarize(v).p95);
  EXPECT_DOUBLE_EQ(pass.calls_per_frame, 1.0);
  EXPECT_DOUBLE_EQ(stats[1].avg_ms, 10e-6);  // per-frame sum of both calls
  EXPECT_DOUBLE_EQ(stats[1].calls_per_frame, 2.0);

  const std::string table = format_stat_table("graphics", stats);
  EXPECT_NE(table.find("p95"), std::string::npos);
  EXPECT_NE(table.find("pass"), std::string::npos);
  EXPECT_LT(table.find("pass"), table.find("twice")) << "sorted by average, largest first:\n"
                                                     << table;
}

// Three calls of 100 ns per frame, one of them disjoint every
// other frame. A frame's sum counts only when all three have a time: 300 ns
// in every frame that has them, the others missing for the name (not a
// 200 ns sum that pulls avg to 250 and min to 200).
TEST(Profiler, StatsLeaveOutFramesWhereACallHasNoTime) {
  Rig r = make_rig({.stat_window_frames = 8});
  SimCommandStream cmd;
  for (uint64_t k = 0; k < 8; ++k) {
    for (int call = 0; call < 3; ++call) {
      LATLAB_GPU_ZONE(r.prof, &cmd, "pass");
    }
    const uint32_t first_end = cmd.writes[1].slot;
    r.writer->execute(cmd, 10'000 * (k + 1), 100);  // each call 100 ns
    if (k % 2 == 1) r.writer->mark_disjoint(first_end);
    r.prof->next_frame();
  }
  const auto stats = r.prof->stats();
  ASSERT_EQ(stats.size(), 1u);
  const ZoneStat& pass = stats[0];
  EXPECT_EQ(pass.frames, 4u);
  EXPECT_EQ(pass.frames_missing, 4u);
  EXPECT_EQ(pass.missing, 4u);  // the disjoint calls
  EXPECT_DOUBLE_EQ(pass.calls_per_frame, 3.0);
  EXPECT_DOUBLE_EQ(pass.avg_ms, 300e-6);
  EXPECT_DOUBLE_EQ(pass.min_ms, 300e-6);
  EXPECT_DOUBLE_EQ(pass.max_ms, 300e-6);
  EXPECT_DOUBLE_EQ(pass.p95_ms, 300e-6);

  const std::string table = format_stat_table("graphics", stats);
  EXPECT_NE(table.find("fr.miss"), std::string::npos) << table;
  // frames, fr.miss, missing
  EXPECT_NE(table.find("      4       4        4\n"), std::string::npos) << table;
}

// A frame that dropped zones (no query pair left) may have dropped a call of
// any name: no name's sum in it is that frame's time.
TEST(Profiler, StatsLeaveOutFramesThatDroppedZones) {
  Rig r = make_rig({.max_zones_per_frame = 2, .stat_window_frames = 8});
  SimCommandStream cmd;
  for (int k = 0; k < 4; ++k) {
    const int calls = k % 2 == 0 ? 3 : 2;  // even frames: the third call is dropped
    for (int call = 0; call < calls; ++call) {
      LATLAB_GPU_ZONE(r.prof, &cmd, "pass");
    }
    r.writer->execute(cmd, 10'000 * static_cast<uint64_t>(k + 1), 100);
    r.prof->next_frame();
  }
  EXPECT_EQ(r.prof->counters().zones_dropped, 2u);
  const auto stats = r.prof->stats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].frames, 2u);
  EXPECT_EQ(stats[0].frames_missing, 2u);
  EXPECT_EQ(stats[0].missing, 0u);  // no recorded call lacks a time
  EXPECT_DOUBLE_EQ(stats[0].avg_ms, 200e-6);
  EXPECT_DOUBLE_EQ(stats[0].min_ms, 200e-6);
}

TEST(Profiler, StatsMergeOneNameFromSeveralPointers) {
  Rig r = make_rig();
  SimCommandStream cmd;
  static const std::string a = "same";
  static const std::string b = "same";
  ASSERT_NE(a.c_str(), b.c_str());
  { GpuZone z(r.prof.get(), &cmd, a.c_str()); }
  { GpuZone z(r.prof.get(), &cmd, b.c_str()); }
  r.writer->execute(cmd, 0, 10);
  r.prof->next_frame();
  auto stats = r.prof->stats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_DOUBLE_EQ(stats[0].calls_per_frame, 2.0);
}

TEST(Profiler, StatTableCountsNamesBeyondCapacity) {
  Rig r = make_rig({.max_zone_names = 1});
  SimCommandStream cmd;
  { LATLAB_GPU_ZONE(r.prof, &cmd, "first"); }
  { LATLAB_GPU_ZONE(r.prof, &cmd, "second"); }
  r.writer->execute(cmd, 0);
  r.prof->next_frame();
  EXPECT_EQ(r.prof->stats().size(), 1u);
  EXPECT_EQ(r.prof->counters().stat_names_dropped, 1u);
}

TEST(Profiler, FrameTreeDump) {
  Rig r = make_rig();
  SimCommandStream cmd;
  {
    LATLAB_GPU_ZONE(r.prof, &cmd, "outer");
    { LATLAB_GPU_ZONE(r.prof, &cmd, "inner"); }
  }
  r.writer->execute(cmd, 0, 1'000'000);
  r.prof->next_frame();
  const std::string dump = format_frame_tree("graphics", *r.prof->frame(0));
  EXPECT_NE(dump.find("frame 0 on 'graphics': 2 zones"), std::string::npos) << dump;
  EXPECT_NE(dump.find("    1.000 ms  inner"), std::string::npos) << dump;  // indented one level
  EXPECT_NE(dump.find("3.000 ms  outer"), std::string::npos) << dump;
}

TEST(Profiler, FrameSinkSeesEveryFrameInOrder) {
  Rig r = make_rig();
  std::vector<uint64_t> seen;
  r.prof->set_frame_sink([&](const ProfilerFrame& f) { seen.push_back(f.frame_id); });
  SimCommandStream cmd[4];
  for (auto& c : cmd) {
    { LATLAB_GPU_ZONE(r.prof, &c, "z"); }
    r.prof->next_frame();
  }
  for (int i = 3; i >= 0; --i) r.writer->execute(cmd[i], 100 * static_cast<uint64_t>(i));
  r.prof->collect();
  EXPECT_EQ(seen, (std::vector<uint64_t>{0, 1, 2, 3}));
}

TEST(Profiler, CpuZoneTimesWhenAskedFor) {
  Rig r = make_rig({.cpu_zone_times = true});
  SimCommandStream cmd;
  { LATLAB_GPU_ZONE(r.prof, &cmd, "z"); }
  r.writer->execute(cmd, 0);
  r.prof->next_frame();
  const auto f = r.prof->latest_frame();
  ASSERT_TRUE(f);
  const auto& z = f->zones.at(0);
  EXPECT_TRUE(z.cpu_recorded);
  EXPECT_GT(z.cpu_begin_ns, 0);
  EXPECT_GE(z.cpu_end_ns, z.cpu_begin_ns);
  EXPECT_GE(z.cpu_begin_ns, f->cpu_begin_ns);
  EXPECT_LE(z.cpu_end_ns, f->cpu_end_ns);
}

TEST(Profiler, NoHeapAllocationPerFrameAfterWarmUp) {
  // 1024 zones (2048 queries) a frame, three names, nested.
  Rig r = make_rig({.max_zones_per_frame = 1024, .frames_in_flight = 3});
  r.prof->set_clock_mapper([](uint64_t t) {
    return std::optional<MappedTime>(MappedTime{static_cast<int64_t>(t), 0});
  });
  SimCommandStream cmd;
  cmd.writes.reserve(4096);
  auto one_frame = [&](uint64_t k) {
    for (int i = 0; i < 341; ++i) {
      LATLAB_GPU_ZONE(r.prof, &cmd, "a");
      LATLAB_GPU_ZONE(r.prof, &cmd, "b");
      LATLAB_GPU_ZONE(r.prof, &cmd, "c");
    }
    { LATLAB_GPU_ZONE(r.prof, &cmd, "a"); }
    r.writer->execute(cmd, k * 100'000);
    r.prof->next_frame();
  };
  for (uint64_t k = 0; k < 8; ++k) one_frame(k);
  const uint64_t warm = r.prof->counters().heap_allocations;
  EXPECT_LE(warm, 3u) << "one per zone name at first sight";
  for (uint64_t k = 8; k < 40; ++k) one_frame(k);
  const auto c = r.prof->counters();
  EXPECT_EQ(c.heap_allocations, warm);
  EXPECT_EQ(c.frames_collected, 40u);
  EXPECT_EQ(c.zones_ok, 40u * 1024u);
  EXPECT_EQ(c.zones_dropped, 0u);
}

}  // namespace
}  // namespace latlab
