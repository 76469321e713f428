// A transient zone allocates nothing once its name has been used on the
// thread, and zones recorded from many threads at once allocate nothing: a
// replaced global operator new counts each thread's allocations (its own
// binary, so no other test runs with the replacement).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/bench/sim_timestamp_slots.hpp"
#include "latlab/profiler.hpp"

namespace {
thread_local uint64_t t_allocs = 0;
}

// GCC reads the inlined free() as a mismatch with operator new.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  ++t_allocs;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  ++t_allocs;
  return std::malloc(n == 0 ? 1 : n);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace latlab {
namespace {

TEST(ZoneNamesAlloc, TransientZoneAllocatesOnlyAtANamesFirstUse) {
  auto writer = SimTimestampSlots::create();
  auto prof = GpuProfiler::create(writer).value();
  SimCommandStream cmd;
  cmd.writes.reserve(64);  // the sim stream's own vector is not the profiler's
  // Names the caller already holds (a renderer's material names).
  const std::string names[] = {"albedo", "normal", "roughness_pass_with_a_long_name"};
  const uint64_t before_first = t_allocs;
  for (const std::string& n : names) {
    LATLAB_GPU_ZONE_TRANSIENT(prof, &cmd, n);
  }
  EXPECT_GT(t_allocs, before_first);  // first use: the copy and the tables
  const uint64_t before_again = t_allocs;
  for (int i = 0; i < 5; ++i) {
    for (const std::string& n : names) {
      LATLAB_GPU_ZONE_TRANSIENT(prof, &cmd, n);
    }
    LATLAB_GPU_ZONE_TRANSIENT(prof, &cmd, std::string_view(names[0]));
  }
  EXPECT_EQ(t_allocs, before_again);
  EXPECT_EQ(cmd.writes.size(), 2u * (3 + 5 * 4));
}

// CPU zones: a literal's never allocates, a runtime name's only at its first
// use on the thread; closing and collecting frames of them allocates nothing
// once every name has been tabled.
TEST(ZoneNamesAlloc, CpuZonesAllocateNothingAfterANamesFirstUse) {
  auto writer = SimTimestampSlots::create();
  auto prof = GpuProfiler::create(writer).value();
  const std::string names[] = {"cpu albedo", "cpu normal"};
  const auto frame = [&] {
    LATLAB_CPU_ZONE(prof, "cpu frame");
    for (const std::string& n : names) {
      LATLAB_CPU_ZONE_TRANSIENT(prof, n);
    }
  };
  frame();
  prof->next_frame();  // first collection: the stat table's rows
  const uint64_t before = t_allocs;
  const uint64_t heap_before = prof->counters().heap_allocations;
  for (int i = 0; i < 5; ++i) {
    frame();
    prof->next_frame();
  }
  EXPECT_EQ(t_allocs, before);
  EXPECT_EQ(prof->counters().heap_allocations, heap_before);
  EXPECT_EQ(prof->counters().cpu_zones_collected, 3u * 6);
}

// Zones from 2, 3 and 8 threads at once, while the test's thread closes,
// retires and collects frames under them: each recording thread's lane
// binds at its first zone; after that no zone allocates (blocks claimed,
// blocks of closed frames skipped, lanes held by the collector).
TEST(ZoneThreadsAlloc, ZonesFromManyThreadsAtOnceAllocateNothing) {
  constexpr uint32_t kZonesPerRound = 400;
  constexpr int kRounds = 20;
  for (const uint32_t n : {2u, 3u, 8u}) {
    auto writer = SimTimestampSlots::create({.count = 2 * 8192 * 3});
    auto prof = GpuProfiler::create(
                    writer, {.name = "threads", .max_zones_per_frame = 8192, .frames_in_flight = 2})
                    .value();
    std::atomic<uint32_t> warm{0};
    std::atomic<int> go{0};
    std::atomic<uint32_t> done{0};
    std::vector<uint64_t> allocs(n, ~0ull);
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < n; ++t) {
      threads.emplace_back([&, t] {
        { LATLAB_GPU_ZONE(prof, nullptr, "warm"); }  // binds the lane
        warm.fetch_add(1, std::memory_order_release);
        const uint64_t before = t_allocs;
        for (int round = 0; round < kRounds; ++round) {
          while (go.load(std::memory_order_acquire) <= round) std::this_thread::yield();
          for (uint32_t i = 0; i < kZonesPerRound; ++i) {
            LATLAB_GPU_ZONE(prof, nullptr, "outer");
            if (i % 4 == 0) {
              LATLAB_GPU_ZONE(prof, nullptr, "inner");
            }
          }
          done.fetch_add(1, std::memory_order_release);
        }
        allocs[t] = t_allocs - before;
      });
    }
    while (warm.load(std::memory_order_acquire) != n) std::this_thread::yield();
    // Frames close while the threads record: their blocks of closed frames
    // are skipped by them or by the collector.
    const auto roll = [&] {
      const uint64_t closed = prof->current_frame_id();
      prof->next_frame();
      prof->retire_frame(closed);
      prof->collect();
    };
    for (int round = 0; round < kRounds; ++round) {
      go.store(round + 1, std::memory_order_release);
      while (done.load(std::memory_order_acquire) != n * static_cast<uint32_t>(round + 1)) {
        roll();
        std::this_thread::yield();
      }
      roll();
    }
    for (std::thread& t : threads) t.join();
    for (uint32_t t = 0; t < n; ++t) {
      EXPECT_EQ(allocs[t], 0u) << n << " threads, thread " << t;
    }
    const uint64_t zones = n * (1 + uint64_t{kRounds} * (kZonesPerRound + kZonesPerRound / 4));
    const ProfilerCounters c = prof->counters();
    // Every zone collected once (the last frame too: its threads are done),
    // or dropped where no frame slot was free.
    EXPECT_EQ(c.zones_collected + c.zones_dropped, zones) << n << " threads";
  }
}

}  // namespace
}  // namespace latlab
