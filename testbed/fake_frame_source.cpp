// A frame source without a GPU, for `latlab capture`'s memory benchmark
// (bench/dev/capture_rss.sh): it says hello as a Vulkan device would, then
// presents N frames a second for S seconds, each with one submission,
// through the capture record socket (LATLAB_CAPTURE_FD) with the frame
// sources' own sender (capture/record_sender.hpp: never blocks, drops and
// counts what does not fit), at absolute deadlines on the host clock. Its
// present times are the host's at each deadline; its GPU span is made up
// (0.5 ms starting 0.2 ms into the frame).
//   fake_frame_source [--fps N] [--seconds S]      (default 1000 frames/s, 60 s)
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "capture/record_sender.hpp"
#include "latlab/host_clock.hpp"

namespace {

using latlab::capture::RecordType;

struct Options {
  double fps = 1000;
  double seconds = 60;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const double v = std::strtod(argv[i + 1], nullptr);
    if (std::strcmp(argv[i], "--fps") == 0 && v > 0) {
      o.fps = v;
    } else if (std::strcmp(argv[i], "--seconds") == 0 && v > 0) {
      o.seconds = v;
    } else {
      return false;
    }
  }
  return argc % 2 == 1;
}

void sleep_until(int64_t ns) {
  const timespec t{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nullptr) != 0) {
  }
}

// Frame `i`, presented now, and its one submission.
void present(latlab::capture::RecordSender& out, uint64_t i, int64_t period, int64_t& last_end) {
  const int64_t start = latlab::host_now_ns();
  latlab::capture::SubmitRecord s;
  s.frame = i;
  s.cpu_start = start - period / 2;
  s.cpu_end = s.cpu_start + 20'000;
  s.gpu_begin = last_end + 200'000;
  s.gpu_end = s.gpu_begin + 500'000;
  s.command_buffers = 1;
  s.batches = 1;
  out.send(s, RecordType::submit, 1);
  latlab::capture::FrameRecord f;
  f.frame = i;
  f.swapchain = 0x5A;
  f.frame_start = i == 0 ? latlab::capture::kNoTime : last_end;
  f.present_start = start;
  f.present_end = latlab::host_now_ns();
  f.gpu_begin = s.gpu_begin;
  f.gpu_end = s.gpu_end;
  f.gpu_busy_ns = s.gpu_end - s.gpu_begin;
  f.submits = 1;
  out.send(f, RecordType::frame, 1);
  last_end = f.present_end;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr, "usage: fake_frame_source [--fps N] [--seconds S]\n");
    return 2;
  }
  auto& out = latlab::capture::RecordSender::process(latlab::capture::kSeqLaneVulkanLayer);
  if (!out.active()) {
    std::fprintf(stderr, "fake_frame_source: no capture socket (run it under latlab capture)\n");
    return 2;
  }
  latlab::capture::HelloRecord hello;
  hello.api = latlab::capture::SourceApi::vulkan;
  latlab::capture::set_text(hello.device_name, "fake_frame_source (no GPU)");
  latlab::capture::set_text(hello.source_name, "fake_frame_source");
  out.send(hello, RecordType::hello, 1);
  const auto period = static_cast<int64_t>(1e9 / o.fps);
  const int64_t t0 = latlab::host_now_ns();
  const int64_t end = t0 + static_cast<int64_t>(o.seconds * 1e9);
  int64_t last_end = t0;
  uint64_t frames = 0;
  for (int64_t deadline = t0; deadline < end; deadline += period) {
    sleep_until(deadline);
    present(out, frames++, period, last_end);
  }
  latlab::capture::EndRecord e;
  e.frames = frames;
  e.submits = frames;
  e.dropped = out.dropped();
  out.send(e, RecordType::end, 1);
  std::printf("fake_frame_source: %llu frames, %llu records dropped\n",
              static_cast<unsigned long long>(frames),
              static_cast<unsigned long long>(out.dropped()));
  return 0;
}
