// The capture session (latlab/bench/capture_session.hpp) driven with a fake
// program: a forked child of the test that sends frame records on the
// session's socket, as the Vulkan layer or the GL interposer would, and
// exits, waits for a signal or fails to start.
#include "latlab/bench/capture_session.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "capture/record_sender.hpp"
#include "latlab/host_clock.hpp"
#include "unit/capture_session_fixture.hpp"

namespace latlab {
namespace {

using capture::FrameRecord;
using capture::RecordType;

constexpr int64_t kFrameNs = 10'000'000;

// In the child: GL source `source` that presents `frames` frames to
// `swapchain`, `interval_ns` apart (in its records' times, sent at once)
// and, with `end`, ends cleanly.
void send_frames(int frames, bool end = true, uint64_t source = 1, uint64_t swapchain = 0x10,
                 int64_t interval_ns = kFrameNs) {
  static capture::RecordSender sender(std::atoi(std::getenv(capture::kCaptureFdEnv)),
                                      capture::kSeqLaneGlInterposer);
  capture::HelloRecord hello;
  hello.api = capture::SourceApi::opengl;
  capture::set_text(hello.source_name, "fake source");
  sender.send(hello, RecordType::hello, source);
  const int64_t t0 = host_now_ns();
  for (int i = 0; i < frames; ++i) {
    FrameRecord f;
    f.frame = static_cast<uint64_t>(i);
    f.swapchain = swapchain;
    f.present_start = t0 + i * interval_ns;
    f.present_end = f.present_start + 1'000'000;
    f.frame_start = i == 0 ? capture::kNoTime : f.present_start - interval_ns + 1'000'000;
    sender.send(f, RecordType::frame, source);
  }
  if (end) {
    capture::EndRecord e;
    sender.send(e, RecordType::end, source);
  }
}

using test::CaptureSession;
using test::SessionRun;

TEST_F(CaptureSession, TheFakeProgramsFramesAndExitCodeAreTheResult) {
  const SessionRun r = run(plan(), [] {
    send_frames(10);
    return 3;
  });
  ASSERT_EQ(r.end.start, CaptureStart::started) << r.end.why;
  EXPECT_EQ(r.end.exit_code, 3);
  ASSERT_EQ(r.reports, 1);
  const CaptureResult& c = r.outcome.capture;
  EXPECT_EQ(c.frames, 10u);
  EXPECT_EQ(c.stop.stopped_by, "program_exit");
  EXPECT_EQ(c.program.exit_code, 3);
  EXPECT_TRUE(c.partial_reason.empty()) << c.partial_reason;
  ASSERT_EQ(c.sources.size(), 1u);
  EXPECT_EQ(c.sources[0].api, "opengl");
  const Distribution* bp = c.figure("between_presents");
  ASSERT_NE(bp, nullptr);
  EXPECT_EQ(bp->count, 9u);
  EXPECT_DOUBLE_EQ(bp->p50, 10'000.0);
  const CaptureFps fps = c.fps();
  EXPECT_EQ(fps.frame_times, 9u);
  EXPECT_DOUBLE_EQ(fps.average.value_or(0), 100.0) << "10 ms apart";
  EXPECT_DOUBLE_EQ(fps.low_1_percent.value_or(0), 100.0);
  ASSERT_NE(r.outcome.records, nullptr);
  EXPECT_EQ(r.rows.frames, 10u) << "every row went to the row sink";
}

// Two sources: each swapchain's figures apart, the process-wide ones pooled.
TEST_F(CaptureSession, EachSwapchainHasItsOwnFigures) {
  const SessionRun r = run(plan(), [] {
    send_frames(11, true, 1, 0xA, 10'000'000);
    send_frames(6, true, 2, 0xB, 20'000'000);
    return 0;
  });
  const CaptureResult& c = r.outcome.capture;
  EXPECT_EQ(c.frames, 17u);
  ASSERT_EQ(c.per_swapchain.size(), 2u);
  EXPECT_EQ(c.per_swapchain[0].source, 0u);
  EXPECT_EQ(c.per_swapchain[0].frames, 11u);
  EXPECT_DOUBLE_EQ(c.per_swapchain[0].fps().average.value_or(0), 100.0);
  EXPECT_EQ(c.per_swapchain[1].source, 1u);
  EXPECT_EQ(c.per_swapchain[1].swapchain, 0u) << "numbered within its source";
  EXPECT_EQ(c.per_swapchain[1].frames, 6u);
  EXPECT_DOUBLE_EQ(c.per_swapchain[1].fps().average.value_or(0), 50.0);
  // Pooled: 10 frame times of 10 ms and 5 of 20 ms.
  EXPECT_EQ(c.fps().frame_times, 15u);
  EXPECT_NEAR(c.fps().average.value_or(0), 1e3 / (200.0 / 15.0), 1e-9);
}

// A program that starts a frame source and exits at once (`sh -c 'vkcube
// &'`): the session follows the orphan's frames to its end.
TEST_F(CaptureSession, AnOrphanedSourceIsFollowedToItsEnd) {
  const SessionRun r = run(plan(), [] {
    if (fork() == 0) {
      usleep(100'000);  // the program has ended by now
      send_frames(5);
      _exit(0);
    }
    return 0;
  });
  EXPECT_EQ(r.end.exit_code, 0);
  const CaptureResult& c = r.outcome.capture;
  EXPECT_EQ(c.frames, 5u);
  ASSERT_EQ(c.sources.size(), 1u);
  EXPECT_NE(c.sources[0].pid, c.program.pid) << "the orphan's, not the program's";
  EXPECT_TRUE(c.partial_reason.empty()) << c.partial_reason;
}

TEST_F(CaptureSession, AFrameLimitReportsWhileTheProgramRunsOn) {
  CapturePlan p = plan();
  p.frames = 5;
  const SessionRun r = run(p, [] {
    send_frames(10);
    usleep(300'000);
    return 0;
  });
  EXPECT_EQ(r.end.exit_code, 0);
  ASSERT_EQ(r.reports, 1);
  const CaptureResult& c = r.outcome.capture;
  EXPECT_EQ(c.stop.stopped_by, "frames");
  EXPECT_EQ(c.frames, 5u);
  EXPECT_TRUE(c.program.running_when_written);
  EXPECT_FALSE(c.program.exit_code.has_value());
}

TEST_F(CaptureSession, TerminateSendsSigtermAndSaysSo) {
  CapturePlan p = plan();
  p.frames = 2;
  p.terminate = true;
  const SessionRun r = run(p, [] {
    send_frames(3);
    pause();  // until latlab's SIGTERM ends it
    return 0;
  });
  EXPECT_EQ(r.end.exit_code, 128 + SIGTERM);
  const CaptureResult& c = r.outcome.capture;
  EXPECT_EQ(c.stop.signal_sent, SIGTERM);
  EXPECT_TRUE(c.partial_reason.empty()) << "latlab's own SIGTERM is no loss: " << c.partial_reason;
}

TEST_F(CaptureSession, AnInterruptStopsRecordingAndIsPassedOn) {
  const SessionRun r = run(plan(), [] {
    send_frames(3, false);
    kill(getppid(), SIGINT);  // as `kill -INT` to latlab alone
    pause();                  // until the SIGINT latlab passes on ends it
    return 0;
  });
  EXPECT_EQ(r.end.exit_code, 128 + SIGINT) << "the program got the SIGINT latlab passed on";
  const CaptureResult& c = r.outcome.capture;
  EXPECT_EQ(c.stop.stopped_by, "signal");
  EXPECT_EQ(c.stop.signal_sent, SIGINT);
  EXPECT_EQ(c.frames, 3u);
  EXPECT_NE(c.partial_reason.find("interrupted (SIGINT)"), std::string::npos) << c.partial_reason;
}

TEST_F(CaptureSession, AProgramThatCannotStartIsSaid) {
  CapturePlan p = plan();
  p.program = {(dir_.path / "no-such-program").string()};
  const SessionRun r = run(p, nullptr);
  EXPECT_EQ(r.end.exit_code, 127);
  const CaptureResult& c = r.outcome.capture;
  EXPECT_NE(c.partial_reason.find("could not be started"), std::string::npos) << c.partial_reason;
  EXPECT_EQ(c.frames, 0u);
  EXPECT_FALSE(c.fps().average.has_value()) << "no frame time: no FPS, not 0";
}

TEST_F(CaptureSession, WithNothingToAttachNothingStarts) {
  unsetenv("LATLAB_CAPTURE_LAYER_DIR");
  setenv("LATLAB_CAPTURE_LAYER_DIR", (dir_.path / "empty").c_str(), 1);
  setenv("LATLAB_CAPTURE_GL_DIR", (dir_.path / "empty").c_str(), 1);
  const SessionRun r = run(plan(), [] { return 0; });
  unsetenv("LATLAB_CAPTURE_GL_DIR");
  EXPECT_EQ(r.end.start, CaptureStart::nothing_to_attach);
  EXPECT_EQ(r.reports, 0);
}

}  // namespace
}  // namespace latlab
