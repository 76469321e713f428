// The console summary of a capture: counts, the frame time, the sources
// (or why none reported), and why the capture is partial.
#include <algorithm>
#include <cinttypes>
#include <string>

#include "report/capture_input_report.hpp"
#include "report/capture_report.hpp"

namespace latlab {
namespace {

bool attached(const CaptureResult& c, const char* what) {
  return std::none_of(c.unavailable.begin(), c.unavailable.end(),
                      [&](const CaptureUnavailable& u) { return u.name == what; });
}

std::string fmt_fps(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

// " (reason count, ...)" of the submissions without a span; "" when none.
std::string missing_span_reasons(const CaptureResult& c) {
  std::string out;
  for (const auto& [reason, count] : c.submit_spans) {
    if (reason == "measured" || count == 0) continue;
    out += (out.empty() ? " (" : ", ") + reason + ' ' + std::to_string(count);
  }
  return out.empty() ? out : out + ')';
}

// The submissions the span budget left untimed, and how to time them all.
void print_budget(std::FILE* out, const CaptureResult& c) {
  uint64_t untimed = 0;
  for (const auto& [reason, count] : c.submit_spans)
    if (reason == "budget") untimed = count;
  if (untimed == 0 || !c.overhead.gpu_span_budget_percent) return;
  std::fprintf(out,
               "latlab capture: %" PRIu64
               " submissions not timed, to keep what their GPU spans cost within %g %% of the "
               "program's time (--gpu-spans all times every one)\n",
               untimed, *c.overhead.gpu_span_budget_percent);
  const std::string& from = c.overhead.gpu_span_price_from;
  if ((from == "frames" || from == "submissions") && c.overhead.gpu_span_price_us)
    std::fprintf(out,
                 "latlab capture: a GPU span costs this program about %.1f us, priced from its "
                 "timed %s against its untimed ones\n",
                 *c.overhead.gpu_span_price_us, from.c_str());
}

// What capture cost the program per frame (docs/capture.md, "Cost").
void print_cost(std::FILE* out, const CaptureOverhead& ov) {
  if (ov.setup_ms)
    std::fprintf(out, "latlab capture: latlab added %.1f ms to the program's vkCreateDevice\n",
                 *ov.setup_ms);
  if (!ov.layer_cpu_per_frame_us) return;
  char driver[128] = "; no estimate of the driver's share (no bracketing probe)";
  if (ov.driver_cpu_per_frame_us)
    std::snprintf(driver, sizeof driver,
                  ", about %.1f us in the driver for its command buffers (bracketing probe)",
                  *ov.driver_cpu_per_frame_us);
  char gpu[128] = "";
  if (ov.gpu_per_frame_us)
    std::snprintf(gpu, sizeof gpu, "; about %.1f us of device time added to its submissions",
                  *ov.gpu_per_frame_us);
  std::fprintf(out,
               "latlab capture: latlab's CPU in the program per frame: %.1f us its own (%.1f us "
               "in %u latlab threads)%s%s\n",
               *ov.layer_cpu_per_frame_us, ov.threads_cpu_per_frame_us.value_or(0.0), ov.threads,
               driver, gpu);
}

std::string apis_of(const CaptureResult& c) {
  const auto gl = static_cast<size_t>(std::count_if(
      c.sources.begin(), c.sources.end(), [](const auto& s) { return s.api == "opengl"; }));
  const size_t vk = c.sources.size() - gl;
  std::string apis;
  if (vk > 0) apis += "vulkan (" + std::to_string(vk) + " device" + (vk > 1 ? "s)" : ")");
  if (gl > 0)
    apis += (apis.empty() ? "" : ", ") + std::string("opengl (") + std::to_string(gl) + " context" +
            (gl > 1 ? "s)" : ")");
  return apis;
}

// The frame rate and its lows; several swapchains: each apart as well.
void print_fps(std::FILE* out, const CaptureResult& c) {
  const CaptureFps fps = c.fps();
  if (!fps.average) {
    std::fprintf(out, "latlab capture: FPS n/a (no two consecutive presents of one source)\n");
  } else {
    auto num = [](const std::optional<double>& v) { return v ? fmt_fps(*v) : std::string("n/a"); };
    std::fprintf(
        out, "latlab capture: FPS average %s, 1%% low %s, 0.1%% low %s (%" PRIu64 " frame times)\n",
        num(fps.average).c_str(), num(fps.low_1_percent).c_str(), num(fps.low_0_1_percent).c_str(),
        fps.frame_times);
  }
  // Several swapchains (processes, devices, windows).
  if (c.per_swapchain.size() > 1) {
    for (const CaptureSwapchainFigures& w : c.per_swapchain) {
      const CaptureFps f = w.fps();
      const std::string api = w.source < c.sources.size() ? c.sources[w.source].api : "?";
      std::fprintf(out,
                   "latlab capture:   pid %" PRId64 " %s source %" PRIu64 " swapchain %" PRIu64
                   ": %" PRIu64 " frames, FPS average %s, 1%% low %s\n",
                   w.pid, api.c_str(), w.source, w.swapchain, w.frames,
                   f.average ? fmt_fps(*f.average).c_str() : "n/a",
                   f.low_1_percent ? fmt_fps(*f.low_1_percent).c_str() : "n/a");
    }
  }
}

// What the display path and the screen observers saw of the frames.
void print_display(std::FILE* out, const CaptureResult& c) {
  const CaptureDisplay& d = c.display;
  if (d.shown + d.discarded > 0) {
    const Distribution* shown = c.figure("until_displayed");
    std::fprintf(out,
                 "latlab capture: display: %" PRIu64 " frames shown, %" PRIu64
                 " discarded; present to shown p50 %s us; refresh %s us\n",
                 d.shown, d.discarded,
                 shown != nullptr && !shown->empty() ? fmt_fps(shown->p50).c_str() : "n/a",
                 d.refresh_us ? fmt_fps(*d.refresh_us).c_str() : "n/a");
  }
  for (const CaptureScreenObserver& o : c.screen_observers) {
    if (o.windows.empty()) continue;
    std::fprintf(out,
                 "latlab capture: X11 damage observer: %" PRIu64 " of %" PRIu64
                 " frames seen updated\n",
                 o.frames_matched, o.frames_watched);
  }
}

}  // namespace

void print_capture_summary(std::FILE* out, const CaptureOutcome& outcome) {
  const CaptureResult& c = outcome.capture;
  const Distribution* bp = c.figure("between_presents");
  char bp_p50[64] = "n/a";
  if (bp != nullptr && !bp->empty())
    std::snprintf(bp_p50, sizeof bp_p50, "%.1f us%s", bp->p50,
                  bp->percentile_resolution ? " (from a histogram: approximate)" : "");
  std::fprintf(out,
               "latlab capture: %" PRIu64 " frames, %" PRIu64 " submits, %" PRIu64
               " GPU spans missing%s, %" PRIu64 " records dropped; between presents p50 %s\n",
               c.frames, c.submits, c.gpu_spans_missing, missing_span_reasons(c).c_str(),
               c.stop.records_dropped, bp_p50);
  print_cost(out, c.overhead);
  print_budget(out, c);
  print_fps(out, c);
  print_display(out, c);
  if (c.input) print_capture_input(out, *c.input);
  if (c.sources.empty()) {
    std::fprintf(out,
                 "latlab capture: no source reported: %s; %s (docs/capture.md says which "
                 "programs it cannot see)\n",
                 attached(c, "vulkan_layer")
                     ? "the program made no Vulkan device, or the Vulkan loader did not load "
                       "VK_LAYER_LATLAB_capture (VK_LOADER_DEBUG=layer shows its search)"
                     : "the Vulkan layer was not attached (its manifest is missing)",
                 attached(c, "gl_interposer")
                     ? "the program swapped no GLX or EGL buffers the GL interposer saw"
                     : "the GL interposer was not attached (its library is missing)");
  } else {
    std::fprintf(out, "latlab capture: reported by %s\n", apis_of(c).c_str());
  }
}

}  // namespace latlab
