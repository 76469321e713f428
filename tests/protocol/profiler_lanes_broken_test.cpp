// The lane protocol's tests can fail: two variants of the protocol, each
// broken in one place and compiled only into this test's profiler
// (detail::ZoneFault, switched on here), lose or duplicate zones in the
// parking lab of profiler_lanes_threads_test.cpp, and the lab says so.
//  * read_before_announce: take_pair reads its block before it announces
//    itself, so a collector that holds the lane between the two sees it idle.
//  * collector_ignores_busy: the collector skips a held lane's unused
//    records though its thread is inside take_pair.
// In both, a thread parked between reading `next` and storing it while the
// closer closes the frame has its record skipped under it: one script shows
// it, and the whole parking suite (2 and 3 threads) finds it too.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "profiler/heavy_fence.hpp"
#include "protocol/zone_lab.hpp"
#include "protocol/zone_scripts.hpp"

namespace latlab::zone_lab {
namespace {

// Switches a fault on for one scope.
class Fault {
 public:
  explicit Fault(detail::ZoneFault f) { detail::zone_fault = f; }
  ~Fault() { detail::zone_fault = detail::ZoneFault::none; }
  Fault(const Fault&) = delete;
  Fault& operator=(const Fault&) = delete;
};

// Thread 1 takes a record from its block in frame 0 and is parked between
// the load and the store of `next`; the closer closes frame 0 and collects it.
Script parked_inside_while_the_frame_closes() {
  return {"thread 1 at block_loaded, the closer collecting",
          {arm(1, ZoneStep::block_loaded), release(1), release(0), unpark(1), release(-1)}};
}

// The problems the lab finds in that script with `fault` on (empty: none).
std::string problems_with(detail::ZoneFault fault) {
  const Fault on(fault);
  Lab lab({.threads = 2, .closer = 0});
  std::string why;
  EXPECT_TRUE(lab.run(parked_inside_while_the_frame_closes(), why)) << why;
  return lab.check(true);
}

bool skip_here() {
#if defined(__SANITIZE_THREAD__)
  // TSan reports the broken variants' races itself, and fails the binary.
  return true;
#else
  return !profiler_detail::heavy_fence_available();
#endif
}

TEST(ProfilerLaneProtocolHarness, TheScriptPassesOnTheProtocol) {
  if (!profiler_detail::heavy_fence_available()) GTEST_SKIP() << "membarrier(2) is not available";
  EXPECT_EQ(problems_with(detail::ZoneFault::none), "");
}

TEST(ProfilerLaneProtocolHarness, ReadingBeforeAnnouncingIsCaught) {
  if (skip_here()) GTEST_SKIP() << "not under TSan, and only with membarrier(2)";
  const std::string problems = problems_with(detail::ZoneFault::read_before_announce);
  EXPECT_NE(problems, "") << "the lab did not catch a thread that reads its block unannounced";
  RecordProperty("problems", problems);
}

TEST(ProfilerLaneProtocolHarness, ACollectorThatIgnoresABusyLaneIsCaught) {
  if (skip_here()) GTEST_SKIP() << "not under TSan, and only with membarrier(2)";
  const std::string problems = problems_with(detail::ZoneFault::collector_ignores_busy);
  EXPECT_NE(problems, "") << "the lab did not catch a collector that skips records under a thread";
  RecordProperty("problems", problems);
}

TEST(ProfilerLaneProtocolHarness, TheParkingSuiteCatchesEachFault) {
  if (skip_here()) GTEST_SKIP() << "not under TSan, and only with membarrier(2)";
  for (const auto fault :
       {detail::ZoneFault::read_before_announce, detail::ZoneFault::collector_ignores_busy}) {
    for (const int n : {2, 3}) {
      const Fault on(fault);
      std::set<std::pair<int, ZoneStep>> parked;
      const std::vector<Script> all = park_scripts(n);
      const int failed = run_scripts({.threads = n, .closer = kCloser}, all, true, parked, false);
      EXPECT_GT(failed, 0) << "fault " << static_cast<int>(fault) << ", " << n << " threads";
      RecordProperty(
          "fault_" + std::to_string(static_cast<int>(fault)) + "_threads_" + std::to_string(n),
          std::to_string(failed) + " of " + std::to_string(all.size()) + " scripts");
    }
  }
}

}  // namespace
}  // namespace latlab::zone_lab
