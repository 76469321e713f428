// The capture section of the typed result (RunResult::capture): what `latlab
// capture -- PROGRAM` measured of a program nobody changed, as the result of
// kind "capture" holds it (docs/capture.md, "The result"). Distributions are
// in microseconds; a value the sources could not measure is left out of
// them (counted missing), never 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "latlab/bench/capture_input.hpp"
#include "latlab/stats.hpp"

namespace latlab {

// The program latlab ran.
struct CapturedProgram {
  std::vector<std::string> argv;
  int64_t pid = -1;
  std::optional<int64_t> exit_code;  // nullopt: still running when the result was written
  std::optional<int64_t> signal;     // the signal that ended it
  bool running_when_written = false;
  bool operator==(const CapturedProgram&) const = default;
};

// How the recording went and stopped (`capture` of the result).
struct CaptureStop {
  std::string stopped_by;                // "program_exit", "frames", "seconds", "inputs", "signal"
  std::optional<uint64_t> frames_limit;  // --frames
  std::optional<double> seconds_limit;   // --seconds
  bool terminate = false;                // --terminate
  // The signal latlab sent the program before the result was written
  // (SIGTERM for --terminate, an interrupt it passed on, SIGKILL at a
  // second one); nullopt: none.
  std::optional<int64_t> signal_sent;
  uint64_t records_dropped = 0, records_malformed = 0, records_unknown = 0;
  bool operator==(const CaptureStop&) const = default;
};

// One frame source in the program (a VkDevice, a GL context).
struct CaptureSourceInfo {
  int64_t pid = 0;
  std::string api;           // "vulkan", "opengl", "unknown"
  std::string device;        // "" unknown
  std::string clock_method;  // "": GPU times cannot be placed on the host clock
  std::string source;
  std::string present_method;  // "": none (present_complete unavailable, its entry says why)
  bool ended = false;          // it shut down cleanly
  bool operator==(const CaptureSourceInfo&) const = default;
};

// A value a source could not give, and why.
struct CaptureUnavailable {
  std::string name, reason;
  int64_t pid = 0;
  bool operator==(const CaptureUnavailable&) const = default;
};

using NamedDistributions = std::vector<std::pair<std::string, Distribution>>;

// A screen observer kept apart from the sources' figures (`screen_observers`):
// XDamage on the program's X11 window (docs/capture.md).
struct CaptureScreenObserver {
  std::string name;      // "x11_damage"
  std::string observes;  // what its time means
  bool available = false;
  std::string reason;   // why not, "" when available
  std::string display;  // "" unknown
  std::vector<uint64_t> windows;
  uint64_t frames_watched = 0, frames_matched = 0, events = 0, events_unmatched = 0;
  NamedDistributions figures;  // until_screen_updated
  bool operator==(const CaptureScreenObserver&) const = default;
};

// Frames per second as players read them, from the per-frame figure
// `between_presents` (docs/capture.md, "FPS"); nullopt where there is no
// frame time (never 0).
struct CaptureFps {
  uint64_t frame_times = 0;               // between_presents samples
  std::optional<double> average;          // 1e6 / mean frame time (us)
  std::optional<double> low_1_percent;    // 1e6 / p99 frame time
  std::optional<double> low_0_1_percent;  // 1e6 / p99.9 frame time
  bool operator==(const CaptureFps&) const = default;
};

// The per-frame figures of one swapchain of one source (a VkDevice's
// swapchain, a GL context's drawable): `per_swapchain`, beside the
// process-wide `figures` that pool every source.
struct CaptureSwapchainFigures {
  int64_t pid = 0;
  uint64_t source = 0;     // index in CaptureResult::sources
  uint64_t swapchain = 0;  // the source's swapchains numbered from 0 in order of first present
  uint64_t frames = 0;
  NamedDistributions figures;  // as CaptureResult::figures
  // Derived from its between_presents.
  CaptureFps fps() const;
  bool operator==(const CaptureSwapchainFigures&) const = default;
};

// What the display path said of the frames (`display`, docs/capture.md
// "Present completion"): those known shown or discarded, and with
// wp_presentation the compositor's report of how it showed them.
struct CaptureDisplay {
  uint64_t shown = 0;                // frames with a display time (display timing, wp_presentation)
  uint64_t discarded = 0;            // frames the compositor replaced before showing them
  std::optional<double> refresh_us;  // median refresh period reported with the shown frames
  // Shown frames whose time the compositor flagged: at a vertical retrace,
  // from the display hardware's clock, completion signalled by the hardware,
  // the program's buffer scanned out without a copy.
  uint64_t vsync = 0, hw_clock = 0, hw_completion = 0, zero_copy = 0;
  bool operator==(const CaptureDisplay&) const = default;
};

// What capture cost the program beyond the distributions of the layer's own
// calls (`overhead`, docs/capture.md "Cost"). Per-frame figures are means
// over the capture, in microseconds; nullopt where a figure could not be
// had (no frame, or no source sent its cost).
struct CaptureOverhead {
  // CPU time of latlab's threads in the program (every thread named
  // latlab-*: collector, present waiters, clock refresh, GL sender).
  std::optional<double> threads_cpu_per_frame_us;
  // The sources' own time in the program's calls plus their threads.
  std::optional<double> layer_cpu_per_frame_us;
  // The driver's CPU for the layer's command buffers, estimated: the
  // bracketing probe's cost per submission (its median over the queues
  // probed) times the bracketed submissions, per frame.
  std::optional<double> driver_cpu_per_frame_us;
  // The device time the layer's command buffers add to the bracketed
  // submissions: the bracketing probe's before + after (p50, median over
  // the queues probed) times the bracketed submissions, per frame. A
  // program that waits for its submissions loses it in wall time.
  std::optional<double> gpu_per_frame_us;
  // The same over the whole capture (us), also for a program that never
  // presents: latlab's own CPU (calls and threads), the driver's estimate,
  // the device time added.
  std::optional<double> layer_cpu_us, driver_cpu_us, gpu_us;
  uint32_t threads = 0;            // latlab-* threads seen
  uint64_t bracketed_submits = 0;  // submissions that carried the layer's command buffers
  // The span budget the capture gave the Vulkan layer (percent of the
  // program's time); nullopt: every submission timed.
  std::optional<double> gpu_span_budget_percent;
  // What the budget priced a span at by the end (us, the dearest over the
  // sources) and where the price came from: "probe" (the bracketing
  // probe's figures), "frames" or "submissions" (the program's timed
  // frames, or blocks of submissions, against its untimed ones, where that
  // was dearer). nullopt / "": no budget.
  std::optional<double> gpu_span_price_us;
  std::string gpu_span_price_from;
  // What the Vulkan layer added to the program's vkCreateDevice calls, once
  // per device (ms, summed over devices: the attach, the clock's
  // calibration, the bracketing probe, the layer's command buffers); a
  // program that times its start-up sees it there. nullopt: no device.
  std::optional<double> setup_ms;
  std::string leaves_out;          // what the figures leave out
  bool operator==(const CaptureOverhead&) const = default;
};

// The bracketing probe on one queue (`bracketing`, docs/capture.md "What a
// span includes"): how far the layer's begin timestamp lies before the
// program's first command and its end timestamp after the program's last,
// and what its command buffers cost the driver per submission, in us.
struct CaptureBracketing {
  int64_t pid = 0;
  uint32_t queue_family = 0, queue_index = 0, rounds = 0;
  double before_p50_us = 0, before_min_us = 0, before_max_us = 0;
  double after_p50_us = 0, after_min_us = 0, after_max_us = 0;
  double cpu_per_submit_us = 0;  // process CPU with the layer's command buffers minus without
  bool operator==(const CaptureBracketing&) const = default;
};

// The frame time (between_presents) over the capture, for a plot, in
// bounded memory: the frame times in present order (every source's) in
// buckets of `frames_per_bucket` consecutive ones (the last bucket may hold
// fewer); never more than kMaxBuckets buckets: when full, neighbours merge
// and the buckets hold twice as many. With at most kMaxBuckets frame times
// each bucket is one frame.
struct CaptureFrameTimeBucket {
  double t_s = 0;  // its first frame's present_start - the capture's first present
  uint64_t frames = 0;
  double min_us = 0, mean_us = 0, max_us = 0;
  bool operator==(const CaptureFrameTimeBucket&) const = default;
};
struct CaptureFrameTimes {
  static constexpr size_t kMaxBuckets = 512;
  uint64_t frames_per_bucket = 1;
  std::vector<CaptureFrameTimeBucket> buckets;  // empty: no frame time (or an older result)
  bool operator==(const CaptureFrameTimes&) const = default;
};

struct CaptureResult {
  std::string partial_reason;  // "" unless what was captured is partial
  CapturedProgram program;
  CaptureStop stop;
  std::vector<CaptureSourceInfo> sources;
  uint64_t frames = 0, submits = 0, submits_without_work = 0;
  uint64_t gpu_spans_missing = 0, frames_with_missing_gpu = 0;
  std::vector<std::pair<std::string, uint64_t>> submit_spans;      // submissions by span outcome
  std::vector<std::pair<std::string, uint64_t>> present_complete;  // frames by completion outcome
  CaptureDisplay display;
  NamedDistributions figures;         // per frame, PresentMon's columns (docs/capture.md)
  CaptureFrameTimes frame_times;      // between_presents over time, decimated
  NamedDistributions submit_figures;  // per submission
  std::vector<CaptureSwapchainFigures> per_swapchain;
  Distribution layer_cpu_per_submit, layer_cpu_per_present;  // the layer's own cost
  CaptureOverhead overhead;
  std::vector<CaptureBracketing> bracketing;
  std::vector<CaptureUnavailable> unavailable;
  std::vector<CaptureScreenObserver> screen_observers;
  // --input: the injected inputs, their frames and reactions; nullopt
  // without --input.
  std::optional<CaptureInput> input;
  // The per-frame figure named `name`, or null.
  const Distribution* figure(std::string_view name) const;
  // Derived from figure("between_presents"); not stored apart.
  CaptureFps fps() const;
  bool operator==(const CaptureResult&) const = default;
};

}  // namespace latlab
