// latlab's PresentMon CSV (--presentmon-csv) read back through a reader
// written from PresentMon's documentation (presentmon_reader.hpp): the
// column set, the units (ms, s from the first present, NA for what was not
// measured) and each value against the records it came from.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "capture/capture_records.hpp"
#include "presentmon_reader.hpp"
#include "report/capture_report.hpp"

namespace latlab {
namespace {

using capture::FrameRecord;
using capture::kNoTime;
using capture::RecordType;

uint64_t g_seq = 0;  // the fake sender's numbers: no gap, nothing dropped

template <class R>
void add(capture::CaptureRecords& rec, R r, RecordType type, uint32_t pid, uint64_t source) {
  r.head = capture::RecordHead{};
  r.head.type = type;
  r.head.size = sizeof(R);
  r.head.pid = pid;
  r.head.seq = g_seq++;
  r.head.source = source;
  std::byte bytes[sizeof(R)];
  std::memcpy(bytes, &r, sizeof(R));
  ASSERT_TRUE(rec.stream.add(bytes));
}

void hello(capture::CaptureRecords& rec, uint32_t pid, uint64_t source, const char* method) {
  capture::HelloRecord h;
  h.api = capture::SourceApi::vulkan;
  capture::set_text(h.present_method, method);
  add(rec, h, RecordType::hello, pid, source);
}

// Frame i of a source presenting every 10 ms from t0 = 1 s, its present
// taking 1 ms, its GPU work 2-5 ms after its start, displayed 8 ms after
// the present (when `displayed`), present_complete learnt by `method`.
FrameRecord frame(uint64_t i, bool displayed, capture::PresentMethod method) {
  const int64_t t0 = 1'000'000'000;
  FrameRecord f;
  f.frame = i;
  f.swapchain = 0xABC;
  f.present_start = t0 + static_cast<int64_t>(i) * 10'000'000;
  f.present_end = f.present_start + 1'000'000;
  f.frame_start = i == 0 ? kNoTime : f.present_start - 9'000'000;
  f.gpu_begin = i == 0 ? kNoTime : f.frame_start + 2'000'000;
  f.gpu_end = i == 0 ? kNoTime : f.frame_start + 5'000'000;
  f.gpu_busy_ns = i == 0 ? kNoTime : 2'500'000;
  f.complete_method = method;
  if (displayed) {
    f.present_complete = f.present_start + 8'000'000;
    f.no_complete = capture::NoComplete::none;
  }
  return f;
}

// Four frames of one source; frame 2 has no present_complete (`frame2`
// says why).
capture::CaptureRecords capture_of(capture::PresentMethod method,
                                   capture::NoComplete frame2 = capture::NoComplete::unavailable) {
  capture::CaptureRecords rec;
  rec.program_name = "cube";
  hello(rec, 42, 1, capture::present_method_name(method));
  for (uint64_t i = 0; i < 4; ++i) {
    FrameRecord f = frame(i, i != 2, method);
    if (i == 2) f.no_complete = frame2;
    add(rec, f, RecordType::frame, 42, 1);
  }
  rec.summary = capture::summarize_capture(rec.stream);
  return rec;
}

using capture::PresentMethod;

TEST(CapturePresentmonCsv, ReadsBackWithPresentMonsColumnsAndUnits) {
  const test::PmLog log =
      test::read_presentmon_csv(capture_presentmon_csv(capture_of(PresentMethod::present_wait)));
  EXPECT_TRUE(log.errors.empty()) << log.errors.front();
  for (const char* required :
       {"Application", "ProcessID", "SwapChainAddress", "PresentRuntime", "TimeInSeconds",
        "MsBetweenPresents", "MsInPresentAPI", "MsCPUBusy", "MsCPUWait", "MsGPULatency",
        "MsGPUTime", "MsGPUBusy", "MsGPUWait", "MsUntilRenderComplete", "MsUntilDisplayed",
        "MsBetweenDisplayChange", "DisplayLatency"}) {
    EXPECT_NE(std::find(log.header.begin(), log.header.end(), required), log.header.end())
        << required;
  }
  ASSERT_EQ(log.rows.size(), 4u);
  EXPECT_EQ(log.rows[0].at("Application"), "cube");
  EXPECT_EQ(log.rows[0].at("ProcessID"), "42");
  EXPECT_EQ(log.rows[0].at("SwapChainAddress"), "0x0000000000000ABC");
  EXPECT_EQ(log.rows[0].at("PresentRuntime"), "Vulkan");
  EXPECT_EQ(log.rows[0].at("PresentMode"), "NA") << "not recorded: NA, not a made-up mode";
  for (size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(*log.number(i, "TimeInSeconds"), 0.010 * static_cast<double>(i), 1e-9);
}

TEST(CapturePresentmonCsv, TimesAreMillisecondsAndMissingValuesAreNa) {
  const test::PmLog log =
      test::read_presentmon_csv(capture_presentmon_csv(capture_of(PresentMethod::present_wait)));
  ASSERT_EQ(log.rows.size(), 4u);
  // The first frame has no previous present, no frame start, no GPU span.
  for (const char* na : {"MsBetweenPresents", "MsCPUBusy", "MsGPULatency", "MsGPUTime", "MsGPUBusy",
                         "CPUStartTime", "DisplayLatency"})
    EXPECT_FALSE(log.number(0, na).has_value()) << na << " of the first frame";
  EXPECT_DOUBLE_EQ(*log.number(0, "MsUntilDisplayed"), 8.0);
  EXPECT_DOUBLE_EQ(*log.number(1, "MsBetweenPresents"), 10.0);
  EXPECT_DOUBLE_EQ(*log.number(1, "MsInPresentAPI"), 1.0);
  EXPECT_DOUBLE_EQ(*log.number(1, "MsCPUBusy"), 9.0);
  EXPECT_DOUBLE_EQ(*log.number(1, "MsCPUWait"), 1.0);
  EXPECT_DOUBLE_EQ(*log.number(1, "MsGPULatency"), 2.0);
  EXPECT_DOUBLE_EQ(*log.number(1, "MsGPUTime"), 3.0);
  EXPECT_DOUBLE_EQ(*log.number(1, "MsGPUBusy"), 2.5);
  EXPECT_DOUBLE_EQ(*log.number(1, "MsGPUWait"), 0.5);
  EXPECT_DOUBLE_EQ(*log.number(1, "MsUntilRenderComplete"), -4.0);
  EXPECT_DOUBLE_EQ(*log.number(1, "DisplayLatency"), 17.0);
  // Frame 2 has no present completion.
  EXPECT_FALSE(log.number(2, "MsUntilDisplayed").has_value());
  EXPECT_FALSE(log.number(2, "DisplayLatency").has_value());
  // Present wait: no time between displays.
  EXPECT_FALSE(log.number(1, "MsBetweenDisplayChange").has_value());
  EXPECT_FALSE(log.number(0, "DisplayedTime").has_value());
}

TEST(CapturePresentmonCsv, DisplayTimingGivesTheTimesBetweenDisplays) {
  const test::PmLog log =
      test::read_presentmon_csv(capture_presentmon_csv(capture_of(PresentMethod::display_timing)));
  ASSERT_EQ(log.rows.size(), 4u);
  EXPECT_DOUBLE_EQ(*log.number(0, "DisplayedTime"), 10.0);
  EXPECT_DOUBLE_EQ(*log.number(1, "MsBetweenDisplayChange"), 10.0);
  EXPECT_FALSE(log.number(1, "DisplayedTime").has_value()) << "frame 2 has no display time";
  EXPECT_FALSE(log.number(0, "MsBetweenDisplayChange").has_value());
}

TEST(CapturePresentmonCsv, ACompositorsDiscardedFrameIsDroppedAndPassedOver) {
  const test::PmLog log = test::read_presentmon_csv(capture_presentmon_csv(
      capture_of(PresentMethod::wp_presentation, capture::NoComplete::discarded)));
  ASSERT_EQ(log.rows.size(), 4u);
  EXPECT_EQ(log.rows[2].at("Dropped"), "1");
  for (size_t shown : {0u, 1u, 3u}) EXPECT_EQ(log.rows[shown].at("Dropped"), "0") << shown;
  EXPECT_FALSE(log.number(2, "MsUntilDisplayed").has_value());
  EXPECT_FALSE(log.number(2, "DisplayedTime").has_value());
  // Frame 1 stayed on screen until frame 3 replaced it.
  EXPECT_DOUBLE_EQ(*log.number(1, "DisplayedTime"), 20.0);
  EXPECT_DOUBLE_EQ(*log.number(3, "MsBetweenDisplayChange"), 20.0);
}

TEST(CapturePresentmonCsv, PresentWaitCannotTellDroppedFrames) {
  const test::PmLog log =
      test::read_presentmon_csv(capture_presentmon_csv(capture_of(PresentMethod::present_wait)));
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(log.rows[i].at("Dropped"), "NA") << i;
}

}  // namespace
}  // namespace latlab
