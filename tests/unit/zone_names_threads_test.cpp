// intern_zone_name from 2, 3 and 8 threads at once over overlapping names:
// every thread gets the one pointer per text (run under TSan, label threads).
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "latlab/profiler.hpp"

namespace latlab {
namespace {

void intern_from_threads(int threads, const std::string& prefix) {
  constexpr int kNames = 64;
  std::vector<std::vector<const char*>> got(threads, std::vector<const char*>(kNames));
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < threads) {
      }
      // Each thread walks the names from its own start, twice (the second
      // pass is its own table's).
      for (int pass = 0; pass < 2; ++pass) {
        for (int k = 0; k < kNames; ++k) {
          const int i = (k + t * 7) % kNames;
          const char* p = intern_zone_name(prefix + std::to_string(i));
          if (pass == 0)
            got[t][i] = p;
          else if (got[t][i] != p)
            got[t][i] = nullptr;
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  for (int i = 0; i < kNames; ++i) {
    ASSERT_NE(got[0][i], nullptr);
    EXPECT_EQ(std::string(got[0][i]), prefix + std::to_string(i));
    for (int t = 1; t < threads; ++t)
      EXPECT_EQ(got[t][i], got[0][i]) << "thread " << t << " name " << i;
  }
}

TEST(ZoneNamesThreads, OnePointerPerTextTwoThreads) { intern_from_threads(2, "two_"); }
TEST(ZoneNamesThreads, OnePointerPerTextThreeThreads) { intern_from_threads(3, "three_"); }
TEST(ZoneNamesThreads, OnePointerPerTextEightThreads) { intern_from_threads(8, "eight_"); }

}  // namespace
}  // namespace latlab
