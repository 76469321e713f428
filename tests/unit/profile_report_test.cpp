// `latlab profile`'s JSON parts (src/report/profile_report.cpp): a zone
// with no timed frame has no statistics, and no fit is null, never zeros.
#include "report/profile_json.hpp"
#include "report/profile_report.hpp"

#include <gtest/gtest.h>

namespace latlab {
namespace {

TEST(ProfileReportJson, AZoneWithoutTimedFramesHasNullStatisticsNotZeros) {
  std::vector<ZoneStat> stats(2);
  stats[0] = {.name = "timed",
              .frames = 3,
              .calls_per_frame = 1,
              .avg_ms = 2,
              .min_ms = 1,
              .max_ms = 3,
              .p95_ms = 2.9,
              .missing = 0};
  stats[1] = {.name = "never_timed", .frames = 0, .missing = 5, .frames_missing = 4};
  const auto j = profile_stats_json(stats);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_DOUBLE_EQ(j[0].at("avg_ms").get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j[0].at("p95_ms").get<double>(), 2.9);
  for (const char* key : {"calls_per_frame", "avg_ms", "min_ms", "max_ms", "p95_ms"}) {
    EXPECT_TRUE(j[1].at(key).is_null()) << key << ": " << j[1].at(key);
  }
  EXPECT_EQ(j[1].at("frames"), 0);
  EXPECT_EQ(j[1].at("frames_missing"), 4);
  EXPECT_EQ(j[1].at("missing"), 5);
  EXPECT_EQ(j[0].at("frames_missing"), 0);
}

TEST(ProfileReportJson, NoClockFitIsNull) {
  EXPECT_TRUE(profile_clock_fit_json(nullptr).is_null());
}

}  // namespace
}  // namespace latlab
