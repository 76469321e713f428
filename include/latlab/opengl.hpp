// OpenGL timing through EGL, without a window: the timestamp query pool, the
// profiler and calibration pairs on desktop GL 4.3+ core (GLES 3.1+ where
// desktop GL is absent); the same timing on a program's own EGL context
// (GlContext::attach_current: GL 3.3+ or GLES 3.0+). The benchmark rig (GLSL
// workloads, the latency device) is latlab/bench/gl_rig.hpp; both are
// compiled into latlab_opengl (latlab::opengl).
//
// Context. EGL_EXT_platform_device (one display per EGL device: NVIDIA's
// GPUs, Mesa's software device) and, where device enumeration is absent,
// EGL_MESA_platform_surfaceless; a configless, surfaceless context
// (EGL_KHR_no_config_context, EGL_KHR_surfaceless_context). No display
// server is needed.
//
// Timestamps. glQueryCounter(GL_TIMESTAMP) into query objects (one per
// slot), read with GL_QUERY_RESULT_AVAILABLE first, so a read never waits.
// GL_TIMESTAMP counts nanoseconds: TickFormat{1, 1, GL_QUERY_COUNTER_BITS}.
// A query object holds the result of its latest glQueryCounter only, so a
// reused slot never returns an earlier use's value (no kLate needed).
// GL_TIME_ELAPSED fallback (GlTimer): where timer queries exist but
// GL_QUERY_COUNTER_BITS of GL_TIMESTAMP is 0 (some GLES drivers), a pair is
// glBeginQuery/glEndQuery(GL_TIME_ELAPSED) on the begin slot's query object:
// real durations, no device clock. The slots are durations_only()
// (timestamp_slots.hpp): no result has ticks, nothing maps onto the host
// clock (sample_calibration, the latency device and trace placement say
// "unavailable: only GL_TIME_ELAPSED"), and since one GL_TIME_ELAPSED query
// may be active per context, a span begun while another is open is not
// timed: `overlapped` (a nested profiler zone; its parent keeps its time).
// latlab tracks the open span per context: a GL_TIME_ELAPSED query of the
// application's own on the same context would clash with it.
// Disjoint: on GLES with GL_EXT_disjoint_timer_query, GL_GPU_DISJOINT_EXT is
// read after each read(); when set, every slot read in that call and every
// slot written and not yet reset is flagged kDisjoint (the spec: discard
// every result in flight). Desktop GL has no disjoint signal: the device
// lists "disjoint_detection" as missing.
//
// Threads. A GL context is current on at most one thread at a time and
// query objects are not shared between contexts. So:
//  * GlTimestampSlots, the pool and the profiler on them: write/read/reset on
//    the thread where the slots' context is current (the recording thread).
//    Zones from several threads need one context and one profiler per
//    thread; write() from a thread where the context is not current is
//    refused and counted (write_errors), never recorded into another context.
//  * GlContext::make_current / ScopedGlCurrent move the context between
//    threads (the previous thread must have released it).
//  * GlContext::sample_calibration() and the latency device's run on an
//    internal second context, serialised by a mutex: safe from any thread.
//
// Host clock: latlab::host_now_ns() (CLOCK_MONOTONIC). Calibration pairs are
// glGetInteger64v(GL_TIMESTAMP) bracketed by two host reads: estimated, the
// bound half the bracket (the narrowest of several).
//
// This header needs no GL or EGL header.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "latlab/calibrator.hpp"
#include "latlab/clock_model.hpp"
#include "latlab/clock_sync.hpp"
#include "latlab/result.hpp"
#include "latlab/core/capability.hpp"
#include "latlab/tick_format.hpp"
#include "latlab/timestamp_query_pool.hpp"
#include "latlab/timestamp_slots.hpp"

