// CPU zones from 2 and 3 threads at once while another thread closes frames
// under them (run under TSan, label threads): every recorded zone is
// collected exactly once, every dropped one counted, and each nests only in
// CPU zones of its own thread, inside their times.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/bench/sim_timestamp_slots.hpp"
#include "latlab/profiler.hpp"

namespace latlab {
namespace {

// Nested CPU zones (depth 3) with a GPU zone inside the innermost.
void record_tree(GpuProfiler& prof, GpuCommandStream stream, uint64_t& recorded,
                 uint64_t& dropped) {
  const CpuZone outer(&prof, "outer");
  for (int i = 0; i < 2; ++i) {
    const CpuZone mid(&prof, "mid");
    {
      const CpuZone inner(&prof, "inner");
      LATLAB_GPU_ZONE(prof, stream, "gpu");
      (inner.recorded() ? recorded : dropped) += 1;
    }
    (mid.recorded() ? recorded : dropped) += 1;
  }
  (outer.recorded() ? recorded : dropped) += 1;
}

// Problems found in one frame's CPU zones (0: none).
int check_frame(const ProfilerFrame& f) {
  int bad = 0;
  for (const ProfilerZone& z : f.zones) {
    if (z.parent == kNoZone) continue;
    const ProfilerZone& p = f.zones[z.parent];
    if (p.cpu != z.cpu || p.thread != z.thread) ++bad;
    if (z.cpu && (z.cpu_begin_ns < p.cpu_begin_ns || z.cpu_end_ns > p.cpu_end_ns)) ++bad;
  }
  return bad;
}

void cpu_zones_from_threads(int threads) {
  auto writer = SimTimestampSlots::create({.count = 4 * 2 * 64, .immediate = true});
  auto prof =
      GpuProfiler::create(
          writer, {.max_zones_per_frame = 64, .frames_in_flight = 3, .max_cpu_zones_per_frame = 8})
          .value();
  std::atomic<int> bad{0};
  uint64_t collected = 0;  // written by the sink, under the profiler's mutex
  prof->set_frame_sink([&](const ProfilerFrame& f) {
    bad.fetch_add(check_frame(f));
    for (const ProfilerZone& z : f.zones) collected += z.cpu ? 1 : 0;
  });
  std::atomic<bool> stop{false};
  std::atomic<int> trees{0};
  std::vector<uint64_t> recorded(threads, 0), dropped(threads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      int stream_tag = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        record_tree(*prof, &stream_tag, recorded[t], dropped[t]);
        trees.fetch_add(1, std::memory_order_relaxed);
        std::this_thread::yield();
      }
    });
  }
  for (int frame = 0; frame < 200 || trees.load(std::memory_order_relaxed) < 3000; ++frame) {
    prof->next_frame();
    std::this_thread::yield();
  }
  stop = true;
  for (auto& th : pool) th.join();
  prof->next_frame();  // closes the last frame the threads recorded into
  prof->collect();
  uint64_t rec = 0, drop = 0;
  for (int t = 0; t < threads; ++t) {
    rec += recorded[t];
    drop += dropped[t];
  }
  EXPECT_EQ(bad.load(), 0);
  const ProfilerCounters c = prof->counters();
  EXPECT_EQ(c.cpu_zones_collected, rec);
  EXPECT_EQ(collected, rec);
  EXPECT_EQ(c.cpu_zones_dropped, drop);
  EXPECT_GT(rec, 0u);  // (8 records a frame: runs here drop from 1% to 95% of them)
}

TEST(CpuZoneThreads, TwoThreads) { cpu_zones_from_threads(2); }
TEST(CpuZoneThreads, ThreeThreads) { cpu_zones_from_threads(3); }

}  // namespace
}  // namespace latlab
