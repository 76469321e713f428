// A bracketed GL calibration pair: glGetInteger64v(GL_TIMESTAMP) read between
// two host-clock reads, the narrowest of several. Shared by latlab's own GL
// contexts (GlContext::sample_calibration) and the capture interposer, which
// reads on a program's context (GLX or EGL) and so cannot use GlContext. No
// GL header: the read is a callable.
#pragma once

#include <algorithm>
#include <cstdint>

#include "latlab/clock_model.hpp"
#include "latlab/host_clock.hpp"

namespace latlab::gl {

// `read_ticks()` returns the context's GL_TIMESTAMP (ns ticks); called
// `brackets` times (at least once), each between two host_now_ns() reads.
// The pair of the narrowest bracket: host time its middle, deviation half
// its width, estimated (not a calibrated read), ticks cut to `mask`.
template <class ReadTicks>
CalibrationPair narrowest_bracket(ReadTicks&& read_ticks, uint64_t mask, uint32_t brackets) {
  CalibrationPair best;
  int64_t best_width = -1;
  for (uint32_t i = 0; i < std::max<uint32_t>(1, brackets); ++i) {
    const int64_t t0 = host_now_ns();
    const uint64_t ticks = read_ticks();
    const int64_t t1 = host_now_ns();
    if (best_width < 0 || t1 - t0 < best_width) {
      best_width = t1 - t0;
      best.device_ticks = ticks & mask;
      best.host_ns = t0 + (t1 - t0) / 2;
      best.max_deviation_ns = (t1 - t0 + 1) / 2;
      best.estimated = true;
    }
  }
  return best;
}

}  // namespace latlab::gl