namespace latlab {

inline constexpr const char* kGlCalibrationDomain =
    "CLOCK_MONOTONIC (bracketed glGetInteger64v(GL_TIMESTAMP))";

// Which client API a context uses.
enum class GlApiKind : uint8_t {
  automatic,  // desktop GL 4.3+ core, else GLES 3.1+
  desktop,    // desktop GL 4.3+ core only
  gles,       // GLES 3.1+ only (GL_EXT_disjoint_timer_query gives the timestamps)
};

// How spans are timed.
enum class GlTimer : uint8_t {
  automatic,  // GL_TIMESTAMP where GL_QUERY_COUNTER_BITS > 0, else GL_TIME_ELAPSED
  timestamp,  // glQueryCounter(GL_TIMESTAMP) pairs: ticks on the device clock
  elapsed,    // glBeginQuery/glEndQuery(GL_TIME_ELAPSED): durations only
};

// "auto", "timestamp" or "elapsed" (what --gl-timer and LATLAB_GL_TIMER take);
// nullopt for anything else.
std::optional<GlTimer> parse_gl_timer(std::string_view text);
// "GL_TIMESTAMP" or "GL_TIME_ELAPSED" (automatic: "auto").
const char* gl_timer_name(GlTimer timer);

// What `latlab devices` shows for one EGL device.
struct GlDeviceReport {
  int index = 0;            // EGL device index (EGL_EXT_device_enumeration order)
  std::string platform;     // "device" or "surfaceless"
  std::string egl_vendor;   // EGL_VENDOR
  std::string egl_version;  // "1.5"
  std::string drm_node;     // EGL_DRM_RENDER_NODE_FILE_EXT or DRM device file; "" if none
  std::string
      device_uuid;  // EGL_DEVICE_UUID_EXT (EGL_EXT_device_persistent_id) as text; "" if not offered
  bool software = false;     // EGL_MESA_device_software
  std::string api;           // "OpenGL" or "OpenGL ES" (the context latlab would create)
  std::string renderer;      // GL_RENDERER; "" when no context could be created
  std::string vendor;        // GL_VENDOR
  std::string version;       // GL_VERSION
  std::string glsl_version;  // GL_SHADING_LANGUAGE_VERSION
  bool timer_query =
      false;  // GL_TIMESTAMP queries (GL 3.3 / ARB_timer_query / EXT_disjoint_timer_query)
  int timestamp_bits = 0;  // GL_QUERY_COUNTER_BITS of GL_TIMESTAMP; 0: no timestamps
  // The timer latlab times spans with here: "GL_TIMESTAMP", "GL_TIME_ELAPSED"
  // (durations only), or "" without timer queries. For a GlContext, the one
  // its GlContextDesc::timer chose; from enumerate_gl_devices, GlTimer::automatic's.
  std::string timer;
  bool disjoint_signal = false;  // GL_GPU_DISJOINT_EXT available
  bool compute_shaders = false;  // GL 4.3 / GLES 3.1
  bool khr_debug = false;
  std::vector<MissingCapability> missing;  // with why
};

// Every EGL device (or the surfaceless display), each probed with a context.
// Error when EGL itself cannot be used (no libEGL vendor, no display at all).
Result<std::vector<GlDeviceReport>> enumerate_gl_devices(GlApiKind api = GlApiKind::automatic);

struct GlContextDesc {
  std::string device;  // EGL device index ("0") or name substring of GL_RENDERER / EGL
                       // vendor; "" = first device with timer queries (hardware first)
  GlApiKind api = GlApiKind::automatic;
  bool debug = false;  // debug context + KHR_debug callback: messages counted (debug_*)
  // automatic: the LATLAB_GL_TIMER environment variable (auto|timestamp|
  // elapsed) when set, else GL_TIMESTAMP where it has bits, else
  // GL_TIME_ELAPSED. timestamp: only devices with GL_TIMESTAMP bits.
  // elapsed: GL_TIME_ELAPSED even where timestamps exist (to test the fallback).
  GlTimer timer = GlTimer::automatic;
};

// Attaching latlab to a program's own GL context (GlContext::attach_current).
struct GlAttachDesc {
  // How spans are timed, as GlContextDesc::timer (LATLAB_GL_TIMER applies
  // to automatic). Default automatic.
  GlTimer timer = GlTimer::automatic;
};

// One EGL display and GL context: latlab's own (create: owned, created
// current on the creating thread; release_current() before another thread
// makes it current), or a program's (attach_current: borrowed).
class GlContext {
 public:
  // Error (with the reason, e.g. "no EGL device has GL 4.3 or GLES 3.1")
  // when no context can be created, it has no timer queries, or not the
  // timer desc.timer asks for.
  static Result<std::unique_ptr<GlContext>> create(const GlContextDesc& desc = {});
  // latlab on the EGL context the program made current on the calling
  // thread: any desktop GL 3.3+ (or ARB_timer_query) or GLES 3.0+ with
  // GL_EXT_disjoint_timer_query, core or compatibility, on a window, pbuffer
  // or no surface. The timestamp slots, the pool, the profiler and
  // GlFrameRing then work on it as on latlab's own (the stream is the
  // returned GlContext*). latlab never makes it current, releases or
  // destroys it, and installs no debug callback; attaching reads (and so
  // clears) glGetError. Calibration pairs are read on a second context
  // latlab makes on the program's EGLDisplay (surfaceless, else a 1x1
  // pbuffer); where it cannot, calibration is unavailable ("calibration" in
  // report().missing), spans keep their durations. Error (with why): no EGL
  // context current (a GLX context is not supported), no timer queries, or
  // not the timer desc.timer asks for. The program's context must outlive
  // the GlContext; destroy the GlContext with it current (the query objects
  // of slots made on it are deleted then).
  static Result<std::unique_ptr<GlContext>> attach_current(const GlAttachDesc& desc = {});
  // Made by attach_current: the program's context.
  bool attached() const;
  ~GlContext();
  GlContext(const GlContext&) = delete;
  GlContext& operator=(const GlContext&) = delete;

