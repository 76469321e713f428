// The GPU profiler on OpenGL: zones are recorded into a GL context and timed
// by the backend's GlTimestampSlots (opengl.hpp).
//
//   auto ctx = GlContext::create({}).value();            // current on this thread
//   auto prof = create_gl_profiler(*ctx, {.name = "gl"}).value();
//   {
//     LATLAB_GPU_ZONE(prof, ctx.get(), "shadows");      // stream: the GlContext*
//     glDispatchCompute(...);
//   }
//   ring->submit(slot);                                   // GlFrameRing: fence + flush
//   prof->next_frame();                                   // collects what is ready
//   ... once that slot's fence signalled: prof->retire_frame(its frame id);
//
// GL records into the context, not a stream object: the profiler is a
// GlGpuProfiler, whose zones take the profiler's GlContext* (nullptr: the
// context current on the thread) and nothing else; a VkCommandBuffer or a
// void* does not compile (TypedGpuProfiler, profiler.hpp).
//
// On a program's own context: GlContext::attach_current() with it current
// (opengl.hpp), then the same; start_clock_sync(*ctx) gives the mapper.
//
// What a zone spans. Each edge is glQueryCounter(GL_TIMESTAMP), which GL
// records once every command issued before it has completed. So a zone spans
// from the completion of everything before it to the completion of everything
// inside it: children lie inside their parent, and GL runs one context's
// commands in order, so siblings do not overlap.
//
// Threads. A GL context is current on at most one thread, and query objects
// belong to it. Record zones, and call next_frame(), collect() and
// retire_frame(), on the thread where `ctx` is current: collection reads the
// query objects, and from a thread without the context it reads nothing (the
// frames wait, nothing is lost or invented). A zone recorded where the
// context is not current, or into another context, is refused and counted
// (GlTimestampSlots::write_errors); retire_frame() then makes it invalid.
// Zones from several threads need one context and one profiler per thread.
//
// Ownership: the profiler shares its slots, which refer to `ctx`: the
// context must outlive the profiler. Destroy the profiler with the context
// current (its query objects are deleted then; else the context's
// destruction frees them).
#pragma once

#include <memory>
#include <utility>

#include "latlab/opengl.hpp"
#include "latlab/profiler.hpp"
#include "latlab/result.hpp"

namespace latlab {

// A GpuProfiler whose zones record into a GL context (its GlContext*).
using GlGpuProfiler = TypedGpuProfiler<GlContext*>;

// The profiler on GlTimestampSlots of GpuProfiler::slots_needed(desc) query
// objects in `ctx`, which must be current on the calling thread. Errors (with
// why): the context is not current, it has no timestamp queries, the query
// objects cannot be created.
inline Result<std::unique_ptr<GlGpuProfiler>> create_gl_profiler(GlContext& ctx,
                                                                 GpuProfilerDesc desc = {}) {
  auto slots = GlTimestampSlots::create(
      ctx, {.count = GpuProfiler::slots_needed(desc), .disjoint_probe = {}});
  if (!slots) return slots.error();
  return GlGpuProfiler::create(std::move(slots.value()), std::move(desc));
}

}  // namespace latlab
