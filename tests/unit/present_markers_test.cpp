// Present stages per frame: computed from the frame's own markers, and a
// marker that is absent makes the sample missing, never 0.
#include "latlab/bench/present_markers.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace latlab {
namespace {

FrameRecord frame(int64_t signal, int64_t gpu_end) {
  FrameRecord f;
  f.signal_ns = signal;
  f.set(Marker::signal);
  f.gpu_end_host_ns = gpu_end;
  f.set(Marker::gpu_end_host);
  return f;
}

TEST(PresentMarkers, StagesAreSpansOfTheFramesOwnMarkers) {
  const FrameRecord f = frame(1'000, 5'000);
  PresentRecord p;
  p.present_start_ns = 4'000;
  p.present_end_ns = 4'700;
  p.present = PresentRecord::kStart | PresentRecord::kEnd;
  p.set_screen(0, 9'000);
  EXPECT_EQ(present_value_ns(f, p, PresentSeries::gpu_end_to_present_start), -1'000);
  EXPECT_EQ(present_value_ns(f, p, PresentSeries::present_cpu_span), 700);
  EXPECT_EQ(present_value_ns(f, p, PresentSeries::signal_to_present), 3'000);
  EXPECT_FALSE(present_value_ns(f, p, PresentSeries::present_to_complete).has_value());
  EXPECT_EQ(screen_value_ns(f, p, 0, ScreenSeries::present_to_screen), 5'000);
  EXPECT_EQ(screen_value_ns(f, p, 0, ScreenSeries::signal_to_screen), 8'000);
  EXPECT_FALSE(screen_value_ns(f, p, 1, ScreenSeries::signal_to_screen).has_value());
}

TEST(PresentMarkers, AbsentMarkersAreMissingNotZero) {
  std::vector<FrameRecord> frames = {frame(0, 100), frame(1'000, 1'100)};
  std::vector<PresentRecord> present(2);
  present[0].present_start_ns = 200;
  present[0].present_end_ns = 300;
  present[0].present = PresentRecord::kStart | PresentRecord::kEnd;
  present[0].set_screen(1, 2'200);
  // present[1]: the present call failed; nothing recorded.
  const PresentDistributions d = summarize_present(frames, present, 2);
  const Distribution& span = d.stages[static_cast<size_t>(PresentSeries::present_cpu_span)];
  EXPECT_EQ(span.count, 1u);
  EXPECT_EQ(span.missing, 1u);
  EXPECT_DOUBLE_EQ(span.p50, 0.1);  // us
  ASSERT_EQ(d.screen.size(), 2u);
  EXPECT_EQ(d.screen[0][0].count, 0u);  // observer 0 saw nothing
  EXPECT_EQ(d.screen[0][0].missing, 2u);
  EXPECT_EQ(d.screen[1][1].count, 1u);
  EXPECT_DOUBLE_EQ(d.screen[1][1].p50, 2.2);
}

}  // namespace
}  // namespace latlab
