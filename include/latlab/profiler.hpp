// Scoped GPU profiler: nested zones recorded into the user's command streams,
// frames in flight, per-zone statistics over a sliding window, one frame's tree
// on demand: Unreal's SCOPED_GPU_STAT / FRealtimeGPUProfiler, Tracy's GPU zones.
//
//   auto prof = create_vulkan_profiler(ctx, {.name = "graphics"}).value();
//   {
//     LATLAB_GPU_ZONE(prof, cmd, "shadows");      // begin timestamp into cmd
//     { LATLAB_GPU_ZONE(prof, cmd, "cascade0"); }  // nested, any depth
//   }                                              // end timestamp into cmd
//   prof->next_frame();  // once per frame: closes it, collects what is ready
//   { LATLAB_CPU_ZONE(prof, "build lists"); ... }  // a CPU zone: host clock, same frame
//
// Typed streams. Each API's profiler is a TypedGpuProfiler of the command
// stream its zones record into (VulkanGpuProfiler: VkCommandBuffer,
// CudaGpuProfiler: cudaStream_t, GlGpuProfiler: GlContext*, in their API's
// header); the zone macros and GpuZone accept that stream type only, so a
// cudaStream_t or a plain void* given to a Vulkan profiler does not compile
// (Tracy has one macro family per API for the same end). The type costs
// nothing at run time: zones record exactly as an untyped GpuProfiler's.
// Held as a plain GpuProfiler (as GpuProfiler::create makes one, for the sim
// backend and generic code) a profiler takes any pointer as its stream.
//
// Clock: every host time here is int64 ns of the host clock (CLOCK_MONOTONIC,
// host_clock.hpp). Device ticks become host ns once, at collection, through the
// clock mapper (a ClockFit of the run's clock model, or a test's fake).
//
// Threads and ownership:
//  * Zones may be recorded from any number of threads at once, each into its
//    own command stream. Recording takes no lock, and a thread's zone touches
//    no other thread's cache line: each thread takes its zones' query pairs
//    and records from a block of its own (its lane; up to 64 threads per
//    profiler, more share one cursor with a locked add per zone), and claims
//    blocks from the frame's cursor with one CAS per block. A block's unused
//    records are skipped when the frame closes, by its thread at its next
//    zone or, if it records no more, by the collector, which then holds the
//    lanes' threads out of them once through membarrier(2) (take_pair has
//    the proof; tests/protocol/ parks each thread at each step). Without
//    membarrier every zone takes its pair from the shared cursor.
//    With several threads a frame's last records may sit unused in other
//    threads' blocks when it fills (blocks shrink as it does, to 1/16 of
//    what is left): give max_zones_per_frame some room.
//  * A zone record becomes visible to the collector only when it is complete
//    (its end is stored with release order); a collected frame becomes visible
//    to readers only when it is fully built. Nothing is published half
//    initialised (a query read through a pointer set before the object behind
//    it was initialised is a known crash of such profilers).
//  * next_frame / collect / retire_frame / setters and every reader take one
//    internal mutex that recording never touches; call them from any thread.
//  * The profiler shares the backend's TimestampSlots (timestamp_slots.hpp)
//    through shared_ptr: let the last owner go only after the device has
//    finished the work recorded with it (the queries must outlive it).
//
// Memory is bounded and fixed at create(): the query ring, zone records,
// retained frames and the stat table are allocated once. When a frame runs out
// of queries, or every frame slot still waits for the device, zones are
// dropped and counted: never given made-up times, never a stall.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "latlab/clock_model.hpp"
#include "latlab/detail/profiler_recording.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/query_status.hpp"
#include "latlab/result.hpp"
#include "latlab/tick_format.hpp"
#include "latlab/timestamp_slots.hpp"

// The zone macros are on unless the program defines LATLAB_ENABLE_PROFILER
// 0 (its definition always wins); LATLAB_ENABLE_PROFILER_DEFAULT is the
// package's default (0 from a latlab built with -DLATLAB_ENABLE_PROFILER=OFF).
#ifndef LATLAB_ENABLE_PROFILER
#if defined(LATLAB_ENABLE_PROFILER_DEFAULT) && !LATLAB_ENABLE_PROFILER_DEFAULT
#define LATLAB_ENABLE_PROFILER 0
#else
#define LATLAB_ENABLE_PROFILER 1
#endif
#endif

