// The figures of `latlab capture` as distributions and counts: built from
// the rows and submissions as they are released (CaptureSummarizer, in
// bounded memory: core/streaming_distribution.hpp), or from a whole record
// stream at once (summarize_capture). No JSON here: the reporters write it.
//
// Threads: not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capture/capture_figures.hpp"
#include "capture/capture_stream.hpp"
#include "capture/frame_time_series.hpp"
#include "core/streaming_distribution.hpp"
#include "latlab/bench/capture_result.hpp"
#include "latlab/stats.hpp"

namespace latlab::capture {

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
  // summarize_capture only: every frame's row in present order. Empty from
  // a session, which hands each row to the writers and drops it.
  std::vector<CaptureFrameRow> frames;
  uint64_t frame_count = 0;
  std::vector<SwapchainSummary> per_swapchain;      // in order of first frame
  Distribution frame_figures[kFrameFigureCount];    // us
  Distribution submit_figures[kSubmitFigureCount];  // us
  CaptureFrameTimes frame_times;                    // between_presents, decimated
  uint64_t submits = 0;
  uint64_t submits_without_work = 0;
  uint64_t gpu_spans_missing = 0;  // submissions with work and no span (all, frames or not)
  uint64_t frames_with_missing_gpu = 0;
  uint64_t no_span_counts[8] = {};      // by NoSpan value
  uint64_t no_complete_counts[kNoCompleteCount] = {};  // frames by NoComplete value
  CaptureDisplay display;  // what the display path said of the frames
  // Each source's ways of learning present_complete that its frames used
  // (a bit per PresentMethod), in the order the sources sent frames.
  struct SourceMethods {
    uint32_t pid = 0;
    uint64_t source = 0;
    uint32_t methods = 0;
  };
  std::vector<SourceMethods> present_methods;
  // CostRecords: CPU ns of latlab's threads, per process the largest of its
  // sources' figures (each is the whole process's), summed over processes;
  // the sources' bracketed submissions, summed.
  int64_t latlab_threads_cpu_ns = 0;
  uint32_t latlab_threads = 0;
  uint64_t bracketed = 0;
  // The span budget's price of a span, the dearest over the sources (0: no
  // budget), and where it came from (SpanPriceFrom's values).
  int64_t span_price_ns = 0;
  uint32_t span_price_from = 0;
  // What the sources added to the program's vkCreateDevice calls, summed
  // (ns); nullopt: no source measured it (no Vulkan device).
  std::optional<int64_t> setup_ns;
  bool has_cost = false;  // some source sent a CostRecord
};

// Accumulates the figures of submissions and of frames' rows as they are
// released, keeping only what the distributions need.
class CaptureSummarizer {
 public:
  void add_submit(const SubmitRecord& s);
  // A frame's row once final, in present order.
  void add_frame(const CaptureFrameRow& row);
  // The summary so far, with `stream`'s costs; `frames` empty.
  CaptureSummary summary(const CaptureStream& stream) const;
  // Bytes the distributions hold (tests and diagnostics).
  size_t bytes() const;

 private:
  struct Swapchain {
    uint32_t pid = 0;
    uint64_t source = 0;
    uint64_t swapchain = 0;
    uint64_t frames = 0;
    StreamingDistribution figures[kFrameFigureCount];
  };
  Swapchain& swapchain_of(const CaptureFrameRow& row);
  void add_display(const FrameRecord& f);
  std::vector<Swapchain> swapchains_;
  StreamingDistribution refresh_;  // the refresh reported with each shown frame (ns in, us out)
  StreamingDistribution frame_figures_[kFrameFigureCount];
  StreamingDistribution submit_figures_[kSubmitFigureCount];
  FrameTimeSeries frame_times_;
  CaptureSummary counts_;  // the counters; its distributions are filled by summary()
};

// Every submission and frame `stream` holds at once: the rows (each
// source's frames in frame order, then merged in present order) and the
// distributions; defined with the pipeline (capture_pipeline.cpp).
CaptureSummary summarize_capture(const CaptureStream& stream);

// "" when no span is missing, else each reason with its count:
// "ring_full 140, not_read 2".
std::string missing_span_reasons(const CaptureSummary& s);

}  // namespace latlab::capture
