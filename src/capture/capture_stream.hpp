// The receiving side of the capture record stream (capture_record.hpp) and
// the typed result of `latlab capture` built from it: per-frame rows and
// their distributions, as PresentMon would name them (docs/capture.md).
// No JSON here: the CLI's reporters write it.
//
// Threads: not thread-safe; one reader thread adds, then summarise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "capture/capture_record.hpp"
#include "latlab/stats.hpp"

namespace latlab::capture {

struct CapturedSource {
  uint32_t pid = 0;
  uint64_t source = 0;
  SourceApi api{};
  std::string device_name;
  std::string clock_method;  // "" when GPU times cannot be placed on the host clock
  std::string source_name;
  std::string present_method;  // how present_complete is measured ("" when it is not)
  bool ended = false;          // an EndRecord came: the source shut down cleanly
};

// A window a source presents to (WindowRecord).
struct CapturedWindow {
  uint32_t pid = 0;
  uint64_t source = 0;
  uint64_t swapchain = 0;
  uint64_t window = 0;
  WindowSystem system = WindowSystem::x11;
  std::string display;
};

// The newest CostRecord of a source.
struct CapturedCost {
  uint32_t pid = 0;
  uint64_t source = 0;
  CostRecord record;
};

// A BracketRecord with its process.
struct CapturedBracket {
  uint32_t pid = 0;
  uint64_t source = 0;
  BracketRecord record;
};

struct CapturedUnavailable {
  uint32_t pid = 0;
  uint64_t source = 0;
  std::string name;
  std::string reason;
};

// Every record received, in arrival order per kind.
class CaptureStream {
 public:
  // One datagram. false: malformed (bad magic, a size that does not match),
  // counted in malformed(); an unknown type is skipped (counted in unknown()).
  bool add(std::span<const std::byte> datagram);

  const std::vector<CapturedSource>& sources() const { return sources_; }
  const std::vector<CapturedUnavailable>& unavailable() const { return unavailable_; }
  const std::vector<SubmitRecord>& submits() const { return submits_; }
  const std::vector<FrameRecord>& frames() const { return frames_; }
  const std::vector<CapturedWindow>& windows() const { return windows_; }
  const std::vector<CapturedCost>& costs() const { return costs_; }
  const std::vector<CapturedBracket>& brackets() const { return brackets_; }
  uint64_t malformed() const { return malformed_; }
  uint64_t unknown() const { return unknown_; }
  // Records the sources could not send: gaps in each process's (and lane's) sequence
  // numbers, or what its last EndRecord counted, whichever is larger.
  uint64_t dropped() const;

 private:
  struct PidSeq {
    uint32_t pid = 0;
    uint8_t lane = 0;  // RecordHead::seq >> kSeqLaneShift
    uint64_t received = 0;
    uint64_t max_seq = 0;
    uint64_t end_dropped = 0;
  };
  // Counts the record on its sender's lane; the lane's entry.
  PidSeq& count_seq(const RecordHead& head);
  // Keeps `r` as the newest cost of its source.
  void set_cost(const RecordHead& head, const CostRecord& r);
  void end_source(const RecordHead& head, const EndRecord& r, PidSeq& seq);
  std::vector<CapturedSource> sources_;
  std::vector<CapturedUnavailable> unavailable_;
  std::vector<SubmitRecord> submits_;
  std::vector<FrameRecord> frames_;
  std::vector<CapturedWindow> windows_;
  std::vector<CapturedCost> costs_;
  std::vector<CapturedBracket> brackets_;
  std::vector<PidSeq> seqs_;
  uint64_t malformed_ = 0;
  uint64_t unknown_ = 0;
};

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

struct CaptureFrameRow {
  FrameRecord record;
  uint32_t pid = 0;
  std::optional<int64_t> figures[kFrameFigureCount];
};

// The frame figures of one swapchain of one source (a VkDevice's swapchain,
// a GL context's drawable), beside the process-wide ones.
struct SwapchainSummary {
  uint32_t pid = 0;
  uint64_t source = 0;
  uint64_t swapchain = 0;
  uint64_t frames = 0;
  Distribution frame_figures[kFrameFigureCount];  // us
};

struct CaptureSummary {
  std::vector<CaptureFrameRow> frames;              // in present order per source, then by source
  std::vector<SwapchainSummary> per_swapchain;      // in order of first frame in `frames`
  Distribution frame_figures[kFrameFigureCount];    // us
  Distribution submit_figures[kSubmitFigureCount];  // us
  uint64_t submits = 0;
  uint64_t submits_without_work = 0;
  uint64_t gpu_spans_missing = 0;  // submissions with work and no span (all, frames or not)
  uint64_t frames_with_missing_gpu = 0;
  uint64_t no_span_counts[7] = {};      // by NoSpan value
  uint64_t no_complete_counts[kNoCompleteCount] = {};  // frames by NoComplete value
  // CostRecords: CPU ns of latlab's threads, per process the largest of its
  // sources' figures (each is the whole process's), summed over processes;
  // the sources' query reads and bracketed submissions, summed.
  int64_t latlab_threads_cpu_ns = 0;
  uint32_t latlab_threads = 0;
  uint64_t query_reads = 0;
  uint64_t bracketed = 0;
  bool has_cost = false;  // some source sent a CostRecord
};

// The name of an outcome in the result's submit_spans ("measured" for none).
const char* to_string(NoSpan why);
// The name of an outcome in the result's present_complete ("measured" for none).
const char* to_string(NoComplete why);

// Whether the frame reached the display, where its source can tell: true
// with a display time (VK_GOOGLE_display_timing, wp_presentation), false
// when the compositor discarded it, nullopt otherwise (present wait's time
// is not a display's: a replaced frame gets one too).
std::optional<bool> displayed(const FrameRecord& f);

// Builds the rows and distributions from everything in `stream`.
CaptureSummary summarize_capture(const CaptureStream& stream);

// "" when no span is missing, else each reason with its count:
// "ring_full 140, not_read 2".
std::string missing_span_reasons(const CaptureSummary& s);

}  // namespace latlab::capture
