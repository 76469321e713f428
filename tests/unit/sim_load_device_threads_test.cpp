// The sim "load" device: sample_calibration() from another thread while frames run
// (the LatencyDevice contract). Run under TSan (label threads).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "latlab/bench/sim.hpp"

namespace latlab {
namespace {

TEST(SimLoadDeviceThreads, CalibrationPairsAreSafeAndMonotonicDuringFrames) {
  SimDevice dev(sim_load_desc());
  std::atomic<bool> done{false};
  std::atomic<bool> monotonic{true};
  std::atomic<int> pairs{0};
  std::thread sampler([&] {
    int64_t last = 0;
    while (!done.load()) {
      auto p = dev.sample_calibration();
      if (!p || p->host_ns < last) monotonic = false;
      if (p) last = p->host_ns;
      pairs.fetch_add(1);
      std::this_thread::yield();
    }
  });
  const FrameWorkload w{4, 10, 256, 256, WorkloadForm::compute};
  for (uint64_t id = 0; id < 2000; ++id) {
    ASSERT_TRUE(dev.submit_frame(id, w));
    ASSERT_TRUE(dev.wait_frame(id));
  }
  while (pairs.load() == 0) std::this_thread::yield();  // the sampler ran at least once
  done = true;
  sampler.join();
  EXPECT_TRUE(monotonic.load());
  EXPECT_GT(pairs.load(), 0);
}

}  // namespace
}  // namespace latlab
