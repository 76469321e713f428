#include "capture/capture_summary.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace latlab::capture {

void CaptureSummarizer::add_submit(const SubmitRecord& s) {
  CaptureSummary& c = counts_;
  ++c.submits;
  const auto why = static_cast<size_t>(s.no_span);
  if (why < std::size(c.no_span_counts)) ++c.no_span_counts[why];
  if (s.no_span == NoSpan::no_work) {
    ++c.submits_without_work;
  } else if (s.no_span != NoSpan::none || s.gpu_begin == kNoTime || s.gpu_end == kNoTime) {
    ++c.gpu_spans_missing;
  }
  const SubmitFigures f = submit_figures(s);
  for (size_t i = 0; i < kSubmitFigureCount; ++i) {
    if (f.counted[i]) submit_figures_[i].add(f.values[i]);
  }
}

CaptureSummarizer::Swapchain& CaptureSummarizer::swapchain_of(const CaptureFrameRow& r) {
  const auto it = std::find_if(swapchains_.begin(), swapchains_.end(), [&](const Swapchain& w) {
    return w.pid == r.pid && w.source == r.record.head.source && w.swapchain == r.record.swapchain;
  });
  if (it != swapchains_.end()) return *it;
  Swapchain& w = swapchains_.emplace_back();
  w.pid = r.pid;
  w.source = r.record.head.source;
  w.swapchain = r.record.swapchain;
  return w;
}

// What the display path said of frame `f`: shown (with the compositor's
// flags and refresh) or discarded, and how its present_complete was learnt.
void CaptureSummarizer::add_display(const FrameRecord& f) {
  CaptureSummary& c = counts_;
  const auto it =
      std::find_if(c.present_methods.begin(), c.present_methods.end(),
                   [&](const auto& m) { return m.pid == f.head.pid && m.source == f.head.source; });
  auto& methods = it != c.present_methods.end()
                      ? *it
                      : c.present_methods.emplace_back(
                            CaptureSummary::SourceMethods{f.head.pid, f.head.source, 0});
  methods.methods |= 1U << (static_cast<uint32_t>(f.complete_method) & 31U);
  const auto shown = displayed(f);
  if (!shown) return;
  CaptureDisplay& d = c.display;
  if (!*shown) {
    ++d.discarded;
    return;
  }
  ++d.shown;
  if (f.refresh_ns != kNoTime) refresh_.add(f.refresh_ns);
  d.vsync += (f.display_flags & kDisplayVsync) != 0 ? 1 : 0;
  d.hw_clock += (f.display_flags & kDisplayHwClock) != 0 ? 1 : 0;
  d.hw_completion += (f.display_flags & kDisplayHwCompletion) != 0 ? 1 : 0;
  d.zero_copy += (f.display_flags & kDisplayZeroCopy) != 0 ? 1 : 0;
}

void CaptureSummarizer::add_frame(const CaptureFrameRow& row) {
  CaptureSummary& c = counts_;
  ++c.frame_count;
  if (row.record.gpu_spans_missing > 0) ++c.frames_with_missing_gpu;
  const auto nc = static_cast<size_t>(row.record.no_complete);
  if (nc < std::size(c.no_complete_counts)) ++c.no_complete_counts[nc];
  add_display(row.record);
  Swapchain& w = swapchain_of(row);
  ++w.frames;
  for (size_t i = 0; i < kFrameFigureCount; ++i) {
    frame_figures_[i].add(row.figures[i]);
    w.figures[i].add(row.figures[i]);
  }
  frame_times_.add(row.record.present_start,
                   row.figures[static_cast<size_t>(FrameFigure::between_presents)]);
}

namespace {

// latlab's own cost: threads per process the largest of its sources'
// figures (each is the whole process's), summed over processes.
void summarize_costs(const CaptureStream& stream, CaptureSummary& out) {
  std::map<uint32_t, std::pair<int64_t, uint32_t>> threads_by_pid;  // cpu ns, threads
  for (const CapturedCost& c : stream.costs()) {
    out.has_cost = true;
    out.bracketed += c.record.bracketed;
    if (c.record.span_price_ns > out.span_price_ns) {
      out.span_price_ns = c.record.span_price_ns;
      out.span_price_from = c.record.span_price_from;
    }
    if (c.record.setup_ns != kNoTime) out.setup_ns = out.setup_ns.value_or(0) + c.record.setup_ns;
    auto& [cpu, n] = threads_by_pid[c.pid];
    cpu = std::max(cpu, c.record.threads_cpu_ns);
    n = std::max(n, c.record.threads);
  }
  for (const auto& [pid, t] : threads_by_pid) {
    out.latlab_threads_cpu_ns += t.first;
    out.latlab_threads += t.second;
  }
}

}  // namespace

CaptureSummary CaptureSummarizer::summary(const CaptureStream& stream) const {
  CaptureSummary out = counts_;
  for (size_t i = 0; i < kFrameFigureCount; ++i) out.frame_figures[i] = frame_figures_[i].summary();
  for (size_t i = 0; i < kSubmitFigureCount; ++i)
    out.submit_figures[i] = submit_figures_[i].summary();
  for (const Swapchain& w : swapchains_) {
    SwapchainSummary s{w.pid, w.source, w.swapchain, w.frames, {}};
    for (size_t i = 0; i < kFrameFigureCount; ++i) s.frame_figures[i] = w.figures[i].summary();
    out.per_swapchain.push_back(std::move(s));
  }
  out.frame_times = frame_times_.result();
  if (const Distribution r = refresh_.summary(); r.count > 0) out.display.refresh_us = r.p50;
  summarize_costs(stream, out);
  return out;
}

size_t CaptureSummarizer::bytes() const {
  size_t n = 0;
  for (const auto& d : frame_figures_) n += d.bytes();
  for (const auto& d : submit_figures_) n += d.bytes();
  n += refresh_.bytes();
  for (const Swapchain& w : swapchains_) {
    for (const auto& d : w.figures) n += d.bytes();
  }
  return n;
}

std::string missing_span_reasons(const CaptureSummary& s) {
  std::string out;
  for (size_t i = 0; i < std::size(s.no_span_counts); ++i) {
    const auto why = static_cast<NoSpan>(i);
    if (why == NoSpan::none || why == NoSpan::no_work || s.no_span_counts[i] == 0) continue;
    out += (out.empty() ? "" : ", ") + std::string(to_string(why)) + " " +
           std::to_string(s.no_span_counts[i]);
  }
  return out;
}

}  // namespace latlab::capture