namespace latlab {

// Device ticks -> host clock; nullopt when no mapping is known (yet).
using GpuClockMapper = std::function<std::optional<MappedTime>(uint64_t device_ticks)>;

// A mapper over one fixed fit (e.g. a test's, or a calibration snapshot).
// A live run passes a lambda that maps through its calibrator's newest fit.
inline GpuClockMapper clock_mapper_from_fit(std::shared_ptr<const ClockFit> fit) {
  return [fit = std::move(fit)](uint64_t ticks) -> std::optional<MappedTime> {
    if (!fit) return std::nullopt;
    return fit->map(ticks);
  };
}

struct GpuProfilerDesc {
  std::string name = "gpu";          // the queue's name in tables and traces
  uint32_t max_zones_per_frame = 1024;  // query pairs per frame (>= 1); more zones are dropped and counted. Default 1024 = 2048 queries.
  uint32_t frames_in_flight = 3;     // frames that may be on the device at once (>= 1); queries are kept for these plus the one being recorded. Default 3.
  uint32_t stat_window_frames = 120; // sliding window of the stat table, in collected frames (>= 1). Default 120.
  uint32_t max_zone_names = 256;     // distinct zone names in the stat table (>= 1); further names are counted, not tabled. Default 256.
  uint32_t retained_frames = 4;      // collected frames kept for frame()/dump (>= 1). Default 4.
  bool cpu_zone_times = false;       // also read the host clock at zone begin/end (CPU spans in traces); costs two clock reads per zone. Default off.
  // CPU zones (LATLAB_CPU_ZONE) per frame; more are dropped and counted
  // (0: every CPU zone is dropped). 32 bytes each per frame slot. Default 256.
  uint32_t max_cpu_zones_per_frame = 256;
};

// Where a zone sits in the source (Tracy's SourceLocationData): the zone
// macros make one per call site, static, so a zone stores one pointer to it.
// Every field points at static storage.
struct ZoneSite {
  const char* name = nullptr;      // the zone's name
  const char* function = nullptr;  // the enclosing function (__func__)
  const char* file = nullptr;      // __FILE__, as the compiler was given it
  uint32_t line = 0;               // __LINE__
};

// One zone of a collected frame.
struct ProfilerZone {
  // The name given at the zone (a literal's, or intern_zone_name's), and its
  // source location (LATLAB_GPU_ZONE's; null for a bare or runtime name).
  const char* name = nullptr;
  const ZoneSite* site = nullptr;
  uint32_t parent = kNoZone;         // index in ProfilerFrame::zones; kNoZone for a root
  uint32_t first_child = kNoZone;    // children in recording order
  uint32_t next_sibling = kNoZone;
  uint32_t depth = 0;                // 0 for a root
  uint32_t thread = 0;               // recording thread's small id (1, 2, ...)
  QueryStatus status = QueryStatus::not_ready;  // ok, invalid (never written / end before begin), disjoint or overlapped
  bool orphan = false;               // an enclosing zone on the same stream was not recorded in this frame (dropped, or opened in an earlier frame)
  bool host_mapped = false;          // gpu_*_host_ns hold values
  bool cpu_recorded = false;         // cpu_*_ns hold values (GpuProfilerDesc::cpu_zone_times)
  uint64_t begin_ticks = 0;          // raw device ticks; meaningful when status is ok or disjoint, 0 in a durations_only frame
  uint64_t end_ticks = 0;
  int64_t duration_ns = 0;           // device duration; valid only when status == ok
  int64_t gpu_begin_host_ns = 0;     // GPU begin/end on the host clock (host_mapped)
  int64_t gpu_end_host_ns = 0;
  int64_t cpu_begin_ns = 0;          // host clock when the zone was recorded (cpu_recorded)
  int64_t cpu_end_ns = 0;
  // A CPU zone (LATLAB_CPU_ZONE): timed on the host clock only (cpu_*_ns,
  // duration_ns), status ok once ended, no device times. CPU zones follow the
  // GPU zones in ProfilerFrame::zones and nest only in CPU zones.
  bool cpu = false;
  bool ok() const { return status == QueryStatus::ok; }
};

// A collected frame: a forest of zones (one tree per root, roots from every
// recording thread), in recording order.
struct ProfilerFrame {
  uint64_t frame_id = 0;
  std::vector<ProfilerZone> zones;
  uint32_t first_root = kNoZone;     // roots chained through next_sibling
  uint32_t zones_dropped = 0;        // zones that found no free query pair
  // CPU zones beyond max_cpu_zones_per_frame (or in a frame without a slot).
  uint32_t cpu_zones_dropped = 0;
  bool retired = false;              // finalised by retire_frame: unwritten zones are invalid
  int64_t cpu_begin_ns = 0;          // host clock when the frame was opened / closed by next_frame
  int64_t cpu_end_ns = 0;
  bool host_mapped = false;          // the clock mapper gave a mapping for this frame
  // The slots time durations only (GL_TIME_ELAPSED): zones have duration_ns
  // but no ticks, are never host_mapped, and a zone opened inside another
  // on the same context is `overlapped` (not timed).
  bool durations_only = false;
  int64_t map_error_ns = 0;          // the mapper's error bound for this frame
  // The device's tick period and valid bits (begin/end_ticks in ns): a
  // trace places a frame's zones by device time from its first one.
  TickFormat ticks{};
};

// `stat gpu`: one zone name over the sliding window. Samples are per frame:
// the summed device time of every zone of that name in the frame, taken only
// when each of them has an ok time. A frame where one of them has none, or
// that dropped zones (any of which may have been one), gives no sample for
// the name and counts in frames_missing: a partial sum is not the frame's
// time. Frames where the name did not appear give no sample (never a zero).
struct ZoneStat {
  std::string name;
  bool cpu = false;             // a CPU zone's row: host time, not device time
  uint32_t frames = 0;          // samples in the window
  double calls_per_frame = 0;   // zones of this name per sampled frame (0 without samples)
  double avg_ms = 0, min_ms = 0, max_ms = 0, p95_ms = 0;  // over the samples (type-7 p95)
  uint64_t missing = 0;         // zones of this name in the window without an ok time
  uint32_t frames_missing = 0;  // frames in the window with this name but no sample (see above)
};

struct ProfilerCounters {
  uint64_t frames_opened = 0;         // the first frame + next_frame calls that closed a frame with a zone
  uint64_t frames_collected = 0;
  uint64_t frames_without_queries = 0;  // every frame slot still waited for the device: the frame's zones were dropped
  uint64_t frames_retired = 0;        // frames finalised by retire_frame
  uint64_t zones_collected = 0;       // zones in collected frames, any status
  uint64_t zones_ok = 0;
  uint64_t zones_dropped = 0;         // no query pair: nothing recorded, no time given
  uint64_t zones_invalid = 0;         // never written before their frame retired, or end before begin
  uint64_t zones_disjoint = 0;
  uint64_t zones_overlapped = 0;      // durations-only slots: opened while another zone was timed
  uint64_t cpu_zones_collected = 0;   // CPU zones in collected frames
  uint64_t cpu_zones_dropped = 0;     // CPU zones with no record left in their frame: not recorded
  uint64_t stat_names_dropped = 0;    // zones not tabled: more than max_zone_names names
  uint64_t heap_allocations = 0;      // growths of the profiler's own buffers after create (0 in steady state)
};

// Runtime zone names (Tracy's transient zones): `name`'s text interned for
// the process; equal text gives the same pointer, valid until the process
// exits (zones and the stat table keep the pointer). A thread's first use of
// a name takes a lock (the process's first also copies the text); its later
// uses find it in a table of the thread's own: no lock, no allocation. At
// most kMaxZoneNames distinct names per process: further names, and a copy
// that could not be allocated, give kZoneNamesFull (each such use takes the
// lock) and are counted by zone_names_refused(). A NUL in `name` ends it.
// Thread-safe.
inline constexpr uint32_t kMaxZoneNames = 4096;
inline constexpr char kZoneNamesFull[] = "(zone names full)";
const char* intern_zone_name(std::string_view name) noexcept;
uint64_t zone_names_refused() noexcept;

// A zone name known only at run time (LATLAB_GPU_ZONE_TRANSIENT): GpuZone
// interns it when the profiler is not null.
struct TransientZoneName {
  std::string_view text;
};


class GpuProfiler : public detail::ZoneRecorder {
 public:
  // Fails (with the reason) when the slots are null, cannot time, or hold too few
  // for 2 * max_zones_per_frame * (frames_in_flight + 1), or a field is 0.
  static Result<std::unique_ptr<GpuProfiler>> create(std::shared_ptr<TimestampSlots> slots,
                                                     GpuProfilerDesc desc = {});
  // Slots the profiler needs for `desc`: 2 * max_zones_per_frame * (frames_in_flight + 1).
  static uint32_t slots_needed(const GpuProfilerDesc& desc) {
    return 2 * desc.max_zones_per_frame * (desc.frames_in_flight + 1);
  }
  // Virtual only so that a TypedGpuProfiler held as a GpuProfiler is
  // destroyed whole; nothing on the recording path is virtual.
  virtual ~GpuProfiler();
  GpuProfiler(const GpuProfiler&) = delete;
  GpuProfiler& operator=(const GpuProfiler&) = delete;

