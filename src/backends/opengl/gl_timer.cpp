// Which timer a GL context times spans with: GL_TIMESTAMP pairs, or the
// GL_TIME_ELAPSED fallback (durations only), and what the choice costs.
#include <cstdlib>
#include <string>

#include "backends/opengl/gl_state.hpp"

namespace latlab {

std::optional<GlTimer> parse_gl_timer(std::string_view text) {
  if (text == "auto") return GlTimer::automatic;
  if (text == "timestamp") return GlTimer::timestamp;
  if (text == "elapsed") return GlTimer::elapsed;
  return std::nullopt;
}

const char* gl_timer_name(GlTimer timer) {
  switch (timer) {
    case GlTimer::timestamp:
      return "GL_TIMESTAMP";
    case GlTimer::elapsed:
      return "GL_TIME_ELAPSED";
    case GlTimer::automatic:
      break;
  }
  return "auto";
}

namespace gl {

Result<GlTimer> wished_timer(GlTimer asked) {
  if (asked != GlTimer::automatic) return asked;
  const char* env = std::getenv("LATLAB_GL_TIMER");
  if (env == nullptr || *env == '\0') return GlTimer::automatic;
  const auto t = parse_gl_timer(env);
  if (!t)
    return make_error(std::string("LATLAB_GL_TIMER must be auto, timestamp or elapsed (got \"") +
                      env + "\")");
  return *t;
}

std::optional<GlTimer> resolve_timer(const GlDeviceReport& r, GlTimer wish) {
  if (!r.timer_query) return std::nullopt;
  if (wish == GlTimer::elapsed) return GlTimer::elapsed;
  if (r.timestamp_bits > 0) return GlTimer::timestamp;
  if (wish == GlTimer::timestamp) return std::nullopt;
  return GlTimer::elapsed;
}

// Why GL_TIME_ELAPSED times here.
std::string why_elapsed(const GlDeviceReport& r) {
  return r.timestamp_bits > 0 ? "GL_TIME_ELAPSED was asked for (timer \"elapsed\")"
                              : "GL_QUERY_COUNTER_BITS of GL_TIMESTAMP is 0";
}

void note_timer(GlDeviceReport& r, GlTimer wish) {
  const auto timer = resolve_timer(r, wish);
  r.timer = timer ? gl_timer_name(*timer) : "";
  if (!r.timer_query) return;  // probe listed why
  std::string why;
  if (!timer) {
    why =
        "GL_QUERY_COUNTER_BITS of GL_TIMESTAMP is 0 and GL_TIMESTAMP was asked for (timer "
        "\"timestamp\")";
  } else if (*timer == GlTimer::elapsed) {
    why = why_elapsed(r) +
          ": spans are timed with GL_TIME_ELAPSED, durations only: no GPU begin/end on the host "
          "clock "
          "(no clock calibration, latency markers or trace placement), and a span begun inside "
          "another "
          "is not timed (overlapped)";
    for (MissingCapability& m : r.missing) {
      if (m.name == "calibrated_timestamps")
        m.reason = "no calibration pairs: GL_TIME_ELAPSED has no device clock";
    }
  } else {
    return;
  }
  r.missing.insert(r.missing.begin(), MissingCapability{"timestamps", why});
}

}  // namespace gl

std::string gl_elapsed_only(const GlContext& ctx, const std::string& what) {
  return "unavailable: only GL_TIME_ELAPSED on '" + ctx.report().renderer + "' (" +
         gl::why_elapsed(ctx.report()) + "); " + what;
}

}  // namespace latlab