  // Makes the context current on the calling thread (error: current on
  // another thread; an attached context that is not current: the program
  // makes it current with its surfaces). release_current(): none current on
  // this thread (nothing for an attached context).
  Result<void> make_current();
  void release_current();
  bool is_current() const;

  const GlDeviceReport& report() const { return report_; }
  bool gles() const { return gles_; }
  // GlTimer::timestamp or GlTimer::elapsed: how this context's slots time.
  GlTimer timer() const { return timer_; }
  bool durations_only() const { return timer_ == GlTimer::elapsed; }
  // Nanosecond ticks: GL_QUERY_COUNTER_BITS valid bits, or 64 for the
  // 64-bit GL_TIME_ELAPSED results.
  TickFormat tick_format() const {
    return TickFormat{1, 1, durations_only() ? 64u : static_cast<uint32_t>(report_.timestamp_bits)};
  }

  // One bracketed pair on the internal calibration context (any thread).
  // The narrowest of `brackets` reads. Error on a durations_only() context:
  // without GL_TIMESTAMP there is no device clock to pair.
  Result<CalibrationPair> sample_calibration(uint32_t brackets = 5);

  // KHR_debug (desc.debug): GL errors (GL_DEBUG_TYPE_ERROR) and messages of
  // high severity counted and kept (the first 32); thread-safe.
  uint64_t debug_error_count() const { return debug_errors_.load(); }
  std::vector<std::string> debug_messages() const;
  // glGetError until GL_NO_ERROR (context current); each counted as an error.
  uint32_t drain_gl_errors(const char* where);

  // Counts one finding (a GL error, a high-severity debug message) and
  // keeps its text; thread-safe. Called by the debug callback.
  void note_debug_error(std::string text);

  // The backend's private state (EGL handles, GL entry points: gl_state.hpp).
  struct State;
  State& state() { return *state_; }

 private:
  GlContext();
  std::unique_ptr<State> state_;
  GlDeviceReport report_;
  bool gles_ = false;
  GlTimer timer_ = GlTimer::timestamp;
  mutable std::mutex debug_mutex_;
  std::vector<std::string> debug_messages_;
  std::atomic<uint64_t> debug_errors_{0};
};

// The calibrator and its refresh on `ctx`'s clock (clock_sync.hpp):
// prof->set_clock_mapper(clock->mapper()). Unavailable, with the reason, on
// a durations-only context or without a calibration context. Samples on
// latlab's own second context, from the calling thread first, then from the
// refresh thread. `ctx` must outlive it.
std::unique_ptr<ClockSync> start_clock_sync(GlContext& ctx, const CalibratorDesc& desc = {});

// Why something that needs absolute GPU times cannot run on a
// durations_only() context: "unavailable: only GL_TIME_ELAPSED on
// '<renderer>' (<why>); <what>". The one wording of every such refusal.
std::string gl_elapsed_only(const GlContext& ctx, const std::string& what);

// Makes `ctx` current for a scope unless it already is on this thread, and
// releases it at the end when it made it current.
class ScopedGlCurrent {
 public:
  explicit ScopedGlCurrent(GlContext& ctx);
  ~ScopedGlCurrent();
  ScopedGlCurrent(const ScopedGlCurrent&) = delete;
  ScopedGlCurrent& operator=(const ScopedGlCurrent&) = delete;
  const Result<void>& status() const { return status_; }

