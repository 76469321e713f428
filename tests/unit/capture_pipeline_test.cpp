// The capture pipeline (capture/capture_pipeline.hpp): rows are released in
// present order over sources once nothing can change them (the source's
// next frame came, no screen event awaited, no other source behind), or
// when the lag passed; the screen observer's events are paired as both
// come; the frame-time series stays bounded.
#include "capture/capture_pipeline.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "capture/frame_time_series.hpp"

namespace latlab::capture {
namespace {

constexpr int64_t kMs = 1'000'000;

FrameRecord frame(uint64_t source, uint64_t index, int64_t present_start) {
  FrameRecord f;
  f.head.pid = 7;
  f.head.source = source;
  f.frame = index;
  f.swapchain = 0x10 * source;
  f.present_start = present_start;
  f.present_end = present_start + kMs / 10;
  return f;
}

// The rows as released: (source, frame, screen event time or -1).
struct Released final : CaptureRowSink {
  std::vector<std::tuple<uint64_t, uint64_t, int64_t>> rows;
  void frame(const FrameRowView& v, const CaptureRecords&) override {
    rows.emplace_back(v.row.record.head.source, v.row.record.frame,
                      v.row.screen ? v.row.screen->host_ns : -1);
  }
  void submit(const SubmitRecord&, const CaptureRecords&) override {}
};

struct Pipeline {
  CaptureRecords context;
  Released out;
  CapturePipeline p{context, {&out}};
  void add(const std::vector<FrameRecord>& frames) {
    p.add_frames(frames, context.stream.windows());
  }
};

TEST(CapturePipeline, RowsWaitForTheirSourcesNextFrameAndOtherSources) {
  Pipeline t;
  t.add({frame(1, 0, 10 * kMs), frame(2, 0, 12 * kMs), frame(1, 1, 20 * kMs)});
  t.p.release(0);
  // Source 1's frame 0 has its next; source 2 presented after it.
  ASSERT_EQ(t.out.rows.size(), 1u);
  EXPECT_EQ(std::get<0>(t.out.rows[0]), 1u);
  // Source 2's frame 0 waits for its next frame (or its end).
  t.add({frame(2, 1, 22 * kMs)});
  t.p.release(0);
  ASSERT_EQ(t.out.rows.size(), 2u);
  EXPECT_EQ(std::get<0>(t.out.rows[1]), 2u);
  // The lag releases what still waits, in present order.
  t.p.release(22 * kMs + FrameRowQueue::Limits{}.lag_ns);
  ASSERT_EQ(t.out.rows.size(), 4u);
  EXPECT_EQ(std::get<0>(t.out.rows[2]), 1u);
  EXPECT_EQ(std::get<0>(t.out.rows[3]), 2u);
  EXPECT_EQ(t.p.rows_held(), 0u);
}

TEST(CapturePipeline, AWatchedFrameWaitsForItsScreenEventUntilTheLag) {
  Pipeline t;
  ASSERT_TRUE(t.context.stream.windows().empty());
  CaptureRecords& ctx = t.context;
  // A window record: source 1's swapchain shows on window 99.
  WindowRecord w;
  w.head.magic = kRecordMagic;
  w.head.type = RecordType::window;
  w.head.size = sizeof w;
  w.head.pid = 7;
  w.head.source = 1;
  w.swapchain = 0x10;
  w.window = 99;
  ASSERT_TRUE(ctx.stream.add(std::as_bytes(std::span(&w, 1))));
  t.p.watch({99, 0});
  t.add({frame(1, 0, 10 * kMs), frame(1, 1, 20 * kMs), frame(1, 2, 30 * kMs)});
  t.p.release(0);
  EXPECT_TRUE(t.out.rows.empty()) << "frame 0 waits for its screen event";
  t.p.add_screen_events(std::vector<ScreenEvent>{{11 * kMs, 0, 99}});
  t.p.release(0);
  ASSERT_EQ(t.out.rows.size(), 1u);
  EXPECT_EQ(std::get<2>(t.out.rows[0]), 11 * kMs);
  // Frame 1's event never comes: given up after the lag; a later event
  // goes to frame 2, not to the frame released without one.
  t.p.release(20 * kMs + FrameRowQueue::Limits{}.lag_ns);
  ASSERT_EQ(t.out.rows.size(), 2u);
  EXPECT_EQ(std::get<2>(t.out.rows[1]), -1);
  t.p.add_screen_events(std::vector<ScreenEvent>{{31 * kMs, 0, 99}});
  CaptureSummary s;
  ScreenSummary sc;
  t.p.finish(ctx.stream, s, sc);
  ASSERT_EQ(t.out.rows.size(), 3u);
  EXPECT_EQ(std::get<2>(t.out.rows[2]), 31 * kMs);
  EXPECT_EQ(sc.frames_watched, 3u);
  EXPECT_EQ(sc.frames_matched, 2u);
  EXPECT_EQ(sc.until_screen_updated.missing, 1u);
}

// A frame the compositor showed at `shown_ms`, or discarded (shown_ms < 0).
FrameRecord displayed_frame(uint64_t index, int64_t present_ms, int64_t shown_ms) {
  FrameRecord f = frame(1, index, present_ms * kMs);
  f.complete_method = PresentMethod::wp_presentation;
  if (shown_ms < 0) {
    f.no_complete = NoComplete::discarded;
  } else {
    f.no_complete = NoComplete::none;
    f.present_complete = shown_ms * kMs;
  }
  return f;
}

// Each released frame's between_displays (-1: none) and the frame number
// of the next one shown that its view carried (-1: none).
struct DisplayRows final : CaptureRowSink {
  std::vector<std::pair<int64_t, int64_t>> rows;
  void frame(const FrameRowView& v, const CaptureRecords&) override {
    const auto& b = v.row.figures[static_cast<size_t>(FrameFigure::between_displays)];
    rows.emplace_back(b ? *b : -1,
                      v.next_shown ? static_cast<int64_t>(v.next_shown->record.frame) : -1);
  }
  void submit(const SubmitRecord&, const CaptureRecords&) override {}
};

TEST(CapturePipeline, AShownFrameWaitsPastDiscardedOnesForTheNextShown) {
  CaptureRecords context;
  DisplayRows out;
  CapturePipeline p{context, {&out}};
  // Shown at 20 ms, then two frames discarded (mailbox replaced them).
  p.add_frames(std::vector{displayed_frame(0, 10, 20), displayed_frame(1, 12, -1),
                           displayed_frame(2, 14, -1)},
               context.stream.windows());
  p.release(15 * kMs);
  // Frame 0 has a next frame, but its next shown one has not come.
  EXPECT_TRUE(out.rows.empty());
  p.add_frames(std::vector{displayed_frame(3, 16, 36)}, context.stream.windows());
  p.release(17 * kMs);
  // Frames 0-2 are final (frame 3 waits for its own next one shown).
  ASSERT_EQ(out.rows.size(), 3u);
  EXPECT_EQ(out.rows[0], std::make_pair(int64_t{-1}, int64_t{3}));  // no shown frame before it
  EXPECT_EQ(out.rows[1].first, -1);  // discarded frames have no display interval
  p.release(16 * kMs + FrameRowQueue::Limits{}.lag_ns);
  ASSERT_EQ(out.rows.size(), 4u);
  // Frame 3: 16 ms after frame 0's display, the discarded ones passed over.
  EXPECT_EQ(out.rows[3].first, 16 * kMs);
}

TEST(CapturePipeline, MoreRowsThanTheLimitReleaseTheOldest) {
  CaptureRecords context;
  Released out;
  CapturePipeline p(context, {&out},
                    FrameRowQueue::Limits{.lag_ns = 1'000'000 * kMs, .max_rows = 4});
  std::vector<FrameRecord> frames;
  for (uint64_t i = 0; i < 10; ++i) frames.push_back(frame(1, i, static_cast<int64_t>(i) * kMs));
  p.add_frames(frames, {});
  p.release(0);
  EXPECT_EQ(p.rows_held(), 1u) << "each waited only for the next frame";
  // Source 2 presented once, at the start, and no more: only the limit
  // releases source 1's rows (they wait for source 2 to catch up).
  Released out2;
  CapturePipeline q(context, {&out2},
                    FrameRowQueue::Limits{.lag_ns = 1'000'000 * kMs, .max_rows = 4});
  q.add_frames(std::vector<FrameRecord>{frame(2, 0, 0)}, {});
  q.add_frames(frames, {});
  q.release(0);
  EXPECT_EQ(q.rows_held(), 4u);
  EXPECT_EQ(q.peak_rows_held(), 11u);
}

TEST(FrameTimeSeries, ManyFramesMergeIntoAtMostTheBucketLimit) {
  FrameTimeSeries s;
  s.add(1000 * kMs, std::nullopt);  // time 0: a source's first frame
  const uint64_t n = 4 * CaptureFrameTimes::kMaxBuckets + 3;
  for (uint64_t i = 1; i <= n; ++i)
    s.add(1000 * kMs + static_cast<int64_t>(i) * 10 * kMs, (i % 2 == 0 ? 9 : 11) * kMs);
  const CaptureFrameTimes t = s.result();
  // 4 * 512 fill the buckets four frames each; the next merges them to 8.
  EXPECT_EQ(t.frames_per_bucket, 8u);
  ASSERT_LE(t.buckets.size(), CaptureFrameTimes::kMaxBuckets);
  uint64_t frames = 0;
  for (const auto& b : t.buckets) frames += b.frames;
  EXPECT_EQ(frames, n);
  EXPECT_DOUBLE_EQ(t.buckets[0].t_s, 0.010);
  EXPECT_DOUBLE_EQ(t.buckets[0].min_us, 9000.0);
  EXPECT_DOUBLE_EQ(t.buckets[0].max_us, 11000.0);
  EXPECT_DOUBLE_EQ(t.buckets[0].mean_us, 10000.0);
  EXPECT_EQ(t.buckets.back().frames, 3u);
}

}  // namespace
}  // namespace latlab::capture
