// A frame's GPU figures from its submissions (fill_gpu_figures,
// union_length_ns) and the per-frame figures `latlab capture` derives from
// the record stream (summarize_capture), on synthetic record sequences with
// every expected value worked out here.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "capture/capture_stream.hpp"
#include "capture/capture_summary.hpp"
#include "capture/frame_assembly.hpp"

namespace latlab::capture {
namespace {

SubmitRecord span(int64_t begin, int64_t end, int64_t source_cpu = 0) {
  SubmitRecord s;
  s.gpu_begin = begin;
  s.gpu_end = end;
  s.source_cpu_ns = source_cpu;
  s.command_buffers = 1;
  return s;
}

SubmitRecord no_span(NoSpan why) {
  SubmitRecord s;
  s.no_span = why;
  return s;
}

TEST(FrameAssembly, SeveralSubmitsGiveFirstBeginLastEndAndTheUnionAsBusy) {
  // [100,200) and [150,300) overlap: 200 ns; [400,450): 50 ns; gap 300..400.
  const std::vector<SubmitRecord> s = {span(100, 200, 7), span(150, 300, 11), span(400, 450, 13)};
  FrameRecord f;
  fill_gpu_figures(f, s);
  EXPECT_EQ(f.submits, 3u);
  EXPECT_EQ(f.gpu_spans_missing, 0u);
  EXPECT_EQ(f.gpu_begin, 100);
  EXPECT_EQ(f.gpu_end, 450);
  EXPECT_EQ(f.gpu_busy_ns, (300 - 100) + (450 - 400));
  EXPECT_EQ(f.source_submit_ns, 7 + 11 + 13);
}

TEST(FrameAssembly, BusyCountsNestedTouchingAndRepeatedSpansOnce) {
  // [0,1000) holds [100,200) and a repeat of itself; [1000,1010) touches it.
  const std::vector<SubmitRecord> s = {span(0, 1000), span(100, 200), span(0, 1000),
                                       span(1000, 1010)};
  EXPECT_EQ(union_length_ns(s), 1010);
  // A span that runs backwards and one not measured add nothing.
  const std::vector<SubmitRecord> odd = {span(500, 400), no_span(NoSpan::ring_full), span(0, 10)};
  EXPECT_EQ(union_length_ns(odd), 10);
}

TEST(FrameAssembly, SubmitsArrivingOutOfOrderGiveTheSameFrame) {
  std::vector<SubmitRecord> s = {span(100, 200), span(150, 300), span(400, 450)};
  FrameRecord in_order;
  fill_gpu_figures(in_order, s);
  std::vector<SubmitRecord> reversed(s.rbegin(), s.rend());
  FrameRecord out_of_order;
  fill_gpu_figures(out_of_order, reversed);
  EXPECT_EQ(out_of_order.gpu_begin, 100);
  EXPECT_EQ(out_of_order.gpu_end, 450);
  EXPECT_EQ(out_of_order.gpu_busy_ns, 250);
  EXPECT_EQ(out_of_order.gpu_busy_ns, in_order.gpu_busy_ns);
}

TEST(FrameAssembly, AMissingSpanLeavesTheFrameWithoutGpuFigures) {
  // Part of the frame's work unseen: no begin, end or busy that would leave it out.
  for (NoSpan why : {NoSpan::cannot_time, NoSpan::ring_full, NoSpan::not_bracketable,
                     NoSpan::not_read, NoSpan::failed}) {
    const std::vector<SubmitRecord> s = {span(100, 200), no_span(why), span(300, 400)};
    FrameRecord f;
    fill_gpu_figures(f, s);
    EXPECT_EQ(f.submits, 3u);
    EXPECT_EQ(f.gpu_spans_missing, 1u) << static_cast<int>(why);
    EXPECT_EQ(f.gpu_begin, kNoTime);
    EXPECT_EQ(f.gpu_end, kNoTime);
    EXPECT_EQ(f.gpu_busy_ns, kNoTime);
  }
  // Measured but a time lost on the way: missing too.
  const std::vector<SubmitRecord> lost = {span(100, kNoTime)};
  FrameRecord f;
  fill_gpu_figures(f, lost);
  EXPECT_EQ(f.gpu_spans_missing, 1u);
  EXPECT_EQ(f.gpu_begin, kNoTime);
}

TEST(FrameAssembly, SubmitsWithoutWorkAreNeitherTimedNorMissing) {
  const std::vector<SubmitRecord> s = {no_span(NoSpan::no_work), span(100, 200)};
  FrameRecord f;
  fill_gpu_figures(f, s);
  EXPECT_EQ(f.submits, 2u);
  EXPECT_EQ(f.gpu_spans_missing, 0u);
  EXPECT_EQ(f.gpu_begin, 100);
  EXPECT_EQ(f.gpu_end, 200);
  EXPECT_EQ(f.gpu_busy_ns, 100);
}

TEST(FrameAssembly, AFrameWithoutSubmitsHasNoGpuFiguresAndNothingMissing) {
  FrameRecord f;
  f.gpu_begin = 5;  // whatever was there is replaced
  fill_gpu_figures(f, {});
  EXPECT_EQ(f.submits, 0u);
  EXPECT_EQ(f.gpu_spans_missing, 0u);
  EXPECT_EQ(f.source_submit_ns, 0);
  EXPECT_EQ(f.gpu_begin, kNoTime);
  EXPECT_EQ(f.gpu_end, kNoTime);
  EXPECT_EQ(f.gpu_busy_ns, kNoTime);
  // Only no-work submissions: the same.
  const std::vector<SubmitRecord> idle = {no_span(NoSpan::no_work)};
  fill_gpu_figures(f, idle);
  EXPECT_EQ(f.submits, 1u);
  EXPECT_EQ(f.gpu_begin, kNoTime);
  EXPECT_EQ(f.gpu_spans_missing, 0u);
}

// ---------------------------------------------------------------------------
// From the record stream to per-frame figures.

template <class R>
void add(CaptureStream& st, R r, RecordType type, uint64_t seq, uint64_t source = 1) {
  r.head = RecordHead{};
  r.head.type = type;
  r.head.size = sizeof(R);
  r.head.pid = 42;
  r.head.seq = seq;
  r.head.source = source;
  std::vector<std::byte> bytes(sizeof(R));
  std::memcpy(bytes.data(), &r, sizeof(R));
  ASSERT_TRUE(st.add(bytes));
}

FrameRecord frame(uint64_t index, int64_t frame_start, int64_t present_start, int64_t present_end) {
  FrameRecord f;
  f.frame = index;
  f.frame_start = frame_start;
  f.present_start = present_start;
  f.present_end = present_end;
  return f;
}

std::optional<int64_t> figure(const CaptureFrameRow& row, FrameFigure x) {
  return row.figures[static_cast<size_t>(x)];
}

TEST(CaptureSummary, FramesArrivingOutOfOrderAreSortedAndTheFirstHasNoStart) {
  // Three frames, 1000 ns apart, sent 2, 0, 1; frame 0 has no frame_start.
  FrameRecord f0 = frame(0, kNoTime, 1000, 1100);
  FrameRecord f1 = frame(1, 1150, 2000, 2100);
  FrameRecord f2 = frame(2, 2150, 3000, 3300);
  f1.gpu_begin = 1500;
  f1.gpu_end = 2600;
  f1.gpu_busy_ns = 900;
  f1.acquire_wait_ns = 40;
  CaptureStream st;
  add(st, f2, RecordType::frame, 0);
  add(st, f0, RecordType::frame, 1);
  add(st, f1, RecordType::frame, 2);
  const CaptureSummary s = summarize_capture(st);
  ASSERT_EQ(s.frames.size(), 3u);
  EXPECT_EQ(s.frames[0].record.frame, 0u);
  EXPECT_EQ(s.frames[1].record.frame, 1u);
  EXPECT_EQ(s.frames[2].record.frame, 2u);
  const auto& r0 = s.frames[0];
  EXPECT_FALSE(figure(r0, FrameFigure::between_presents));
  EXPECT_FALSE(figure(r0, FrameFigure::cpu_busy));
  EXPECT_FALSE(figure(r0, FrameFigure::acquire_wait));
  EXPECT_FALSE(figure(r0, FrameFigure::gpu_latency));
  EXPECT_EQ(figure(r0, FrameFigure::in_present_api), 100);
  const auto& r1 = s.frames[1];
  EXPECT_EQ(figure(r1, FrameFigure::between_presents), 2000 - 1000);
  EXPECT_EQ(figure(r1, FrameFigure::cpu_busy), 2000 - 1150);
  EXPECT_EQ(figure(r1, FrameFigure::acquire_wait), 40);
  EXPECT_EQ(figure(r1, FrameFigure::gpu_latency), 1500 - 1150);
  EXPECT_EQ(figure(r1, FrameFigure::gpu_time), 2600 - 1500);
  EXPECT_EQ(figure(r1, FrameFigure::gpu_busy), 900);
  EXPECT_EQ(figure(r1, FrameFigure::gpu_wait), (2600 - 1500) - 900);
  EXPECT_EQ(figure(r1, FrameFigure::until_render_complete), 2600 - 2000);
  EXPECT_FALSE(figure(r1, FrameFigure::until_displayed)) << "no present_complete";
  EXPECT_EQ(figure(s.frames[2], FrameFigure::in_present_api), 300);
  // Distributions in us: between_presents 1.0 and 1.0, frame 0 missing.
  const Distribution& bp = s.frame_figures[static_cast<size_t>(FrameFigure::between_presents)];
  EXPECT_EQ(bp.count, 2u);
  EXPECT_EQ(bp.missing, 1u);
  EXPECT_DOUBLE_EQ(bp.p50, 1.0);
}

TEST(CaptureSummary, AGapInFrameIndicesGivesNoBetweenPresents) {
  CaptureStream st;
  add(st, frame(0, kNoTime, 1000, 1100), RecordType::frame, 0);
  add(st, frame(2, 2150, 3000, 3100), RecordType::frame, 1);
  const CaptureSummary s = summarize_capture(st);
  ASSERT_EQ(s.frames.size(), 2u);
  EXPECT_FALSE(figure(s.frames[1], FrameFigure::between_presents)) << "frame 1 was not seen";
  EXPECT_EQ(figure(s.frames[1], FrameFigure::cpu_busy), 3000 - 2150);
}

// A source without image acquires (the GL interposer) sends kNoTime: the
// figure is missing, not INT64_MIN or 0.
TEST(CaptureSummary, AnAcquireWaitNotMeasuredIsMissing) {
  FrameRecord f1 = frame(1, 1150, 2000, 2100);
  f1.acquire_wait_ns = kNoTime;
  CaptureStream st;
  add(st, frame(0, kNoTime, 1000, 1100), RecordType::frame, 0);
  add(st, f1, RecordType::frame, 1);
  const CaptureSummary s = summarize_capture(st);
  ASSERT_EQ(s.frames.size(), 2u);
  EXPECT_FALSE(figure(s.frames[1], FrameFigure::acquire_wait));
  const Distribution& aw = s.frame_figures[static_cast<size_t>(FrameFigure::acquire_wait)];
  EXPECT_EQ(aw.count, 0u);
  EXPECT_EQ(aw.missing, 2u);
}

TEST(CaptureSummary, SubmitsAreCountedByWhyTheyHaveNoSpan) {
  SubmitRecord measured = span(150, 250, 3);
  measured.cpu_start = 100;
  measured.cpu_end = 120;
  SubmitRecord unread = no_span(NoSpan::not_read);
  unread.cpu_start = 200;
  unread.cpu_end = 230;
  SubmitRecord idle = no_span(NoSpan::no_work);
  CaptureStream st;
  add(st, measured, RecordType::submit, 0);
  add(st, unread, RecordType::submit, 1);
  add(st, idle, RecordType::submit, 2);
  const CaptureSummary s = summarize_capture(st);
  EXPECT_EQ(s.submits, 3u);
  EXPECT_EQ(s.submits_without_work, 1u);
  EXPECT_EQ(s.gpu_spans_missing, 1u);
  EXPECT_EQ(s.no_span_counts[static_cast<size_t>(NoSpan::none)], 1u);
  EXPECT_EQ(s.no_span_counts[static_cast<size_t>(NoSpan::not_read)], 1u);
  EXPECT_EQ(s.no_span_counts[static_cast<size_t>(NoSpan::no_work)], 1u);
  const auto& gpu = s.submit_figures[static_cast<size_t>(SubmitFigure::gpu_span)];
  EXPECT_EQ(gpu.count, 1u);
  EXPECT_EQ(gpu.missing, 1u) << "no_work is not missing";
  EXPECT_DOUBLE_EQ(gpu.max, 0.1);
  const auto& to_gpu = s.submit_figures[static_cast<size_t>(SubmitFigure::submit_to_gpu)];
  EXPECT_DOUBLE_EQ(to_gpu.max, 0.05);
}

// The Vulkan layer and the GL interposer in one process (a GL program on a
// Vulkan driver, or one using both APIs) each number their records; the
// lane in the top byte of seq keeps the two counts apart.
TEST(CaptureStreamSeq, TwoSendersInOneProcessCountTheirRecordsApart) {
  const uint64_t gl = uint64_t{kSeqLaneGlInterposer} << kSeqLaneShift;
  CaptureStream st;
  for (uint64_t i = 0; i < 3; ++i) add(st, frame(i, kNoTime, 1000, 1100), RecordType::frame, i, 1);
  for (uint64_t i = 0; i < 2; ++i)
    add(st, frame(i, kNoTime, 1000, 1100), RecordType::frame, gl + i, 2);
  EXPECT_EQ(st.dropped(), 0u);
  // A gap in the GL interposer's numbers: one record it could not send.
  add(st, frame(3, kNoTime, 1000, 1100), RecordType::frame, gl + 3, 2);
  EXPECT_EQ(st.dropped(), 1u);
}

}  // namespace
}  // namespace latlab::capture
