// What every API's attached profiler owns besides its device: the profiler,
// the clock sync that maps its zones onto the host clock, and a streaming
// trace. latlab::vulkan::Gpu, latlab::gl::Gpu and latlab::cuda::Gpu
// (profiler_vulkan.hpp, profiler_opengl.hpp, profiler_cuda.hpp) are this
// plus their device; a program holds one of them and nothing else.
//
//   auto gpu = latlab::vulkan::attach({...}).value();  // or gl::, cuda::
//   gpu->trace("trace.json");                          // optional
//   ... each frame: gpu->frame(...); LATLAB_GPU_ZONE(gpu, stream, "name"); ...
//   once the device is idle: gpu->finish(); puts(gpu->stat_table().c_str());
//
// Threads: as GpuProfiler (zones from any thread; frame(), finish() and
// trace() from the thread that owns frames). Teardown: the destructor closes
// a trace still open as partial, then drops the profiler, its slots, the
// clock sync and the device attachment, in that order.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "latlab/clock_sync.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_trace.hpp"
#include "latlab/result.hpp"

namespace latlab {

template <class Stream>
class AttachedProfiler {
 public:
  using stream_type = Stream;
  AttachedProfiler(const AttachedProfiler&) = delete;
  AttachedProfiler& operator=(const AttachedProfiler&) = delete;

  TypedGpuProfiler<Stream>& profiler() const { return *profiler_; }
  // Unavailable, with its reason, where the device has no way to calibrate:
  // zones then keep device durations and are not placed on the host clock.
  const ClockSync& clock() const { return *clock_; }

  // A zone until the returned object goes out of scope:
  //   const auto z = gpu->zone(cmd, "shadows");
  // `name` must outlive the profiler's frames (a string literal).
  // LATLAB_GPU_ZONE(gpu, cmd, "shadows") is the same with its source
  // location, and compiles to nothing with LATLAB_ENABLE_PROFILER 0.
  [[nodiscard]] GpuZone zone(Stream stream, const char* name) const {
    return GpuZone(profiler_.get(), stream, name);
  }

  // Streams every frame collected from now on to a Chrome/Perfetto trace at
  // `path` (ChromeTraceWriter's rules); finish() closes it.
  Result<void> trace(const std::string& path) {
    if (trace_) return make_error("GPU profiler '" + profiler_->name() + "': a trace is open");
    auto writer = std::make_unique<ChromeTraceWriter>();
    if (Result<void> opened = writer->open(path); !opened) return opened;
    trace_ = std::move(writer);
    profiler_->set_frame_sink([t = trace_.get(), name = profiler_->name()](
                                  const ProfilerFrame& f) { t->add_frame(name, f); });
    return {};
  }
  bool tracing() const { return trace_ != nullptr; }
  size_t trace_spans() const { return trace_ ? trace_->span_count() : closed_spans_; }

  // Once the device has finished everything recorded (the last frame's
  // fence, vkDeviceWaitIdle, glFinish, cudaDeviceSynchronize): closes the
  // open frame, collects every frame (GpuProfiler::finish) and closes the
  // trace, whose write error, if any, comes back here.
  Result<void> finish() {
    profiler_->finish();
    if (!trace_) return {};
    return close_trace({});
  }

  // Per-zone statistics over the stat window (GpuProfilerDesc::
  // stat_window_frames, the newest frames collected), and the table of them
  // headed by its window.
  std::vector<ZoneStat> stats() const { return profiler_->stats(); }
  std::string stat_table() const { return format_stat_table(*profiler_); }
  ProfilerCounters counters() const { return profiler_->counters(); }

 protected:
  AttachedProfiler(std::unique_ptr<TypedGpuProfiler<Stream>> profiler,
                   std::unique_ptr<ClockSync> clock)
      : clock_(std::move(clock)), profiler_(std::move(profiler)) {
    profiler_->set_clock_mapper(clock_->mapper());
  }
  ~AttachedProfiler() {
    if (trace_) static_cast<void>(close_trace("the profiler was destroyed before finish()"));
  }

 private:
  Result<void> close_trace(std::optional<std::string_view> partial) {
    profiler_->set_frame_sink({});
    Result<void> closed = partial ? trace_->close_partial(*partial) : trace_->close();
    closed_spans_ = trace_->span_count();
    trace_.reset();
    return closed;
  }

  // Declared in teardown order, reversed: the trace goes first, the clock
  // sync (which samples the device) last.
  std::unique_ptr<ClockSync> clock_;
  std::unique_ptr<TypedGpuProfiler<Stream>> profiler_;
  std::unique_ptr<ChromeTraceWriter> trace_;
  size_t closed_spans_ = 0;
};

namespace detail {
// LATLAB_GPU_ZONE(gpu, stream, "name") with an attached profiler: its
// profiler, typed.
template <class Stream>
TypedGpuProfiler<Stream>* profiler_ptr(const AttachedProfiler<Stream>& p) {
  return &p.profiler();
}
template <class Stream>
TypedGpuProfiler<Stream>* profiler_ptr(const AttachedProfiler<Stream>* p) {
  return p != nullptr ? &p->profiler() : nullptr;
}
template <class Owner>
  requires std::is_base_of_v<AttachedProfiler<typename Owner::stream_type>, Owner>
TypedGpuProfiler<typename Owner::stream_type>* profiler_ptr(const std::unique_ptr<Owner>& p) {
  return p ? &p->profiler() : nullptr;
}
}  // namespace detail

}  // namespace latlab
