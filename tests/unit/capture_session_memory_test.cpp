// A long capture keeps bounded memory: a fake program sends 100 000 frames
// and submissions (1000 frames/s of its records' time: 100 s of frames,
// sent as fast as the socket takes them) through the session's real socket
// and record format; the session hands every row to its sink in present
// order and holds only a bounded number at once, and the distributions
// past their exact limit say they are approximate.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

#include "capture/capture_record.hpp"
#include "core/log_linear_histogram.hpp"
#include "core/streaming_distribution.hpp"
#include "latlab/host_clock.hpp"
#include "unit/capture_session_fixture.hpp"

namespace latlab {
namespace {

using capture::RecordType;
using test::CaptureSession;
using test::SessionRun;

constexpr uint64_t kFrames = 100'000;
constexpr int64_t kFrameNs = 1'000'000;  // 1000 frames/s

// The child's sender: blocking sends, so that no record is dropped however
// fast they go (a source's own sender never blocks, and drops).
class BlockingSender {
 public:
  BlockingSender() : fd_(std::atoi(std::getenv(capture::kCaptureFdEnv))) {}
  template <class R>
  void send(R& r, RecordType type, uint64_t source) {
    r.head = capture::RecordHead{};
    r.head.type = type;
    r.head.size = sizeof(R);
    r.head.pid = static_cast<uint32_t>(getpid());
    r.head.seq = seq_++;
    r.head.source = source;
    ::send(fd_, &r, sizeof(R), MSG_NOSIGNAL);
  }
  void hello(uint64_t source) {
    capture::HelloRecord h;
    h.api = capture::SourceApi::vulkan;
    send(h, RecordType::hello, source);
  }

 private:
  int fd_;
  uint64_t seq_ = 0;
};

// Source 1 presents kFrames frames, each with one submission, and ends;
// with `idle_source`, source 2 says hello and never presents.
int fake_program(bool idle_source) {
  BlockingSender out;
  out.hello(1);
  if (idle_source) out.hello(2);
  const int64_t t0 = host_now_ns();
  for (uint64_t i = 0; i < kFrames; ++i) {
    const int64_t start = t0 + static_cast<int64_t>(i) * kFrameNs;
    capture::SubmitRecord s;
    s.frame = i;
    s.cpu_start = start + 100'000;
    s.cpu_end = start + 120'000;
    s.gpu_begin = start + 200'000;
    s.gpu_end = start + 700'000;
    out.send(s, RecordType::submit, 1);
    capture::FrameRecord f;
    f.frame = i;
    f.swapchain = 0xA;
    f.frame_start = i == 0 ? capture::kNoTime : start - kFrameNs + 50'000;
    f.present_start = start;
    f.present_end = start + 50'000;
    f.gpu_begin = s.gpu_begin;
    f.gpu_end = s.gpu_end;
    f.gpu_busy_ns = 500'000;
    out.send(f, RecordType::frame, 1);
  }
  capture::EndRecord e;
  out.send(e, RecordType::end, 1);
  return 0;
}

TEST_F(CaptureSession, ALongCaptureHoldsFewRowsAndStreamsEveryOne) {
  const SessionRun r = run(plan(), [] { return fake_program(false); });
  const CaptureResult& c = r.outcome.capture;
  ASSERT_EQ(c.frames, kFrames) << c.partial_reason;
  EXPECT_EQ(c.stop.records_dropped, 0u);
  EXPECT_EQ(r.rows.frames, kFrames);
  EXPECT_EQ(r.rows.submits, kFrames);
  EXPECT_EQ(r.rows.out_of_present_order, 0u);
  // A row waits only for its source's next frame: the session holds at
  // most what it read in one go (1024 records) at a time.
  const size_t held = r.outcome.records->peak_rows_held;
  EXPECT_LE(held, 1100u) << "of " << kFrames;
  const Distribution* bp = c.figure("between_presents");
  ASSERT_NE(bp, nullptr);
  EXPECT_EQ(bp->count, kFrames - 1);
  ASSERT_TRUE(bp->percentile_resolution) << "past the exact limit: approximate, and said so";
  EXPECT_DOUBLE_EQ(*bp->percentile_resolution, LogLinearHistogram::kRelativeResolution);
  EXPECT_DOUBLE_EQ(bp->p50, 1000.0) << "inside the exact min and max";
  EXPECT_DOUBLE_EQ(bp->mean, 1000.0);
  EXPECT_DOUBLE_EQ(c.fps().average.value_or(0), 1000.0);
  EXPECT_EQ(c.frame_times.buckets.size() * c.frame_times.frames_per_bucket >= kFrames - 1, true);
  EXPECT_LE(c.frame_times.buckets.size(), CaptureFrameTimes::kMaxBuckets);
}

// A source that never presents would hold every row back (present order
// over sources): the queue's row limit releases the oldest instead.
TEST_F(CaptureSession, AnIdleSourceHoldsNoMoreThanTheRowLimit) {
  const SessionRun r = run(plan(), [] { return fake_program(true); });
  const CaptureResult& c = r.outcome.capture;
  ASSERT_EQ(c.frames, kFrames);
  EXPECT_EQ(r.rows.frames, kFrames);
  EXPECT_EQ(r.rows.out_of_present_order, 0u);
  EXPECT_LE(r.outcome.records->peak_rows_held, 8192u + 1024u);
}

}  // namespace
}  // namespace latlab
