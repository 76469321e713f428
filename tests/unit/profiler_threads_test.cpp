// Many threads record zones into their own streams while the owner closes
// and collects frames and readers read stats and frames. Run under TSan
// (label threads): any zone record or frame read before it is fully written
// is a reported race, and the checks below catch torn or lost zones.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <numeric>
#include <string_view>
#include <thread>
#include <vector>

#include "latlab/bench/sim_timestamp_slots.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_trace.hpp"

namespace latlab {
namespace {

constexpr const char* kDepthNames[] = {"level0", "level1", "level2", "level3", "level4"};

// Checks a collected frame: every zone complete, parents precede children on
// the same thread, and (on a monotonic device clock) a child lies inside its
// parent. Returns the number of problems.
int check_frame(const ProfilerFrame& f) {
  int problems = 0;
  for (uint32_t i = 0; i < f.zones.size(); ++i) {
    const ProfilerZone& z = f.zones[i];
    if (z.name == nullptr || z.thread == 0) ++problems;
    if (!z.ok()) ++problems;
    // A zone's name gives its nesting level; under a dropped zone a subtree
    // is an orphan root, so its frame depth may be smaller, never larger.
    const auto level = std::string_view(z.name).back() - '0';
    if (level < 0 || level > 4 || z.depth > static_cast<uint32_t>(level)) ++problems;
    if (z.parent == kNoZone) {
      if (!z.orphan && level != 0) ++problems;  // only an orphan root can be a deeper level
      continue;
    }
    const ProfilerZone& p = f.zones[z.parent];
    if (level != std::string_view(p.name).back() - '0' + 1) ++problems;
    if (z.parent >= i || p.thread != z.thread) ++problems;
    if (z.begin_ticks < p.begin_ticks || z.end_ticks > p.end_ticks) ++problems;
  }
  return problems;
}

void record_nested(GpuProfiler& prof, GpuCommandStream stream, int depth, int max_depth,
                   uint64_t& recorded, uint64_t& dropped) {
  GpuZone z(&prof, stream, kDepthNames[depth]);
  (z.recorded() ? recorded : dropped) += 1;
  if (depth + 1 < max_depth) {
    record_nested(prof, stream, depth + 1, max_depth, recorded, dropped);
    record_nested(prof, stream, depth + 1, max_depth, recorded, dropped);
  }
}

// The zones of every recording thread (per-thread counts, summed once they joined).
uint64_t sum_of(const std::vector<uint64_t>& per_thread) {
  return std::accumulate(per_thread.begin(), per_thread.end(), uint64_t{0});
}

// Free-running: recorders never stop while frames are closed under them. The
// sim device stamps each write at once from one clock, so every zone is
// complete as soon as it ends.
TEST(ProfilerThreads, FreeRunningRecordersOwnerAndReaders) {
  constexpr int kRecorders = 6;
  constexpr int kReaders = 2;
  auto writer = SimTimestampSlots::create({.count = 4 * 2 * 256, .immediate = true});
  auto prof = GpuProfiler::create(writer, {.name = "stress",
                                           .max_zones_per_frame = 256,
                                           .frames_in_flight = 3,
                                           .stat_window_frames = 16,
                                           .cpu_zone_times = true})
                  .value();
  std::atomic<int> bad_frames{0};
  std::atomic<uint64_t> sink_zones{0};
  ChromeTrace trace;  // touched only by the sink, under the profiler's mutex
  prof->set_frame_sink([&](const ProfilerFrame& f) {
    if (check_frame(f) != 0) bad_frames.fetch_add(1);
    sink_zones.fetch_add(f.zones.size());
    trace.add_frame("stress", f);
  });

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> reads{0};
  std::vector<uint64_t> recorded(kRecorders, 0), dropped(kRecorders, 0);
  std::atomic<uint64_t> trees{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kRecorders; ++t) {
    threads.emplace_back([&, t] {
      int stream_tag = 0;  // each thread its own stream identity
      while (!stop.load(std::memory_order_relaxed)) {
        record_nested(*prof, &stream_tag, 0, 1 + (t % 4), recorded[t], dropped[t]);
        trees.fetch_add(1, std::memory_order_relaxed);
        std::this_thread::yield();  // 2-core CI machines: let the owner run
      }
    });
  }
  for (int t = 0; t < kReaders; ++t) {
    threads.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        const auto stats = prof->stats();
        const auto f = prof->latest_frame();
        if (f && check_frame(*f) != 0) bad_frames.fetch_add(1);
        if (f) (void)format_frame_tree("stress", *f);
        (void)format_stat_table("stress", stats);
        (void)prof->counters();
        reads.fetch_add(1, std::memory_order_relaxed);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    });
  }
  // At least 300 frames and 20000 zone trees, so that frames close under
  // recorders many times however the threads are scheduled.
  for (int frame = 0; frame < 300 || trees.load(std::memory_order_relaxed) < 20'000 ||
                      reads.load(std::memory_order_relaxed) < 50;
       ++frame) {
    prof->next_frame();
    std::this_thread::yield();
  }
  stop = true;
  for (auto& th : threads) th.join();
  // Drain: close the last frame and collect everything.
  for (int i = 0; i < 8; ++i) prof->next_frame();

