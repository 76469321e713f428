// Zones compiled out by the program's own -DLATLAB_ENABLE_PROFILER=0: the
// macro keeps the program's value, and the zone macros expand to nothing
// that runs (check-install.sh: no latlab::GpuZone or CpuZone in the binary).
#include <cstdio>

#include "latlab/profiler.hpp"

static_assert(LATLAB_ENABLE_PROFILER == 0,
              "the program's -DLATLAB_ENABLE_PROFILER=0 was overridden (by the package?)");

int main() {
  latlab::GpuProfiler* prof = nullptr;  // never made: the zones must not need one
  int work = 0;
  {
    LATLAB_GPU_ZONE(prof, nullptr, "frame");
    LATLAB_CPU_ZONE(prof, "cpu");
    ++work;
  }
  LATLAB_GPU_NEW_FRAME(prof);
  std::printf("profiler_off: zones compiled out (%d)\n", work);
  return 0;
}
