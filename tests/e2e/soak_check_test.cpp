// bench/soak_check.awk, the soak's flatness check, on synthetic sample
// series: what a flat run looks like (block phases, the result being built
// at the end) passes; a leak of threads, fds or memory, or a failed run,
// does not.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "e2e/cli_run_helpers.hpp"

namespace latlab::e2e {
namespace {

struct Sample {
  int64_t rss_kb;
  int fds;
  int threads;
};

class SoakCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    script_ = std::filesystem::path(LATLAB_SOURCE_DIR) / "bench" / "soak_check.awk";
    if (!std::filesystem::exists(script_))
      GTEST_SKIP() << script_ << " is not here (tests run outside the source tree)";
  }
  // Writes `n` samples, one per second, and runs the check; its exit code.
  int check(int n, const std::function<Sample(int)>& at, int rc = 0) {
    const std::filesystem::path tsv = dir_.path / "samples.tsv";
    std::ofstream out(tsv);
    out << "t_s\trss_kb\tfds\tthreads\n";
    for (int i = 0; i < n; ++i) {
      const Sample s = at(i);
      out << i << '\t' << s.rss_kb << '\t' << s.fds << '\t' << s.threads << '\n';
    }
    out.close();
    summary_.clear();
    return run_shell("awk -v rc=" + std::to_string(rc) + " -v backend=test -f " +
                         script_.string() + " " + tsv.string() + " 2>&1",
                     summary_);
  }
  TempDir dir_;
  std::filesystem::path script_;
  std::string summary_;
};

constexpr int64_t kRss = 1'000'000;  // kB

// A block every 20 s whose generator thread lives for its first 3 s; the
// last 3 samples are the result being built (+80 MB) and the exit (1 thread).
Sample flat_run(int i, int n) {
  if (i >= n - 3) return {kRss + 80'000, 5, 1};
  return {kRss + (i % 7), 5, i % 20 < 3 ? 4 : 3};
}

TEST_F(SoakCheck, BlockPhasesAndTheResultBeingBuiltAreFlat) {
  EXPECT_EQ(check(200, [](int i) { return flat_run(i, 200); }), 0) << summary_;
  EXPECT_NE(summary_.find(": flat"), std::string::npos) << summary_;
}

TEST_F(SoakCheck, AThreadThatStaysIsALeak) {
  const auto leak = [](int i) {
    Sample s = flat_run(i, 200);
    if (i >= 120) ++s.threads;
    return s;
  };
  EXPECT_EQ(check(200, leak), 1) << summary_;
  EXPECT_NE(summary_.find("NOT FLAT"), std::string::npos) << summary_;
}

TEST_F(SoakCheck, ThreadsPilingUpUntilTheExitAreALeak) {
  // One more thread every 40 s, all joined only at the end.
  const auto piles = [](int i) {
    Sample s = flat_run(i, 200);
    if (i < 197) s.threads += i / 40;
    return s;
  };
  EXPECT_EQ(check(200, piles), 1) << summary_;
}

TEST_F(SoakCheck, AnFdThatStaysIsALeak) {
  const auto leak = [](int i) {
    Sample s = flat_run(i, 200);
    if (i >= 150) ++s.fds;
    return s;
  };
  EXPECT_EQ(check(200, leak), 1) << summary_;
}

TEST_F(SoakCheck, MemoryThatGrowsAllRunIsALeak) {
  // 100 kB a second, 18 MB after the warm-up: about 14 MB between the medians.
  const auto grows = [](int i) {
    Sample s = flat_run(i, 200);
    s.rss_kb += 100 * i;
    return s;
  };
  EXPECT_EQ(check(200, grows), 1) << summary_;
}

TEST_F(SoakCheck, AFailedRunIsNotFlat) {
  EXPECT_EQ(check(200, [](int i) { return flat_run(i, 200); }, 1), 1) << summary_;
}

TEST_F(SoakCheck, TooFewSamplesSaySo) {
  EXPECT_EQ(check(9, [](int i) { return flat_run(i, 9); }), 1);
  EXPECT_NE(summary_.find("too few samples"), std::string::npos) << summary_;
}

}  // namespace
}  // namespace latlab::e2e
