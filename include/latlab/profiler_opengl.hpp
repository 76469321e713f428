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
// On a program's own context, one object: with the context current,
//   auto gpu = latlab::gl::attach_current({.name = "gl"});   // gl::Gpu
//   { LATLAB_GPU_ZONE(*gpu, (*gpu)->context(), "shadows"); ... }
//   (*gpu)->frame();              // after the swap; after glFinish: finish()
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

#include "latlab/clock_sync.hpp"
#include "latlab/opengl.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_attached.hpp"
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

namespace gl {

// Holds the context gl::attach_current made, as Gpu's first base: destroyed
// after the profiler, its query objects and the clock sync that use it.
struct OwnedContext {
  std::unique_ptr<GlContext> context;
};

// One owner of everything latlab keeps on a GL context: the attachment of
// the context, the profiler's query objects, the clock sync and the
// profiler (with the trace, stats and teardown of AttachedProfiler). Zones
// take the context: LATLAB_GPU_ZONE(*gpu, (*gpu)->context(), "name").
//
// Threads: everything on the thread where the context is current (GL's
// rule; see above). Ownership: the program's context must outlive it;
// destroy it with the context current.
class Gpu final : private OwnedContext, public AttachedProfiler<GlContext*> {
 public:
  // Attaches to the context current on the calling thread. Errors (with
  // why): no context is current, it has no timestamp queries, the query
  // objects cannot be created.
  static Result<std::unique_ptr<Gpu>> attach_current(GpuProfilerDesc desc = {}) {
    auto ctx = GlContext::attach_current();
    if (!ctx) return ctx.error();
    GlContext& c = *ctx.value();
    return make(std::move(ctx.value()), c, std::move(desc));
  }
  // The same on latlab's own GlContext (current on this thread), which must
  // outlive it.
  static Result<std::unique_ptr<Gpu>> attach(GlContext& ctx, GpuProfilerDesc desc = {}) {
    return make(nullptr, ctx, std::move(desc));
  }
  ~Gpu() = default;

  // Once per frame, at its end (after the swap) or at its start: closes the
  // frame if it holds a zone and collects what is ready; never waits.
  // Returns the open frame's id.
  uint64_t frame() { return profiler().next_frame(); }
  // The stream zones take.
  GlContext* context() const { return context_; }

 private:
  static Result<std::unique_ptr<Gpu>> make(std::unique_ptr<GlContext> owned, GlContext& ctx,
                                           GpuProfilerDesc desc) {
    auto prof = create_gl_profiler(ctx, std::move(desc));
    if (!prof) return prof.error();
    std::unique_ptr<ClockSync> clock = start_clock_sync(ctx);
    return std::unique_ptr<Gpu>(
        new Gpu(std::move(owned), ctx, std::move(prof.value()), std::move(clock)));
  }
  Gpu(std::unique_ptr<GlContext> owned, GlContext& ctx, std::unique_ptr<GlGpuProfiler> prof,
      std::unique_ptr<ClockSync> clock)
      : OwnedContext{std::move(owned)},
        AttachedProfiler(std::move(prof), std::move(clock)),
        context_(&ctx) {}
  GlContext* context_;
};

// latlab::gl::attach_current(desc): Gpu::attach_current.
inline Result<std::unique_ptr<Gpu>> attach_current(GpuProfilerDesc desc = {}) {
  return Gpu::attach_current(std::move(desc));
}

}  // namespace gl

}  // namespace latlab
