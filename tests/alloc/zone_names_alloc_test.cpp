// A transient zone allocates nothing once its name has been used on the
// thread: a replaced global operator new counts this thread's allocations
// (its own binary, so no other test runs with the replacement).
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <string>
#include <string_view>

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

}  // namespace
}  // namespace latlab