  const uint64_t total_recorded = sum_of(recorded);
  const uint64_t total_dropped = sum_of(dropped);
  const ProfilerCounters c = prof->counters();
  EXPECT_EQ(bad_frames.load(), 0);
  EXPECT_GT(total_recorded, 0u);
  EXPECT_EQ(c.zones_collected, total_recorded) << "every recorded zone is collected exactly once";
  EXPECT_EQ(c.zones_ok, total_recorded);
  EXPECT_EQ(sink_zones.load(), total_recorded);
  EXPECT_EQ(c.zones_dropped, total_dropped) << "every dropped zone is counted";
  EXPECT_EQ(c.frames_collected + c.frames_without_queries + 1, c.frames_opened);
  EXPECT_EQ(writer->double_writes(), 0u);
  EXPECT_EQ(writer->immediate_writes(), 2 * total_recorded);
  EXPECT_GT(reads.load(), 0u);
  EXPECT_EQ(trace.spans_refused(), 0u);
}

// Frames in flight with a device thread: recorders fill their own command
// streams for a frame, the owner closes it and hands the streams to a "GPU"
// thread that executes them two frames later, and collection picks results up
// as they land: never waiting.
TEST(ProfilerThreads, RecordersAndALateDeviceThread) {
  constexpr int kRecorders = 4;
  constexpr int kFrames = 120;
  constexpr int kZonesPerThread = 20;
  auto writer = SimTimestampSlots::create({.count = 4 * 2 * 128});
  auto prof =
      GpuProfiler::create(writer, {.max_zones_per_frame = 128, .frames_in_flight = 3}).value();

  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::vector<SimCommandStream>> submitted;
  bool done = false;
  int executed = 0;  // frames the device has finished
  std::thread gpu([&] {
    uint64_t tick = 1'000;
    for (;;) {
      std::vector<SimCommandStream> work;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return done || submitted.size() >= 2; });
        if (submitted.empty()) return;
        work = std::move(submitted.front());
        submitted.pop_front();
      }
      for (auto& s : work) tick = writer->execute(s, tick, 3);
      {
        std::lock_guard lock(mu);
        ++executed;
      }
      cv.notify_all();
    }
  });

  std::atomic<int> bad{0};
  uint64_t collected_zones = 0;
  prof->set_frame_sink([&](const ProfilerFrame& f) {
    bad += check_frame(f);
    collected_zones += f.zones.size();
  });
  for (int frame = 0; frame < kFrames; ++frame) {
    {
      // The application's fence wait: at most 3 frames on the device.
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return executed >= frame - 2; });
    }
    std::vector<SimCommandStream> streams(kRecorders);
    std::vector<std::thread> recorders;
    for (int t = 0; t < kRecorders; ++t) {
      recorders.emplace_back([&, t] {
        for (int i = 0; i < kZonesPerThread / 2; ++i) {
          GpuZone outer(prof.get(), &streams[t], kDepthNames[0]);
          GpuZone inner(prof.get(), &streams[t], kDepthNames[1]);
        }
      });
    }
    for (auto& r : recorders) r.join();
    prof->next_frame();
    {
      std::lock_guard lock(mu);
      submitted.push_back(std::move(streams));
    }
    cv.notify_all();
  }
  {
    std::lock_guard lock(mu);
    done = true;
  }
  cv.notify_all();
  gpu.join();
  prof->collect();

  const ProfilerCounters c = prof->counters();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(c.frames_collected, static_cast<uint64_t>(kFrames));
  EXPECT_EQ(collected_zones, static_cast<uint64_t>(kFrames * kRecorders * kZonesPerThread));
  EXPECT_EQ(c.zones_ok, collected_zones);
  EXPECT_EQ(c.zones_dropped, 0u);
  EXPECT_EQ(writer->double_writes(), 0u);
}