  const GpuProfilerDesc& desc() const { return desc_; }
  const std::string& name() const { return desc_.name; }
  TickFormat tick_format() const { return ticks_; }
  // The slots time durations only: no zone is host mapped (ProfilerFrame::durations_only).
  bool durations_only() const { return slots_->durations_only(); }

  // Closes the current frame (it waits for the device), collects every frame
  // whose results are all available (oldest first, stopping at the first that
  // is not: never waits) and opens the next frame. Returns the new frame's id
  // (the first frame, opened by create, is 0). A frame that holds no zone is
  // not closed: it stays open, starting now, and its id is returned (so
  // calling next_frame first or last in a frame loop numbers frames alike,
  // and no empty frame is collected). If every frame slot still waits
  // for the device, the new frame gets no queries: its zones are dropped and
  // counted (frames_without_queries).
  uint64_t next_frame();
  // Collects what is ready without opening a frame; returns frames collected.
  uint32_t collect();
  // The owner knows frame `frame_id`'s device work has finished (its fence
  // signalled): queries still unavailable will never be written; at the next
  // collection their zones become `invalid` and the slot is freed. Zones still
  // open on the host keep the frame waiting.
  void retire_frame(uint64_t frame_id);
  // Ends a capture once the device finished everything recorded (after the
  // last frame's fence, vkDeviceWaitIdle, cudaDeviceSynchronize, glFinish),
  // with no zone open: closes the open frame if it holds a zone (as
  // next_frame; the frame it opens stays empty), retires every frame still
  // pending (a query never written becomes `invalid`; nothing is waited for)
  // and collects them all, so the last frames reach the sink, the stats and
  // the counters. Call it before closing a trace fed by the sink. Returns the
  // frames collected. A profiler destroyed with frames never collected says
  // so on stderr (how many, and their zones).
  uint32_t finish();

