// The reference frame's zone tree (latlab/core/profile_rig.hpp) around a
// rig's passes: recorded once for `profile` and `profile --queues all`.
// Private to the engine; include it where LATLAB_ENABLE_PROFILER is forced
// on (profile_run.cpp, profile_queues_run.cpp).
#pragma once

#include <algorithm>
#include <cstdint>

#include "latlab/core/latency_device.hpp"
#include "latlab/core/profile_rig.hpp"
#include "latlab/profiler.hpp"

namespace latlab::profile_detail {

// Closes a run's trace (partial when `out.partial` says why) and records
// whether it is on disk; a trace the writer already closed counts as written.
template <class Result>
void close_trace(Result& out) {
  if (!out.trace) return;
  out.trace_written = true;
  if (!out.trace->is_open()) return;
  auto w = out.partial.empty() ? out.trace->close() : out.trace->close_partial(out.partial);
  out.trace_written = w.ok();
  if (!w) out.trace_error = w.error().message;
}

// `pass(ProfilePass, complexity)` records one pass and returns Result<void>;
// `post` false: no fragment passes (no `post` zones).
template <class Pass>
Result<void> record_reference_frame(GpuProfiler& prof, GpuCommandStream s, uint32_t c, bool post,
                                    Pass&& pass) {
  const uint32_t c2 = std::min<uint32_t>(kMaxComplexity, 2 * c);
  LATLAB_GPU_ZONE(prof, s, "frame");
  {
    LATLAB_GPU_ZONE(prof, s, "simulate");
    if (auto r = pass(ProfilePass::simulate, c); !r) return r;
  }
  {
    LATLAB_GPU_ZONE(prof, s, "lighting");
    {
      LATLAB_GPU_ZONE(prof, s, "lighting.direct");
      if (auto r = pass(ProfilePass::lighting_direct, c2); !r) return r;
    }
    {
      LATLAB_GPU_ZONE(prof, s, "lighting.indirect");
      if (auto r = pass(ProfilePass::lighting_indirect, c); !r) return r;
    }
  }
  if (!post) return {};
  LATLAB_GPU_ZONE(prof, s, "post");
  {
    LATLAB_GPU_ZONE(prof, s, "post.bloom");
    if (auto r = pass(ProfilePass::bloom, c); !r) return r;
  }
  {
    LATLAB_GPU_ZONE(prof, s, "post.tonemap");
    if (auto r = pass(ProfilePass::tonemap, c); !r) return r;
  }
  return {};
}

}  // namespace latlab::profile_detail