// The thread that records and closes frames alone takes its zones from its
// lane's blocks; a second thread that records (its own lane, blocks claimed
// from the same cursor) or closes frames (and skips the first thread's
// unused records) must never give two zones the same pair (a double write
// on the sim, a race on the record under TSan) or lose one.
// `second_closes`: the second thread closes frames (next_frame) instead of
// recording zones.
void second_thread_joins_the_first(bool second_closes) {
  auto writer = SimTimestampSlots::create({.count = 4 * 2 * 512, .immediate = true});
  auto prof = GpuProfiler::create(writer, {.name = "first", .max_zones_per_frame = 512}).value();
  std::atomic<int> bad_frames{0};
  prof->set_frame_sink([&](const ProfilerFrame& f) {
    if (check_frame(f) != 0) bad_frames.fetch_add(1);
  });
  int first_stream = 0, second_stream = 0;
  uint64_t recorded = 0, dropped = 0, second_recorded = 0, second_dropped = 0;
  for (int frame = 0; frame < 20; ++frame) {  // alone: the first thread
    for (int i = 0; i < 20; ++i) record_nested(*prof, &first_stream, 0, 3, recorded, dropped);
    prof->next_frame();
  }
  std::atomic<int> second_ops{0};
  std::atomic<bool> stop{false};
  std::thread second([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      if (second_closes)
        prof->next_frame();
      else
        record_nested(*prof, &second_stream, 0, 3, second_recorded, second_dropped);
      second_ops.fetch_add(1, std::memory_order_relaxed);
    }
  });
  // The first thread records on while the second thread starts and goes on.
  for (int frame = 0; frame < 200 || second_ops.load(std::memory_order_relaxed) < 2000; ++frame) {
    for (int i = 0; i < 20; ++i) record_nested(*prof, &first_stream, 0, 3, recorded, dropped);
    if (!second_closes) prof->next_frame();
  }
  stop = true;
  second.join();
  for (int i = 0; i < 8; ++i) prof->next_frame();

  const uint64_t total = recorded + second_recorded;
  const ProfilerCounters c = prof->counters();
  EXPECT_EQ(bad_frames.load(), 0);
  EXPECT_GT(recorded, 0u);
  EXPECT_EQ(c.zones_collected, total) << "every recorded zone is collected exactly once";
  EXPECT_EQ(c.zones_ok, total);
  EXPECT_EQ(c.zones_dropped, dropped + second_dropped);
  EXPECT_EQ(writer->double_writes(), 0u) << "two zones were given the same query";
  EXPECT_EQ(writer->immediate_writes(), 2 * total);
}

TEST(ProfilerThreads, ASecondRecorderJoinsTheFirst) { second_thread_joins_the_first(false); }

TEST(ProfilerThreads, ClosingFramesFromASecondThreadWhileTheFirstRecords) {
  second_thread_joins_the_first(true);
}

