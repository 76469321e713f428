// Matching a window's screen updates (XDamage events) to the program's
// presents (src/capture/screen_observer.hpp): one event per frame, in
// order, never before the frame's present call; with frames in flight the
// update of frame i may come after frame i + 1 was presented and still goes
// to frame i; frames presented before watching began are left out.
#include <gtest/gtest.h>

#include <vector>

#include "capture/screen_observer.hpp"

namespace latlab::capture {
namespace {

std::vector<ScreenEvent> events_at(std::initializer_list<int64_t> t) {
  std::vector<ScreenEvent> out;
  for (int64_t x : t) out.push_back({x, static_cast<uint32_t>(x / 1'000'000), 7});
  return out;
}

std::vector<int64_t> times(const std::vector<std::optional<ScreenEvent>>& m) {
  std::vector<int64_t> out;
  for (const auto& e : m) out.push_back(e ? e->host_ns : -1);
  return out;
}

TEST(ScreenMatch, EachFrameGetsTheFirstUpdateAfterItsPresentCall) {
  const std::vector<PresentSpan> frames = {{100, 110}, {200, 210}, {300, 310}};
  // An expose at 50 (before any present) belongs to no frame.
  const auto ev = events_at({50, 115, 212, 305});
  EXPECT_EQ(times(match_screen_updates(frames, ev, 0)), (std::vector<int64_t>{115, 212, 305}));
}

TEST(ScreenMatch, FramesInFlightKeepTheirOrder) {
  // Presents return at once; each update lands after the next present was
  // called (two frames in flight): frame i still gets the i-th update.
  const std::vector<PresentSpan> frames = {{100, 101}, {110, 111}, {120, 121}, {130, 131}};
  const auto ev = events_at({115, 125, 135, 145});
  EXPECT_EQ(times(match_screen_updates(frames, ev, 0)), (std::vector<int64_t>{115, 125, 135, 145}));
}

TEST(ScreenMatch, AnUpdateInsideThePresentCallCounts) {
  // A WSI that draws inside vkQueuePresentKHR: the server's event can
  // arrive before the call returned, never before it began.
  const std::vector<PresentSpan> frames = {{100, 150}, {200, 250}};
  EXPECT_EQ(times(match_screen_updates(frames, events_at({120, 230}), 0)),
            (std::vector<int64_t>{120, 230}));
}

TEST(ScreenMatch, MissingUpdatesAtTheEndAreMissingNotReused) {
  const std::vector<PresentSpan> frames = {{100, 110}, {200, 210}, {300, 310}};
  EXPECT_EQ(times(match_screen_updates(frames, events_at({150}), 0)),
            (std::vector<int64_t>{150, -1, -1}));
}

TEST(ScreenMatch, FramesBeforeWatchingBeganAreLeftOut) {
  const std::vector<PresentSpan> frames = {{100, 110}, {200, 210}, {300, 310}};
  // Watching began at 250: frames 0 and 1 are not observed at all, and 260
  // (frame 1's update, late) comes before frame 2 was presented.
  EXPECT_EQ(times(match_screen_updates(frames, events_at({260, 320}), 250)),
            (std::vector<int64_t>{-1, -1, 320}));
}

TEST(ScreenMatch, SummaryGroupsFramesByTheirWindow) {
  CaptureSummary s;
  auto frame = [](uint64_t idx, uint64_t swapchain, int64_t start) {
    CaptureFrameRow r;
    r.pid = 1;
    r.record.head.source = 9;
    r.record.frame = idx;
    r.record.swapchain = swapchain;
    r.record.present_start = start;
    r.record.present_end = start + 5;
    return r;
  };
  // Swapchain 10 shows window 7, swapchain 20 (recreated) too; 30 shows window 8.
  s.frames = {frame(0, 10, 100), frame(1, 30, 150), frame(2, 20, 200)};
  const std::vector<CapturedWindow> windows = {{1, 9, 10, 7, WindowSystem::x11, ":1"},
                                               {1, 9, 20, 7, WindowSystem::x11, ":1"},
                                               {1, 9, 30, 8, WindowSystem::x11, ":1"}};
  const std::vector<WatchedWindow> watched = {{7, 0}};
  std::vector<ScreenEvent> ev = {{120, 0, 7}, {160, 0, 8}, {230, 0, 7}, {400, 0, 7}};
  const ScreenSummary sc = summarize_screen(s, windows, watched, ev);
  ASSERT_EQ(sc.per_frame.size(), 3u);
  ASSERT_TRUE(sc.per_frame[0]);
  EXPECT_EQ(sc.per_frame[0]->host_ns, 120);
  EXPECT_FALSE(sc.per_frame[1]) << "window 8 is not watched";
  ASSERT_TRUE(sc.per_frame[2]);
  EXPECT_EQ(sc.per_frame[2]->host_ns, 230);
  EXPECT_EQ(sc.frames_watched, 2u);
  EXPECT_EQ(sc.frames_matched, 2u);
  EXPECT_EQ(sc.events, 3u);
  EXPECT_EQ(sc.events_unmatched, 1u);
  EXPECT_EQ(sc.until_screen_updated.count, 2u);
  EXPECT_DOUBLE_EQ(sc.until_screen_updated.min, 0.02);  // 20 ns in us
}

}  // namespace
}  // namespace latlab::capture