 private:
  GlContext& ctx_;
  bool made_ = false;
  Result<void> status_;
};

// ---------------------------------------------------------------------------
// Timestamp slots
// ---------------------------------------------------------------------------

struct GlTimestampSlotsDesc {
  uint32_t count = 8192;  // query objects (>= 2); the profiler's defaults need 8192
  // Test seam / user signal: called after each read(); true = a disjoint
  // event happened. Empty: GL_GPU_DISJOINT_EXT where the extension exists.
  std::function<bool()> disjoint_probe;
};

// The seam's TimestampSlots on GL query objects. The GpuCommandStream is the
// GlContext* (or nullptr: the slots' own context), which must be current on
// the calling thread. Create, use and destroy with the context current.
class GlTimestampSlots final : public TimestampSlots {
 public:
  static Result<std::shared_ptr<GlTimestampSlots>> create(GlContext& ctx,
                                                          const GlTimestampSlotsDesc& desc = {});
  ~GlTimestampSlots() override;

  uint32_t slot_count() const override { return count_; }
  TickFormat tick_format() const override { return ticks_; }
  void write(GpuCommandStream stream, uint32_t slot, TimestampEdge edge) override;
  void read(uint32_t first, std::span<SlotReading> out) override;
  void reset(uint32_t first, uint32_t count, bool previous_use_done) override;

  // The context's GL_TIME_ELAPSED mode: pairs give durations only.
  bool durations_only() const override { return elapsed_; }

  uint64_t write_errors() const { return write_errors_.load(std::memory_order_relaxed); }
  uint64_t disjoint_events() const { return disjoint_events_; }
  // GL_TIME_ELAPSED: spans not timed because another was open.
  uint64_t overlapped_spans() const { return overlapped_spans_; }
  bool has_disjoint_signal() const { return static_cast<bool>(probe_); }

 private:
  GlTimestampSlots(GlContext& ctx, uint32_t count);
  void write_elapsed(uint32_t slot, TimestampEdge edge);
  void read_elapsed(uint32_t first, std::span<SlotReading> out);
  GlContext& ctx_;
  uint32_t count_ = 0;
  TickFormat ticks_;
  bool elapsed_ = false;
  std::vector<uint32_t> queries_;
  // Per slot: the bits of gl_timestamp_slots.cpp's SlotState (0: free).
  std::vector<uint8_t> state_;
  uint64_t overlapped_spans_ = 0;
  std::function<bool()> probe_;
  uint64_t disjoint_events_ = 0;
  std::atomic<uint64_t> write_errors_{0};
};

// A timestamp query pool on its own GlTimestampSlots (context current).
Result<std::unique_ptr<TimestampQueryPool>> create_gl_query_pool(GlContext& ctx,
                                                                 const QueryPoolDesc& desc = {});

// ---------------------------------------------------------------------------
// Frames in flight
// ---------------------------------------------------------------------------

// One fence sync per frame in flight: submit(slot) puts glFenceSync after
// everything the context issued so far and flushes (the GPU starts now);
// wait(slot) sleeps in glClientWaitSync (no spinning). Slot i is free again
// once wait() saw its fence. Use on the thread where the context is current;
// not thread-safe.
class GlFrameRing {
 public:
  static constexpr uint64_t kDefaultTimeoutNs = 60'000'000'000ull;

  // Context current. Error: slots outside 1..64, context not current.
  static Result<std::unique_ptr<GlFrameRing>> create(GlContext& ctx, uint32_t slots);
  ~GlFrameRing();  // waits for every slot still in flight (context current)
  GlFrameRing(const GlFrameRing&) = delete;
  GlFrameRing& operator=(const GlFrameRing&) = delete;

  uint32_t size() const { return static_cast<uint32_t>(fences_.size()); }
  bool in_flight(uint32_t slot) const { return fences_[slot] != nullptr; }
  // Fence + flush. Error: the slot is in flight (wait() first), the context
  // is not current, glFenceSync failed.
  Result<void> submit(uint32_t slot);
  // true: the slot's work completed (the slot is free; also when nothing was
  // in flight); false: `timeout_ns` passed first. Error: glClientWaitSync failed.
  Result<bool> wait(uint32_t slot, uint64_t timeout_ns = kDefaultTimeoutNs);
  // Waits for every slot in flight; a timeout is an error.
  Result<void> wait_all(uint64_t timeout_ns = kDefaultTimeoutNs);

 private:
  explicit GlFrameRing(GlContext& ctx) : ctx_(ctx) {}
  GlContext& ctx_;
  std::vector<void*> fences_;  // GLsync per slot; null: free
};

}  // namespace latlab