  // Maps ticks to the host clock at collection; null, or durations-only
  // slots: zones keep device times only (host_mapped false). Within a frame, timestamps are mapped on the
  // line through the mappings of two of its ticks (the first ok zone's begin
  // and the later of the first and last ok zones' ends): exact for a linear
  // mapper such as a ClockFit; the frame's error bound is the larger of the two.
  void set_clock_mapper(GpuClockMapper mapper);
  // Called for each collected frame, in order, inside collect (under the
  // profiler's mutex: do not call back into the profiler from it). With a
  // sink every collected frame is built as a full ProfilerFrame (tree, host
  // times) during collection; without one, a frame is kept compact and built
  // only when frame() or latest_frame() asks for it.
  void set_frame_sink(std::function<void(const ProfilerFrame&)> sink);

  // --- readers (any thread) -------------------------------------------------
  uint64_t current_frame_id() const;
  // A retained collected frame, built on demand (a copy; allocates); nullopt
  // if not collected or no longer retained.
  std::optional<ProfilerFrame> frame(uint64_t frame_id) const;
  std::optional<ProfilerFrame> latest_frame() const;
  // Statistics over the sliding window, in first-seen order.
  std::vector<ZoneStat> stats() const;
  ProfilerCounters counters() const;

 protected:
  // create()'s checks of `slots` and `desc`, then the first reset of the
  // slots the profiler will hand out; the error says what does not fit.
  static Result<void> prepare(TimestampSlots* slots, const GpuProfilerDesc& desc);
  // Only after prepare() succeeded.
  GpuProfiler(std::shared_ptr<TimestampSlots> slots, GpuProfilerDesc desc);

 private:
  friend class GpuZone;
  friend class CpuZone;
  struct Impl;

  // Collection, impl_->mu held.
  uint32_t collect_locked();
  bool try_collect_slot(uint32_t slot_index);  // false: not ready
  bool slot_ready(uint32_t slot_index);
  bool gpu_zones_done(uint32_t slot_index, bool& unfinished);
  uint32_t ended_zones(uint32_t slot_index, uint32_t records) const;
  profiler_detail::FrameMapping host_mapping(uint32_t zones) const;
  void tabulate_gpu_zones(uint32_t slot_index, profiler_detail::RetainedFrame& frame);
  void tabulate_cpu_zones(uint32_t slot_index, profiler_detail::RetainedFrame& frame);
  void recycle_slot(uint32_t slot_index);

