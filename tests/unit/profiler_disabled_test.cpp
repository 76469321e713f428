// A translation unit built with the profiler compiled out: the zone macros
// must still compile with the same arguments, evaluate none of them and
// record nothing. (The library itself is the same in both modes.)
#include <gtest/gtest.h>

#include <string>

#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 0
#include "latlab/bench/sim_timestamp_slots.hpp"
#include "latlab/profiler.hpp"

namespace latlab {
namespace {

TEST(ProfilerDisabled, MacrosCompileToNothing) {
  auto writer = SimTimestampSlots::create();
  auto prof = GpuProfiler::create(writer).value();
  auto typed = TypedGpuProfiler<SimCommandStream*>::create(SimTimestampSlots::create()).value();
  SimCommandStream cmd;
  int evaluated = 0;
  auto stream = [&]() -> GpuCommandStream {
    ++evaluated;
    return &cmd;
  };
  auto profiler = [&]() -> GpuProfiler* {
    ++evaluated;
    return prof.get();
  };
  {
    LATLAB_GPU_ZONE(prof, stream(), "outer");
    LATLAB_GPU_ZONE(profiler(), &cmd, "inner");
    LATLAB_GPU_ZONE(*prof, &cmd, "by reference");
    auto runtime_name = [&]() -> std::string {
      ++evaluated;
      return "runtime";
    };
    LATLAB_GPU_ZONE_TRANSIENT(profiler(), stream(), runtime_name());
    LATLAB_CPU_ZONE(profiler(), "cpu");
    LATLAB_CPU_ZONE(*prof, "cpu by reference");
    LATLAB_CPU_ZONE_TRANSIENT(profiler(), runtime_name());
    LATLAB_GPU_NEW_FRAME(profiler());
    // A typed profiler (its stream still type-checked, not evaluated).
    auto typed_stream = [&]() -> SimCommandStream* {
      ++evaluated;
      return &cmd;
    };
    LATLAB_GPU_ZONE(typed, typed_stream(), "typed");
    LATLAB_GPU_ZONE_TRANSIENT(*typed, typed_stream(), runtime_name());
  }
  EXPECT_EQ(evaluated, 0);
  EXPECT_TRUE(cmd.writes.empty());
  EXPECT_EQ(prof->current_frame_id(), 0u);  // LATLAB_GPU_NEW_FRAME did not run
  prof->next_frame();
  EXPECT_FALSE(prof->latest_frame().has_value()) << "nothing was recorded: no frame to collect";
  EXPECT_EQ(prof->counters().frames_collected, 0u);
  EXPECT_EQ(prof->counters().cpu_zones_dropped, 0u);
}

}  // namespace
}  // namespace latlab
