// Instructions the profiler spends per zone (recording) and per collected
// frame of 1024 zones = 2048 queries, counted by callgrind between client
// toggles, so the figure does not depend on how busy the machine is:
//
//   valgrind --tool=callgrind --collect-atstart=no build/release/bench/latlab_profiler_instructions
//   record valgrind --tool=callgrind --collect-atstart=no
//   build/release/bench/latlab_profiler_instructions collect
//
// Collected Ir / 200 frames (collect) or / 204800 zones (record). The frame
// mirrors BM_ProfilerCollectFrame2048 (bench/profiler_bench.cpp). Built
// with -DLATLAB_OLD_WRITER_API=1 against a tree whose profiler writes
// through the older writer API (no backend seam), the same program gives
// that tree's figures for comparison.
#include <valgrind/callgrind.h>

#include <cstdio>
#include <cstring>
#include <optional>

#include "latlab/profiler.hpp"
#if LATLAB_OLD_WRITER_API
#include "latlab/profiler_sim.hpp"
using SimSlots = latlab::SimTimestampWriter;
#else
#include "latlab/bench/sim_timestamp_slots.hpp"
using SimSlots = latlab::SimTimestampSlots;
#endif

int main(int argc, char** argv) {
  using namespace latlab;
  if (argc != 2 || (std::strcmp(argv[1], "record") != 0 && std::strcmp(argv[1], "collect") != 0)) {
    std::fprintf(stderr, "usage: %s record|collect (under callgrind --collect-atstart=no)\n",
                 argv[0]);
    return 2;
  }
  const bool collect_phase = std::strcmp(argv[1], "collect") == 0;
  constexpr uint32_t kZones = 1024, kWarmup = 8, kFrames = 200;
#if LATLAB_OLD_WRITER_API
  auto slots = SimSlots::create({.query_count = 2 * kZones * 4});
#else
  auto slots = SimSlots::create({.count = 2 * kZones * 4});
#endif
  auto prof = GpuProfiler::create(slots, {.name = "bench", .max_zones_per_frame = kZones}).value();
  prof->set_clock_mapper([](uint64_t t) {
    return std::optional<MappedTime>(MappedTime{static_cast<int64_t>(t) + 1'000'000, 50});
  });
  SimCommandStream cmd;
  cmd.writes.reserve(2 * kZones);
  uint64_t tick = 0;
  for (uint32_t f = 0; f < kWarmup + kFrames; ++f) {
    const bool counted = f >= kWarmup;
    if (counted && !collect_phase) CALLGRIND_TOGGLE_COLLECT;
    for (uint32_t i = 0; i < kZones / 4; ++i) {
      LATLAB_GPU_ZONE(prof, &cmd, "pass");
      LATLAB_GPU_ZONE(prof, &cmd, "draw");
      { LATLAB_GPU_ZONE(prof, &cmd, "dispatch"); }
      LATLAB_GPU_ZONE(prof, &cmd, "copy");
    }
    if (counted && !collect_phase) CALLGRIND_TOGGLE_COLLECT;
    prof->next_frame();
    tick = slots->execute(cmd, tick, 100);
    if (counted && collect_phase) CALLGRIND_TOGGLE_COLLECT;
    prof->collect();
    if (counted && collect_phase) CALLGRIND_TOGGLE_COLLECT;
  }
  const ProfilerCounters c = prof->counters();
  std::printf("%s: %u frames of %u zones counted; %llu collected in all, %llu zones dropped\n",
              argv[1], kFrames, kZones, static_cast<unsigned long long>(c.frames_collected),
              static_cast<unsigned long long>(c.zones_dropped));
  return c.zones_dropped == 0 ? 0 : 1;
}