  GpuProfilerDesc desc_;
  TickFormat ticks_;
  std::shared_ptr<TimestampSlots> slots_;
  alignas(64) std::unique_ptr<Impl> impl_;
};

// A GpuProfiler whose zones record into `Stream` only (see the top of this
// file): what create_vulkan_profiler, create_cuda_profiler and
// create_gl_profiler give. Same object, same recording: the type is checked
// at compile time, where GpuZone is given a stream. `Stream` is the API's
// handle type, a pointer (a dispatchable VkCommandBuffer, cudaStream_t, a
// GlContext*); nullptr is accepted as any pointer is.
template <class Stream>
class TypedGpuProfiler final : public GpuProfiler {
  static_assert(std::is_pointer_v<Stream> && std::is_convertible_v<Stream, GpuCommandStream>,
                "a command stream is an API handle that converts to GpuCommandStream (void*)");

 public:
  using stream_type = Stream;
  // As GpuProfiler::create.
  static Result<std::unique_ptr<TypedGpuProfiler>> create(std::shared_ptr<TimestampSlots> slots,
                                                          GpuProfilerDesc desc = {}) {
    if (auto prepared = prepare(slots.get(), desc); !prepared) return prepared.error();
    return std::unique_ptr<TypedGpuProfiler>(
        new TypedGpuProfiler(std::move(slots), std::move(desc)));
  }

 private:
  TypedGpuProfiler(std::shared_ptr<TimestampSlots> slots, GpuProfilerDesc desc)
      : GpuProfiler(std::move(slots), std::move(desc)) {}
};


}  // namespace latlab

// GpuZone and CpuZone, the RAII zones the macros below make: a zone from
// construction to destruction (GPU: timestamps into the command stream;
// CPU: the host clock); `profiler` null: nothing; not copyable or movable;
// `recorded()` says whether the zone got a record. Their inline bodies are
// in detail/profiler_zones.hpp.
#define LATLAB_PROFILER_ZONES_HERE 1
#include "latlab/detail/profiler_zones.hpp"
#undef LATLAB_PROFILER_ZONES_HERE

namespace latlab {

// Text tables (Unreal's `stat gpu` and ProfileGPU): GPU rows, then CPU
// rows (ZoneStat::cpu) in a table of their own; CPU zones in the tree are
// marked "[CPU thread k]".
std::string format_stat_table(std::string_view queue_name, std::span<const ZoneStat> stats);
// The profiler's table, headed by the frames it covers: the newest
// min(frames collected, GpuProfilerDesc::stat_window_frames).
std::string format_stat_table(const GpuProfiler& profiler);
std::string format_frame_tree(std::string_view queue_name, const ProfilerFrame& frame);


}  // namespace latlab

#include "latlab/detail/profiler_recording_inline.hpp"

// LATLAB_GPU_ZONE(profiler, stream, "name"): a zone until the end of the
// enclosing scope, with its source location (a static ZoneSite: function,
// file, line). `profiler`: GpuProfiler&, *, unique_ptr or shared_ptr (null
// = off), or an API's profiler (VulkanGpuProfiler, vulkan::Gpu, gl::Gpu, cuda::Gpu,
// CudaGpuProfiler, GlGpuProfiler); `stream`: the command stream, of that
// API's type (VkCommandBuffer, cudaStream_t, GlContext*; another type does
// not compile); `name`: a string literal. It is two
// declarations (the site, then the zone), as Tracy's ZoneScoped: write it as
// a statement of its own in a block, not as the body of an unbraced if/for.
// LATLAB_GPU_ZONE_TRANSIENT(profiler, stream, name): the same with a name
// known at run time (a std::string, string_view or C string; Tracy's
// ZoneTransientN), interned (intern_zone_name) only when the profiler is not
// null; the text need not outlive the zone.
// LATLAB_GPU_NEW_FRAME(profiler): next_frame() once per frame.
// LATLAB_CPU_ZONE(profiler, "name") and LATLAB_CPU_ZONE_TRANSIENT(profiler,
// name): a CPU zone (CpuZone) until the end of the scope, the same way
// (Tracy's ZoneScopedN and ZoneTransientN).
// With LATLAB_ENABLE_PROFILER 0 they expand to nothing that runs: their
// arguments are not evaluated, and the variables they name count as used; a
// typed profiler's stream is still checked.
#include "latlab/detail/profiler_macros.hpp"
