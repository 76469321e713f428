// What the zone macros of profiler.hpp expand to, with the profiler
// compiled in and out. Included by profiler.hpp; not an API: read
// profiler.hpp.
#pragma once

#include "latlab/profiler.hpp"

#define LATLAB_PP_CAT_(a, b) a##b
#define LATLAB_PP_CAT(a, b) LATLAB_PP_CAT_(a, b)

#if LATLAB_ENABLE_PROFILER
#define LATLAB_GPU_ZONE(profiler, stream, name) \
  LATLAB_GPU_ZONE_AT_(profiler, stream, name, __COUNTER__)
#define LATLAB_GPU_ZONE_AT_(profiler, stream, name, n)                                         \
  static constexpr ::latlab::ZoneSite LATLAB_PP_CAT(latlab_zone_site_, n){("" name), __func__, \
                                                                          __FILE__, __LINE__}; \
  const ::latlab::GpuZone LATLAB_PP_CAT(latlab_gpu_zone_, n)(                                  \
      ::latlab::detail::profiler_ptr(profiler), (stream), LATLAB_PP_CAT(latlab_zone_site_, n))
#define LATLAB_GPU_ZONE_TRANSIENT(profiler, stream, name)                         \
  const ::latlab::GpuZone LATLAB_PP_CAT(latlab_gpu_zone_, __COUNTER__)(           \
      ::latlab::detail::profiler_ptr(profiler), (stream), ::latlab::TransientZoneName{(name)})
#define LATLAB_CPU_ZONE(profiler, name) LATLAB_CPU_ZONE_AT_(profiler, name, __COUNTER__)
#define LATLAB_CPU_ZONE_AT_(profiler, name, n)                                                 \
  static constexpr ::latlab::ZoneSite LATLAB_PP_CAT(latlab_zone_site_, n){("" name), __func__, \
                                                                          __FILE__, __LINE__}; \
  const ::latlab::CpuZone LATLAB_PP_CAT(latlab_cpu_zone_, n)(                                  \
      ::latlab::detail::profiler_ptr(profiler), LATLAB_PP_CAT(latlab_zone_site_, n))
#define LATLAB_CPU_ZONE_TRANSIENT(profiler, name)                       \
  const ::latlab::CpuZone LATLAB_PP_CAT(latlab_cpu_zone_, __COUNTER__)( \
      ::latlab::detail::profiler_ptr(profiler), ::latlab::TransientZoneName{(name)})
#define LATLAB_GPU_NEW_FRAME(profiler)                                             \
  do {                                                                            \
    if (::latlab::GpuProfiler* latlab_p_ = ::latlab::detail::profiler_ptr(profiler)) \
      latlab_p_->next_frame();                                                    \
  } while (0)
#else
#define LATLAB_GPU_ZONE(profiler, stream, name)                                \
  static_cast<void>(sizeof(::latlab::detail::zone_stream_check(                \
                        ::latlab::detail::profiler_ptr(profiler), (stream))) + \
                    sizeof("" name))
#define LATLAB_GPU_ZONE_TRANSIENT(profiler, stream, name)                      \
  static_cast<void>(sizeof(::latlab::detail::zone_stream_check(                \
                        ::latlab::detail::profiler_ptr(profiler), (stream))) + \
                    sizeof(::latlab::TransientZoneName{(name)}))
#define LATLAB_CPU_ZONE(profiler, name) \
  static_cast<void>(sizeof(::latlab::detail::profiler_ptr(profiler)) + sizeof("" name))
#define LATLAB_CPU_ZONE_TRANSIENT(profiler, name)                      \
  static_cast<void>(sizeof(::latlab::detail::profiler_ptr(profiler)) + \
                    sizeof(::latlab::TransientZoneName{(name)}))
#define LATLAB_GPU_NEW_FRAME(profiler) \
  static_cast<void>(sizeof(::latlab::detail::profiler_ptr(profiler)))
#endif
