// GpuZone and CpuZone (profiler.hpp): the RAII zones behind
// LATLAB_GPU_ZONE and LATLAB_CPU_ZONE, inlined into the zone's scope (a call
// per zone would cost more than the bookkeeping itself: BM_ProfilerZone).
// profiler.hpp includes it after GpuProfiler, where the zones belong;
// included alone, it is profiler.hpp.
#ifndef LATLAB_PROFILER_ZONES_HERE
#include "latlab/profiler.hpp"
#elif !defined(LATLAB_PROFILER_ZONES_DEFINED)
#define LATLAB_PROFILER_ZONES_DEFINED

#include <cstdint>
#include <utility>

namespace latlab {

// RAII zone: begin timestamp at construction, end at destruction, into
// `stream`. Not copyable or movable (its identity is its scope). `profiler`
// may be null (profiling off at run time): the zone does nothing. `name` must
// outlive the profiler's frames (a string literal, or intern_zone_name's): the
// pointer is stored. With a TypedGpuProfiler `stream` must be its stream_type
// (a compile error otherwise); with a plain GpuProfiler, any pointer.
class GpuZone {
 public:
  // A typed profiler: the stream is checked against its type, then the zone
  // is the untyped one below (the same inlined code).
  template <class Stream, class Given>
  [[gnu::always_inline]] GpuZone(TypedGpuProfiler<Stream>* profiler, Given&& stream,
                                 const char* name) noexcept
      : GpuZone(profiler, detail::typed_stream<Stream>(std::forward<Given>(stream)), name, 0) {}
  template <class Stream, class Given>
  [[gnu::always_inline]] GpuZone(TypedGpuProfiler<Stream>* profiler, Given&& stream,
                                 const ZoneSite& site) noexcept
      : GpuZone(profiler, detail::typed_stream<Stream>(std::forward<Given>(stream)), &site,
                GpuProfiler::ZoneRecord::kSiteBit) {}
  template <class Stream, class Given>
  GpuZone(TypedGpuProfiler<Stream>*, Given&&, const ZoneSite&&) = delete;
  template <class Stream, class Given>
  GpuZone(TypedGpuProfiler<Stream>* profiler, Given&& stream, TransientZoneName name) noexcept
      : GpuZone(static_cast<GpuProfiler*>(profiler),
                detail::typed_stream<Stream>(std::forward<Given>(stream)), name) {}
  // The untyped path (sim backend, generic code):
  // inlined into the zone's scope: a call per zone would cost more than the
  // bookkeeping itself (see BM_ProfilerZone).
  [[gnu::always_inline]] GpuZone(GpuProfiler* profiler, GpuCommandStream stream,
                                 const char* name) noexcept
      : GpuZone(profiler, stream, name, 0) {}
  // A zone with its source location (what LATLAB_GPU_ZONE records); `site`
  // must be static (the pointer is stored).
  [[gnu::always_inline]] GpuZone(GpuProfiler* profiler, GpuCommandStream stream,
                                 const ZoneSite& site) noexcept
      : GpuZone(profiler, stream, &site, GpuProfiler::ZoneRecord::kSiteBit) {}
  // A temporary site would dangle.
  GpuZone(GpuProfiler*, GpuCommandStream, const ZoneSite&&) = delete;
  [[gnu::always_inline]] ~GpuZone() {
    if (profiler_ == nullptr) return;
    profiler_->end_zone(stream_, ref_);
    detail::t_innermost_zone = outer_;
  }
  // A runtime name (intern_zone_name), looked up only when `profiler` is not null.
  GpuZone(GpuProfiler* profiler, GpuCommandStream stream, TransientZoneName name) noexcept
      : GpuZone(profiler, stream, profiler != nullptr ? intern_zone_name(name.text) : nullptr) {}
  GpuZone(const GpuZone&) = delete;
  GpuZone& operator=(const GpuZone&) = delete;
  GpuZone(GpuZone&&) = delete;
  GpuZone& operator=(GpuZone&&) = delete;

  bool recorded() const { return ref_.query != kNoZone; }

 private:
  friend class detail::ZoneRecorder;
  [[gnu::always_inline]] GpuZone(GpuProfiler* profiler, GpuCommandStream stream, const void* what,
                                 uint32_t site_bit) noexcept
      : profiler_(profiler), stream_(stream) {
    if (profiler_ == nullptr) return;
    outer_ = detail::t_innermost_zone;
    ref_ = profiler_->begin_zone(*this, what, site_bit);
    // The zone is the innermost one until its destructor restores `outer_`,
    // so the thread-local never outlives it; GCC 12+ at -O2 warns anyway.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#endif
    detail::t_innermost_zone = this;
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic pop
#endif
  }
  GpuProfiler* profiler_;
  GpuCommandStream stream_;
  GpuProfiler::ZoneRef ref_;
  const GpuZone* outer_ = nullptr;  // this thread's enclosing zone (any profiler/stream)
};

// RAII CPU zone (LATLAB_CPU_ZONE): the host clock (host_now_ns) read at
// construction and destruction, kept in the profiler's current frame beside
// its GPU zones (ProfilerZone::cpu), in its stat table (ZoneStat::cpu) and
// traces ("CPU thread k"). Nests in the innermost open CPU zone of the same
// profiler on this thread. Any number of threads at once; no lock, and no
// allocation (a transient name's first use on a thread aside). A frame
// waits for its CPU zones to end before it is collected (a zone open across
// many frames holds every slot: later zones are dropped). Not copyable or
// movable; `profiler` null: nothing. `name` as GpuZone's.
class CpuZone {
 public:
  [[gnu::always_inline]] CpuZone(GpuProfiler* profiler, const char* name) noexcept
      : CpuZone(profiler, name, 0) {}
  // With its source location; `site` must be static (the pointer is stored).
  [[gnu::always_inline]] CpuZone(GpuProfiler* profiler, const ZoneSite& site) noexcept
      : CpuZone(profiler, &site, GpuProfiler::ZoneRecord::kSiteBit) {}
  CpuZone(GpuProfiler*, const ZoneSite&&) = delete;
  // A runtime name (intern_zone_name), looked up only when `profiler` is not null.
  CpuZone(GpuProfiler* profiler, TransientZoneName name) noexcept
      : CpuZone(profiler, profiler != nullptr ? intern_zone_name(name.text) : nullptr) {}
  [[gnu::always_inline]] ~CpuZone() {
    if (profiler_ == nullptr) return;
    profiler_->end_cpu_zone(ref_);
    detail::t_innermost_cpu_zone = outer_;
  }
  CpuZone(const CpuZone&) = delete;
  CpuZone& operator=(const CpuZone&) = delete;
  CpuZone(CpuZone&&) = delete;
  CpuZone& operator=(CpuZone&&) = delete;

  bool recorded() const { return ref_.query != kNoZone; }

 private:
  friend class detail::ZoneRecorder;
  [[gnu::always_inline]] CpuZone(GpuProfiler* profiler, const void* what,
                                 uint32_t site_bit) noexcept
      : profiler_(profiler) {
    if (profiler_ == nullptr) return;
    outer_ = detail::t_innermost_cpu_zone;
    ref_ = profiler_->begin_cpu_zone(*this, what, site_bit);
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#endif
    detail::t_innermost_cpu_zone = this;  // restored by the destructor, as GpuZone's
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic pop
#endif
  }
  GpuProfiler* profiler_;
  GpuProfiler::ZoneRef ref_;        // query: the record's index
  const CpuZone* outer_ = nullptr;  // this thread's enclosing CPU zone (any profiler)
};

}  // namespace latlab

#endif
