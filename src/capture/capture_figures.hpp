// The figures of `latlab capture` per frame and per submission, as
// PresentMon would name them (docs/capture.md), and a frame's row: its
// record, its figures and what the screen observer saw of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "capture/capture_record.hpp"

namespace latlab::capture {

// The per-frame figures of the result (ns; nullopt = not measured). Named
// after PresentMon's columns (docs/capture.md says where they differ).
enum class FrameFigure : uint8_t {
  between_presents,       // MsBetweenPresents: present_start - previous present_start
  in_present_api,         // MsInPresentAPI: present_end - present_start
  cpu_busy,               // MsCPUBusy: present_start - frame_start
  acquire_wait,           // (no column) time of cpu_busy blocked in acquiring an image
  gpu_latency,            // MsGPULatency: gpu_begin - frame_start
  gpu_time,               // MsGPUTime: gpu_end - gpu_begin
  gpu_busy,               // MsGPUBusy: union of the frame's GPU spans
  gpu_wait,               // MsGPUWait: gpu_time - gpu_busy
  until_render_complete,  // MsUntilRenderComplete: gpu_end - present_start
  until_displayed,        // MsUntilDisplayed: present_complete - present_start
  // MsBetweenDisplayChange: present_complete - that of the source's last
  // frame displayed before (display times only: displayed(); discarded
  // frames in between are passed over)
  between_displays,
  layer_present_cpu,      // the source's own CPU time in the present call
  layer_submit_cpu,       // the source's own CPU time in the frame's submits (sum)
  count_,
};
inline constexpr size_t kFrameFigureCount = static_cast<size_t>(FrameFigure::count_);
const char* to_string(FrameFigure f);

// Per submission (all submissions, frames or not).
enum class SubmitFigure : uint8_t {
  gpu_span,       // gpu_end - gpu_begin of the submission
  submit_to_gpu,  // gpu_begin - cpu_start
  in_submit_api,  // cpu_end - cpu_start (the layer's cost included)
  layer_cpu,      // the source's own CPU time in the call
  count_,
};
inline constexpr size_t kSubmitFigureCount = static_cast<size_t>(SubmitFigure::count_);
const char* to_string(SubmitFigure f);

// One change of a window's contents as a screen observer received it.
struct ScreenEvent {
  int64_t host_ns = 0;     // latlab's thread read the event (CLOCK_MONOTONIC)
  uint32_t server_ms = 0;  // the X server's timestamp of the event (ms, 32 bits)
  uint64_t window = 0;
  // The rectangle drawn, in the window's coordinates (width 0: unknown).
  int32_t x = 0, y = 0;
  uint32_t width = 0, height = 0;
};

struct CaptureFrameRow {
  FrameRecord record;
  uint32_t pid = 0;
  std::optional<int64_t> figures[kFrameFigureCount];
  // The screen observer's event paired with the frame (screen_observer.hpp);
  // nullopt: none, or the frame's window was not watched.
  std::optional<ScreenEvent> screen;
  bool screen_watched = false;  // its window was watched when it was presented
};

// The name of an outcome in the result's present_complete ("measured" for none).
const char* to_string(NoComplete why);

// Whether the frame reached the display, where its source can tell: true
// with a display time (VK_GOOGLE_display_timing, wp_presentation), false
// when the compositor discarded it, nullopt otherwise (present wait's time
// is not a display's: a replaced frame gets one too).
std::optional<bool> displayed(const FrameRecord& f);

// Frame `f`'s row; `prev` is the frame its source sent before it (or null),
// `last_shown` the display time of the source's last frame displayed before
// it (kNoTime: none, or one in between not known to be displayed or not).
CaptureFrameRow frame_row(const FrameRecord& f, const FrameRecord* prev, int64_t last_shown,
                          uint32_t pid);

// What `last_shown` becomes for the source's next frame once `f` (sent
// after `prev`) is its latest.
int64_t last_shown_after(const FrameRecord& f, const FrameRecord* prev, int64_t last_shown);

// Submission `s`'s figures (ns); nullopt where not measured. A submission
// without work has no GPU figures at all: `counted` is false for those.
struct SubmitFigures {
  std::optional<int64_t> values[kSubmitFigureCount];
  bool counted[kSubmitFigureCount] = {};
};
SubmitFigures submit_figures(const SubmitRecord& s);

// b - a, or nullopt when either was not measured.
std::optional<int64_t> time_diff(int64_t b, int64_t a);

}  // namespace latlab::capture
