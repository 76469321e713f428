// `latlab profile --queues all` on this machine's Vulkan device (lavapipe on
// CI: one queue family, so every role runs on it and says so), with the
// validation layer on: every zone named with its queue, a zone per command
// buffer, and a trace with a GPU track per queue used.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "e2e/cli_run_helpers.hpp"

namespace latlab::test {
namespace {

using e2e::CliResult;
using e2e::run_cli;

class ProfileQueuesCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("latlab_profile_queues_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(ProfileQueuesCli, EveryZoneNamesItsQueueAndTheTraceHasATrackPerQueue) {
  constexpr int kFrames = 6;
  const auto trace = (dir_ / "trace.json").string();
  const CliResult r = run_cli("profile --queues all --frames " + std::to_string(kFrames) +
                                  " --size 32x32 --validation --json --trace " + trace,
                              {.stderr_too = false});
  ASSERT_EQ(r.rc, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j.at("validation_errors"), 0);
  EXPECT_EQ(j.at("settings").at("queues"), "all");
  EXPECT_EQ(j.at("counters").at("zones_dropped"), 0);
  EXPECT_EQ(j.at("counters").at("zones_invalid"), 0);
  ASSERT_TRUE(j.at("queue_families_unavailable").is_array());
  for (const auto& u : j.at("queue_families_unavailable"))
    EXPECT_FALSE(u.at("reason").get<std::string>().empty());

  // Every role ran, on a queue the output names; a role off its own family says why.
  std::map<std::string, uint32_t> role_family;
  for (const auto& role : j.at("roles")) {
    role_family[role.at("role")] = role.at("queue_family");
    EXPECT_TRUE(role.at("note").is_null() || role.at("note").is_string());
  }
  for (const char* role : {"upload", "async compute", "graphics"})
    EXPECT_TRUE(role_family.count(role)) << role;

  std::set<std::string> tracks;
  for (const auto& q : j.at("queues")) {
    tracks.insert(q.at("track"));
    EXPECT_GT(q.at("valid_bits").get<uint32_t>(), 0u);
    EXPECT_EQ(q.at("counters").at("frames_collected"), kFrames);
  }
  ASSERT_FALSE(tracks.empty());

  // Zones: each with its queue; one "cmdbuf <role>" per role, timed every frame.
  std::set<std::string> cmdbufs;
  size_t zones = 0;
  for (const auto& z : j.at("zones")) {
    ++zones;
    EXPECT_TRUE(tracks.count(z.at("queue").get<std::string>())) << z.dump();
    EXPECT_EQ(z.at("frames"), kFrames) << z.dump();
    if (z.at("command_buffer").get<bool>()) cmdbufs.insert(z.at("zone"));
  }
  EXPECT_GE(zones, 15u);  // 9 graphics + 3 upload + 3 async compute (+ markers)
  for (const char* c : {"cmdbuf upload", "cmdbuf async compute", "cmdbuf graphics"})
    EXPECT_TRUE(cmdbufs.count(c)) << c;

  // Overlap of the upload and async compute command buffers with graphics,
  // per frame on the host clock; the semaphore's order holds there.
  ASSERT_EQ(j.at("overlap").size(), 2u);
  for (const auto& o : j.at("overlap")) {
    EXPECT_EQ(o.at("with"), "graphics");
    EXPECT_EQ(o.at("frames"), kFrames) << o.dump();
    EXPECT_LE(o.at("frames_overlapping").get<int>(), kFrames);
  }
  EXPECT_EQ(j.at("semaphore_order").at("frames"), kFrames);
  EXPECT_EQ(j.at("semaphore_order").at("async_began_before_upload_ended"), 0);

  // The trace: a GPU track per queue used, beside the CPU ones.
  std::ifstream in(trace);
  std::stringstream ss;
  ss << in.rdbuf();
  const auto doc = nlohmann::json::parse(ss.str());
  std::set<std::string> gpu_tracks, cpu_tracks;
  for (const auto& ev : doc.at("traceEvents")) {
    if (ev.at("ph") != "M" || ev.at("name") != "thread_name") continue;
    const std::string name = ev.at("args").at("name");
    (ev.at("pid") == 2 ? gpu_tracks : cpu_tracks).insert(name);
  }
  for (const auto& t : tracks) {
    EXPECT_TRUE(gpu_tracks.count("GPU " + t + " (thread 1)")) << t;
  }
  EXPECT_TRUE(cpu_tracks.count("CPU main"));
}

TEST_F(ProfileQueuesCli, TextSaysWhichFamiliesWereUsedAndWhichNot) {
  const CliResult r = run_cli("profile --queues all --frames 3 --size 16x16");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("queues used:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("queue families unavailable:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cmdbuf graphics"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("upload.copy"), std::string::npos) << r.output;
}

TEST_F(ProfileQueuesCli, DeviceAllProfilesEveryDeviceIntoOneTrace) {
  const auto trace = (dir_ / "devices.json").string();
  const CliResult r =
      run_cli("profile --device all --queues all --frames 3 --size 16x16 --json --trace " + trace,
              {.stderr_too = false});
  ASSERT_EQ(r.rc, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  ASSERT_GE(j.at("devices").size(), 1u);
  std::set<std::string> tracks;
  for (const auto& d : j.at("devices")) {
    ASSERT_TRUE(d.contains("queues")) << d.dump();
    for (const auto& q : d.at("queues")) tracks.insert(q.at("track"));
  }
  // Queue tracks carry their device ("[0] vulkan queue family 0 (...)"), each
  // device its own GPU process group in the trace.
  std::ifstream in(trace);
  std::stringstream ss;
  ss << in.rdbuf();
  const auto doc = nlohmann::json::parse(ss.str());
  std::set<std::string> groups, gpu_tracks;
  for (const auto& ev : doc.at("traceEvents")) {
    if (ev.at("ph") != "M") continue;
    const std::string name = ev.at("args").value("name", "");
    if (ev.at("name") == "process_name") groups.insert(name);
    if (ev.at("name") == "thread_name" && ev.at("pid").get<int>() >= 2) gpu_tracks.insert(name);
  }
  for (const auto& t : tracks) {
    EXPECT_EQ(t.rfind("[", 0), 0u) << t;
    EXPECT_TRUE(gpu_tracks.count("GPU " + t + " (thread 1)")) << t;
  }
  EXPECT_TRUE(std::any_of(groups.begin(), groups.end(),
                          [](const std::string& g) { return g.rfind("GPU [0] ", 0) == 0; }));
}

TEST_F(ProfileQueuesCli, QueuesAllIsAVulkanOption) {
  CliResult r = run_cli("profile --queues all --backend cuda --frames 2");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("--queues all is a Vulkan option"), std::string::npos) << r.output;
  r = run_cli("profile --queues some");
  EXPECT_EQ(r.rc, 2) << r.output;
  r = run_cli("profile --device all --backend gl --frames 2");
  EXPECT_EQ(r.rc, 2) << r.output;
  r = run_cli("profile --device 0, --frames 2");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("empty item"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace latlab::test
