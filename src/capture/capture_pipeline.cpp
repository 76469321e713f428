#include "capture/capture_pipeline.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace latlab::capture {

CapturePipeline::CapturePipeline(const CaptureRecords& context, std::vector<CaptureRowSink*> sinks,
                                 FrameRowQueue::Limits limits)
    : context_(context), sinks_(std::move(sinks)), queue_(limits) {}

void CapturePipeline::take(CaptureStream& stream) {
  const auto& sources = stream.sources();
  for (; sources_seen_ < sources.size(); ++sources_seen_)
    queue_.source_started(sources[sources_seen_].pid, sources[sources_seen_].source);
  add_submits(stream.take_submits());
  add_frames(stream.take_frames(), stream.windows());
  // After its frames: an ended source holds no row back any more.
  for (const CapturedSource& s : sources) {
    if (s.ended) queue_.source_ended(s.pid, s.source);
  }
}

void CapturePipeline::add_submits(std::span<const SubmitRecord> submits) {
  for (const SubmitRecord& s : submits) {
    for (CaptureRowSink* sink : sinks_) sink->submit(s, context_);
    summarizer_.add_submit(s);
  }
}

CapturePipeline::LastFrame* CapturePipeline::last_frame_of(const FrameRecord& f) {
  const auto it = std::find_if(last_frames_.begin(), last_frames_.end(), [&](const LastFrame& x) {
    return x.record.head.pid == f.head.pid && x.record.head.source == f.head.source;
  });
  return it == last_frames_.end() ? nullptr : &*it;
}

void CapturePipeline::add_frames(std::span<const FrameRecord> frames,
                                 std::span<const CapturedWindow> windows) {
  for (const FrameRecord& f : frames) {
    LastFrame* last = last_frame_of(f);
    const FrameRecord* prev = last != nullptr ? &last->record : nullptr;
    const int64_t shown = last != nullptr ? last->shown : kNoTime;
    CaptureFrameRow& row = queue_.add(frame_row(f, prev, shown, f.head.pid));
    const int64_t shown_after = last_shown_after(f, prev, shown);
    if (last != nullptr) {
      *last = {f, shown_after};
    } else {
      last_frames_.push_back({f, shown_after});
    }
    matcher_.add_frame(row, windows);
  }
  matcher_.pair();
}

void CapturePipeline::add_screen_events(std::span<const ScreenEvent> events) {
  for (const ScreenEvent& e : events) matcher_.add_event(e);
  matcher_.pair();
  peak_events_ = std::max(peak_events_, matcher_.events_held());
}

void CapturePipeline::on_release(CaptureFrameRow& row, const FrameRowView& view) {
  // Released without its screen event (the lag passed): it waits no more.
  if (row.screen_watched && !row.screen) matcher_.forget(row);
  for (CaptureRowSink* sink : sinks_) sink->frame(view, context_);
  summarizer_.add_frame(row);
  screen_tally_.add(row);
}

void CapturePipeline::release(int64_t now) {
  queue_.release(now, [this](CaptureFrameRow& row, const FrameRowView& v) { on_release(row, v); });
  matcher_.drop_old_events(now);
}

void CapturePipeline::finish(const CaptureStream& stream, CaptureSummary& summary,
                             ScreenSummary& screen) {
  matcher_.pair();
  queue_.release_all([this](CaptureFrameRow& row, const FrameRowView& v) { on_release(row, v); });
  summary = summarizer_.summary(stream);
  screen = screen_tally_.summary(matcher_.events());
}

namespace {

// Keeps every row it is given (summarize_capture's rows).
class RowCollector final : public CaptureRowSink {
 public:
  std::vector<CaptureFrameRow> rows;
  void frame(const FrameRowView& v, const CaptureRecords&) override { rows.push_back(v.row); }
  void submit(const SubmitRecord&, const CaptureRecords&) override {}
};

}  // namespace

CaptureSummary summarize_capture(const CaptureStream& stream) {
  // Each source's frames in frame order, sources by (pid, source).
  std::vector<FrameRecord> frames = stream.frames();
  std::stable_sort(frames.begin(), frames.end(), [](const FrameRecord& a, const FrameRecord& b) {
    return std::tie(a.head.pid, a.head.source, a.frame) <
           std::tie(b.head.pid, b.head.source, b.frame);
  });
  const CaptureRecords context;
  RowCollector rows;
  CapturePipeline pipeline(context, {&rows});
  pipeline.add_submits(stream.submits());
  pipeline.add_frames(frames, stream.windows());
  CaptureSummary summary;
  ScreenSummary screen;
  pipeline.finish(stream, summary, screen);
  summary.frames = std::move(rows.rows);
  return summary;
}

void replay_rows(const CaptureRecords& records, CaptureRowSink& sink) {
  for (const SubmitRecord& s : records.stream.submits()) sink.submit(s, records);
  FrameRowQueue queue;
  for (const CaptureFrameRow& row : records.summary.frames) queue.add(row);
  queue.release_all([&](CaptureFrameRow&, const FrameRowView& v) { sink.frame(v, records); });
}

}  // namespace latlab::capture
