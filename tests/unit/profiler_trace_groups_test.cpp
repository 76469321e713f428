// ChromeTrace's GPU groups (set_gpu_group): a process group per device of a
// several-device profile; a track name in two groups is two tracks.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "latlab/profiler_trace.hpp"

namespace latlab {
namespace {

TEST(ChromeTraceGroups, EachGroupIsAProcessAndKeepsItsOwnTracks) {
  ChromeTrace t;
  ASSERT_TRUE(t.add_span("GPU q0", "a", 1'000, 2'000, true));
  t.set_gpu_group("[1] second");
  ASSERT_TRUE(t.add_span("GPU q0", "b", 1'500, 2'500, true));  // same name, other group
  ASSERT_TRUE(t.add_span("CPU main", "submit", 900, 950));     // CPU tracks are not grouped
  t.set_gpu_group("");
  ASSERT_TRUE(t.add_span("GPU q0", "c", 3'000, 4'000, true));  // back in the default group
  const auto doc = nlohmann::json::parse(t.to_json());
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  std::map<std::string, int> span_pid;
  for (const auto& ev : doc.at("traceEvents")) {
    const std::string ph = ev.at("ph");
    if (ph == "M" && ev.at("name") == "process_name")
      processes[ev.at("pid")] = ev.at("args").at("name");
    if (ph == "M" && ev.at("name") == "thread_name")
      threads[{ev.at("pid"), ev.at("tid")}] = ev.at("args").at("name");
    if (ph == "B") span_pid[ev.at("name")] = ev.at("pid");
  }
  EXPECT_EQ(processes[1], "CPU");
  EXPECT_EQ(processes[2], "GPU");
  EXPECT_EQ(processes[3], "GPU [1] second");
  EXPECT_EQ(span_pid["a"], 2);
  EXPECT_EQ(span_pid["b"], 3);
  EXPECT_EQ(span_pid["c"], 2);
  EXPECT_EQ(span_pid["submit"], 1);
  int q0_tracks = 0;
  for (const auto& [key, name] : threads) q0_tracks += name == "GPU q0" ? 1 : 0;
  EXPECT_EQ(q0_tracks, 2);  // one per group; a and c share the default group's
}

}  // namespace
}  // namespace latlab