// More recording threads than a profiler has lanes (64), all alive at once
// (a thread's lane passes to a later thread only with its thread key): the
// threads beyond take each zone from the shared cursor, beside the lanes'
// blocks, while the main thread closes frames; nothing is lost or written
// twice.
TEST(ProfilerThreads, MoreRecordersThanLanes) {
  constexpr int kRecorders = 70;
  constexpr int kZones = 40;
  auto writer = SimTimestampSlots::create({.count = 4 * 2 * 4096, .immediate = true});
  auto prof = GpuProfiler::create(writer, {.name = "many", .max_zones_per_frame = 4096}).value();
  std::atomic<int> bad_frames{0};
  prof->set_frame_sink([&](const ProfilerFrame& f) {
    if (check_frame(f) != 0) bad_frames.fetch_add(1);
  });
  std::vector<uint64_t> recorded(kRecorders, 0), dropped(kRecorders, 0);
  std::atomic<int> done{0};
  std::atomic<int> started{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kRecorders; ++t) {
    threads.emplace_back([&, t] {
      int stream_tag = 0;
      for (int i = 0; i < kZones; ++i) {
        record_nested(*prof, &stream_tag, 0, 2, recorded[t], dropped[t]);
        if (i == 0) {
          started.fetch_add(1);
          while (started.load() < kRecorders) std::this_thread::yield();
        }
        if (i % 8 == 0) std::this_thread::yield();
      }
      done.fetch_add(1);
    });
  }
  while (done.load() < kRecorders) {
    prof->next_frame();
    std::this_thread::yield();
  }
  for (auto& th : threads) th.join();
  prof->finish();
  const uint64_t total = sum_of(recorded);
  const uint64_t total_dropped = sum_of(dropped);
  const ProfilerCounters c = prof->counters();
  EXPECT_EQ(bad_frames.load(), 0);
  EXPECT_EQ(total + total_dropped, uint64_t{kRecorders} * kZones * 3);
  EXPECT_EQ(c.zones_collected, total);
  EXPECT_EQ(c.zones_ok, total);
  EXPECT_EQ(c.zones_dropped, total_dropped);
  EXPECT_EQ(writer->double_writes(), 0u);
  EXPECT_EQ(writer->immediate_writes(), 2 * total);
}

// One thread recording into more profilers than its lane cache has entries
// (8), in turn: a profiler whose cache entry another took finds the
// thread's lane again, frame after frame, and no zone is lost or doubled.
TEST(ProfilerThreads, OneThreadManyProfilersInTurn) {
  constexpr int kProfilers = 11;
  std::vector<std::shared_ptr<SimTimestampSlots>> writers;
  std::vector<std::unique_ptr<GpuProfiler>> profs;
  for (int p = 0; p < kProfilers; ++p) {
    writers.push_back(SimTimestampSlots::create({.count = 4 * 2 * 256, .immediate = true}));
    profs.push_back(
        GpuProfiler::create(writers.back(), {.name = "p", .max_zones_per_frame = 256}).value());
  }
  int stream_tag = 0;
  uint64_t recorded = 0, dropped = 0;
  std::thread other([&] {  // a second thread, so that collection holds lanes too
    int other_tag = 0;
    uint64_t r = 0, d = 0;
    for (auto& p : profs) record_nested(*p, &other_tag, 0, 1, r, d);
  });
  other.join();
  for (int frame = 0; frame < 20; ++frame) {
    for (int i = 0; i < 30; ++i) {
      for (auto& p : profs) record_nested(*p, &stream_tag, 0, 2, recorded, dropped);
    }
    for (auto& p : profs) p->next_frame();
  }
  for (int p = 0; p < kProfilers; ++p) {
    profs[p]->finish();
    const ProfilerCounters c = profs[p]->counters();
    EXPECT_EQ(c.zones_collected, 20u * 30 * 3 + 1) << "profiler " << p;
    EXPECT_EQ(c.zones_ok, c.zones_collected) << "profiler " << p;
    EXPECT_EQ(writers[p]->double_writes(), 0u) << "profiler " << p;
  }
  EXPECT_EQ(dropped, 0u);
}

}  // namespace
}  // namespace latlab
