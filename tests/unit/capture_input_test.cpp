// `latlab capture --input`'s logic without an X server: the schedule (the
// run's seeded generator, absolute deadlines), the option parsers, and the
// assignment of inputs to frames (PresentMon's rule) and to reactions
// (the window's first change after the input), as rows come.
#include "latlab/bench/capture_input.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "capture/input_assignment.hpp"
#include "latlab/bench/schedule.hpp"

namespace latlab::capture {
namespace {

TEST(CaptureInputSchedule, SameSeedSameDeadlinesFromAnyStart) {
  const ScheduleDesc desc{42, 8'000'000, 12'000'000};
  const auto a = input_deadlines(desc, 1'000, 500);
  const auto b = input_deadlines(desc, 5'000'000'000, 500);
  ASSERT_EQ(a.size(), 500u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i] - 1'000, b[i] - 5'000'000'000) << i;
  EXPECT_NE(input_deadlines({43, 8'000'000, 12'000'000}, 1'000, 500), a);
}

TEST(CaptureInputSchedule, IsTheRunsScheduleAccumulatedOnAbsoluteDeadlines) {
  const ScheduleDesc desc{7, 8'000'000, 12'000'000};
  Schedule run(desc);
  const auto d = input_deadlines(desc, 100, 1000);
  int64_t t = 100;
  int64_t lo = INT64_MAX, hi = 0;
  for (const int64_t deadline : d) {
    const int64_t interval = run.next_interval_ns();
    t += interval;
    EXPECT_EQ(deadline, t);
    lo = std::min(lo, interval);
    hi = std::max(hi, interval);
  }
  EXPECT_GE(lo, 8'000'000);
  EXPECT_LE(hi, 12'000'000);
  EXPECT_LT(lo, 8'200'000) << "1000 draws cover the range";
  EXPECT_GT(hi, 11'800'000);
}

TEST(CaptureInputOptions, SpecsParseAndNameThemselves) {
  auto k = parse_input_spec("key:space");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->kind, InputKind::key);
  EXPECT_EQ(to_string(*k), "key:space");
  auto b = parse_input_spec("button:3");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->button, 3u);
  EXPECT_EQ(to_string(*b), "button:3");
  EXPECT_EQ(parse_input_spec("motion")->kind, InputKind::motion);
  for (const char* bad : {"key:", "button:0", "button:6", "button:x", "click", "", "button:1x"})
    EXPECT_FALSE(parse_input_spec(bad)) << bad;
}

TEST(CaptureInputOptions, IntervalRanges) {
  using P = std::pair<int64_t, int64_t>;
  EXPECT_EQ(*parse_interval_range("8-12ms"), P(8'000'000, 12'000'000));
  EXPECT_EQ(*parse_interval_range("10ms"), P(10'000'000, 10'000'000));
  EXPECT_EQ(*parse_interval_range("500us-1ms"), P(500'000, 1'000'000));
  EXPECT_EQ(*parse_interval_range("0.5-1s"), P(500'000'000, 1'000'000'000));
  for (const char* bad : {"12-8ms", "8-12", "ms", "8-12parsecs", "-5ms", "0ms", "nan-1ms", ""})
    EXPECT_FALSE(parse_interval_range(bad)) << bad;
}

TEST(CaptureInputOptions, Regions) {
  auto r = parse_input_region("10,-5,80,24");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (InputRegion{10, -5, 80, 24}));
  EXPECT_EQ(to_string(*r), "10,-5,80,24");
  for (const char* bad : {"10,5,80", "10,5,0,24", "10,5,80,-1", "a,5,80,24", "1,2,3,4,5", "",
                          "10,5,80,24,", "10,5,80,99999999"})
    EXPECT_FALSE(parse_input_region(bad)) << bad;
}

TEST(CaptureInputOptions, AChangeCountsInARegionItOverlaps) {
  const InputRegion r{10, 10, 20, 5};  // x 10..29, y 10..14
  auto change = [](int32_t x, int32_t y, uint32_t w, uint32_t h) {
    return ScreenEvent{0, 0, 1, x, y, w, h};
  };
  EXPECT_TRUE(overlaps(change(0, 0, 11, 11), r));
  EXPECT_TRUE(overlaps(change(29, 14, 1, 1), r));
  EXPECT_TRUE(overlaps(change(0, 0, 100, 100), r));
  EXPECT_FALSE(overlaps(change(0, 0, 10, 100), r));  // ends at x 9
  EXPECT_FALSE(overlaps(change(30, 10, 5, 5), r));
  EXPECT_FALSE(overlaps(change(10, 15, 20, 5), r));
  EXPECT_TRUE(overlaps(change(500, 500, 0, 0), r)) << "extent unknown: counted";
}

CaptureFrameRow frame(uint64_t n, int64_t frame_start, int64_t present_start) {
  CaptureFrameRow r;
  r.pid = 10;
  r.record.frame = n;
  r.record.frame_start = frame_start;
  r.record.present_start = present_start;
  r.record.present_end = present_start + 100;
  r.record.gpu_end = present_start + 50;
  return r;
}

InputMarker marker(uint64_t id, int64_t sent) { return {id, sent - 20, sent - 10, sent}; }

// XTest's raw key event as the recorder read it at `host_ns`.
RawInputEvent xtest_key(int64_t host_ns) { return {host_ns, 0, InputKind::key, true}; }

const Distribution& figure(const InputTotals& t, const std::string& name) {
  for (const auto& [n, d] : t.figures) {
    if (n == name) return d;
  }
  static const Distribution none;
  ADD_FAILURE() << "no figure " << name;
  return none;
}

struct Collected {
  std::vector<InputRow> rows;
  InputAssigner::Release release() {
    return [this](const InputRow& r) { rows.push_back(r); };
  }
};

TEST(CaptureInputAssignment, EachInputGoesToTheFirstFrameStartedAfterIt) {
  Collected c;
  InputAssigner a(false, c.release());
  a.add_input(marker(0, 1'000));
  a.add_raw(xtest_key(1'050), InputKind::key);
  a.add_input(marker(1, 1'500));
  a.add_raw(xtest_key(1'550), InputKind::key);
  a.add_frame(frame(0, kNoTime, 900));  // the first frame: its start is unknown
  a.add_frame(frame(1, 1'000, 1'200));  // started at the input, not after it
  EXPECT_TRUE(c.rows.empty());
  a.add_frame(frame(2, 1'300, 1'400));  // input 0's
  ASSERT_EQ(c.rows.size(), 1u);
  a.add_input(marker(2, 1'600));
  a.add_raw(xtest_key(1'650), InputKind::key);
  a.add_frame(frame(3, 2'000, 2'100));  // inputs 1 and 2 both
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_EQ(c.rows[0].frame->frame, 2u);
  EXPECT_EQ(c.rows[1].frame->frame, 3u);
  EXPECT_EQ(c.rows[2].frame->frame, 3u);
  for (const InputRow& r : c.rows) EXPECT_GT(r.frame->frame_start, r.marker.sent);
  const auto f = input_figures(c.rows[0], false);
  EXPECT_EQ(f[static_cast<size_t>(InputFigure::input_to_frame_start)], 300);
  EXPECT_EQ(f[static_cast<size_t>(InputFigure::input_to_present)], 400);
  EXPECT_EQ(f[static_cast<size_t>(InputFigure::input_to_gpu_end)], 450);
  EXPECT_FALSE(f[static_cast<size_t>(InputFigure::input_to_present_complete)])
      << "not measured: missing, never 0";
  EXPECT_EQ(f[static_cast<size_t>(InputFigure::sent_to_seen)], 50);
  const InputTotals t = a.totals();
  EXPECT_EQ(t.assigned, 3u);
  EXPECT_EQ(t.injector_lateness.count, 3u);
  EXPECT_DOUBLE_EQ(t.injector_lateness.p50, 0.020);  // us
  EXPECT_DOUBLE_EQ(t.timer_lateness.p50, 0.010);
}

TEST(CaptureInputAssignment, InputsWithoutAFrameAreCountedWithTheReason) {
  Collected c;
  InputAssigner a(false, c.release(),
                  {.wait_ns = 1'000'000, .seen_wait_ns = 1, .damage_keep_ns = 1, .max_waiting = 8});
  a.add_input(marker(0, 1'000));
  a.add_frame(frame(1, 2'000, 2'100));
  a.add_input(marker(1, 5'000));
  a.release(5'000 + 999'999);
  EXPECT_EQ(c.rows.size(), 1u) << "still within the wait";
  a.release(5'000 + 1'000'000);
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[1].no_frame, kNoFrameInTime);
  a.add_input(marker(2, 3'000'000));
  a.finish(true);
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_EQ(c.rows[2].no_frame, kNoFrameYet);
  const InputTotals t = a.totals();
  EXPECT_EQ(t.assigned, 1u);
  ASSERT_EQ(t.not_assigned.size(), 2u);
  const Distribution& present = figure(t, "input_to_present");
  EXPECT_EQ(present.count, 1u);
  EXPECT_EQ(present.missing, 2u);
  EXPECT_EQ(t.figures.size(), kInputFigureCount - 1) << "input_to_reaction: reaction mode only";

  // A program that sends no frame at all: the same reason, waited out or at
  // the end.
  Collected none;
  InputAssigner b(false, none.release(),
                  {.wait_ns = 1'000, .seen_wait_ns = 1, .damage_keep_ns = 1, .max_waiting = 8});
  b.add_input(marker(0, 1'000));
  b.release(2'000);
  b.add_input(marker(1, 3'000));
  b.finish(false);
  ASSERT_EQ(none.rows.size(), 2u);
  EXPECT_EQ(none.rows[0].no_frame, kNoFrameSource);
  EXPECT_EQ(none.rows[1].no_frame, kNoFrameSource);
}

TEST(CaptureInputAssignment, WaitingInputsAreBounded) {
  Collected c;
  InputAssigner a(
      false, c.release(),
      {.wait_ns = 1'000'000'000, .seen_wait_ns = 0, .damage_keep_ns = 1, .max_waiting = 4});
  for (uint64_t i = 0; i < 10; ++i) a.add_input(marker(i, 1'000 + static_cast<int64_t>(i)));
  EXPECT_LE(a.waiting(), 4u);
  EXPECT_EQ(a.peak_waiting(), 5u);
  ASSERT_EQ(c.rows.size(), 6u);
  EXPECT_EQ(c.rows[0].no_frame, kTooManyWaiting);
  a.add_frame(frame(1, 2'000, 2'100));
  a.release(2'000);  // no raw event came: waited out (seen_wait_ns 0)
  EXPECT_EQ(c.rows.size(), 10u);
  EXPECT_EQ(c.rows[9].frame->frame, 1u);
}

TEST(CaptureInputAssignment, ARowWaitsAWhileForItsRawEvent) {
  // A busy machine: the recorder reads the raw event after the frame came.
  Collected c;
  InputAssigner a(
      false, c.release(),
      {.wait_ns = 1'000'000'000, .seen_wait_ns = 1'000'000, .damage_keep_ns = 1, .max_waiting = 8});
  a.add_input(marker(0, 1'000));
  a.add_frame(frame(1, 2'000, 2'100));
  a.release(1'000 + 999'999);
  EXPECT_TRUE(c.rows.empty());
  a.add_raw(xtest_key(700'000), InputKind::key);
  ASSERT_EQ(c.rows.size(), 1u);
  ASSERT_TRUE(c.rows[0].seen);
  // One whose raw event never comes is released without it, counted missing.
  a.add_input(marker(1, 3'000'000));
  a.add_frame(frame(2, 3'500'000, 3'600'000));
  a.release(4'000'000);
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_FALSE(c.rows[1].seen);
  const InputTotals t = a.totals();
  const Distribution& seen = figure(t, "sent_to_seen");
  EXPECT_EQ(seen.count, 1u);
  EXPECT_EQ(seen.missing, 1u);
}

TEST(CaptureInputAssignment, ReactionIsTheWindowsFirstChangeAfterTheInput) {
  Collected c;
  InputAssigner a(true, c.release());
  a.add_damage({900, 0, 1});  // before any input
  a.add_input(marker(0, 1'000));
  a.add_damage({1'000, 0, 1});  // at the input: not after it
  a.add_damage({1'700, 0, 1});
  a.add_damage({1'800, 0, 1});  // a second rectangle of the same change
  a.add_input(marker(1, 2'000));
  a.add_damage({2'400, 0, 1});
  a.finish(false);
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].reaction, 1'700);
  EXPECT_EQ(c.rows[1].reaction, 2'400);
  const auto f = input_figures(c.rows[1], true);
  EXPECT_EQ(f[static_cast<size_t>(InputFigure::input_to_reaction)], 400);
  EXPECT_EQ(a.totals().reactions, 2u);
}

TEST(CaptureInputAssignment, AChangeBeforeTheMarkerArrivedStillCounts) {
  // The injector publishes its marker just after sending: the change may be
  // read first.
  Collected c;
  InputAssigner a(true, c.release());
  a.add_damage({1'300, 0, 1});
  a.release(1'400);
  a.add_input(marker(0, 1'000));
  a.add_input(marker(1, 1'500));
  a.finish(false);
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].reaction, 1'300);
  EXPECT_FALSE(c.rows[1].reaction);
  EXPECT_EQ(c.rows[1].no_reaction, kNoFrameYet);
  const InputTotals t = a.totals();
  EXPECT_EQ(t.reactions, 1u);
  ASSERT_EQ(t.no_reaction.size(), 1u);
}

TEST(CaptureInputAssignment, TheKthXtestEventOfTheKindIsInputK) {
  Collected c;
  InputAssigner a(false, c.release());
  a.add_input(marker(0, 5'000'000'000));
  a.add_raw({5'000'100'000, 5000, InputKind::key, false}, InputKind::key);    // a person's key
  a.add_raw({5'000'200'000, 5000, InputKind::motion, true}, InputKind::key);  // another kind
  a.add_raw({5'000'300'000, 5000, InputKind::key, true}, InputKind::key);     // input 0's
  a.add_input(marker(1, 6'000'000'000));
  a.add_raw({6'000'400'000, 6000, InputKind::key, true}, InputKind::key);  // input 1's
  a.finish(true);
  ASSERT_EQ(c.rows.size(), 2u);
  ASSERT_TRUE(c.rows[0].seen);
  EXPECT_EQ(c.rows[0].seen->host_ns, 5'000'300'000);
  EXPECT_EQ(c.rows[1].seen->host_ns, 6'000'400'000);
  EXPECT_EQ(input_figures(c.rows[1], false)[static_cast<size_t>(InputFigure::sent_to_seen)],
            400'000);
  const InputTotals t = a.totals();
  EXPECT_EQ(t.seen, 2u);
  EXPECT_EQ(t.other_events, 2u);
  // The server's ms against the host's: 100 to 400 us behind.
  EXPECT_EQ(t.server_offset_min_us, 100);
  EXPECT_EQ(t.server_offset_max_us, 400);
}

TEST(CaptureInputAssignment, ARawEventReadBeforeItsMarkerStillCounts) {
  // The marker is published after the flush: the recorder may be first.
  Collected c;
  InputAssigner a(false, c.release());
  a.add_input(marker(0, 1'000));
  a.add_raw(xtest_key(1'050), InputKind::key);
  a.add_raw(xtest_key(2'050), InputKind::key);  // input 1's, before its marker
  a.add_raw(xtest_key(3'050), InputKind::key);  // input 2's
  a.add_input(marker(1, 2'000));
  a.add_input(marker(2, 3'000));
  a.finish(true);
  ASSERT_EQ(c.rows.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(c.rows[i].seen) << i;
    EXPECT_EQ(c.rows[i].seen->host_ns - c.rows[i].marker.sent, 50) << i;
  }
}

TEST(CaptureInputAssignment, ServerTimeUnwrapsAcrossItsThirtyTwoBits) {
  InputAssigner a(false, {});
  // Host 2^32 ms + 5 ms; the server's 32-bit ms wrapped to 4.
  const int64_t host_ns = ((int64_t{1} << 32) + 5) * 1'000'000 + 250'000;
  a.add_raw({host_ns, 4, InputKind::key, false}, InputKind::key);
  EXPECT_EQ(a.totals().server_offset_min_us, 1'250);
}

}  // namespace
}  // namespace latlab::capture
