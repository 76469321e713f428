// `latlab profile --trace` streams its trace: Ctrl-C during the frames
// closes what was captured into a valid trace marked partial (exit 1), and
// /dev/null is written through. On this machine's Vulkan device (lavapipe
// on CI).
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "e2e/cli_run_helpers.hpp"
#include "temp_dir.hpp"

extern char** environ;

namespace latlab::test {
namespace {

using e2e::CliResult;
using e2e::latlab_binary;
using e2e::run_cli;

TEST(ProfileTraceCli, InterruptClosesAPartialTrace) {
  TempDir dir("latlab-profile-trace");
  const std::string trace = (dir.path / "t.json").string();
  std::vector<std::string> args = {latlab_binary(), "profile", "--frames", "1000000",
                                   "--size",        "8x8",     "--trace",  trace};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  // The trace's temporary file appears once the interrupt handler is in
  // place and the frames are about to start (stdout is a pipe, so the
  // settings line is not seen before the end). Then give them a moment.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int status = 0;
  bool reaped = false;  // it ended on its own (no device)
  while (std::filesystem::is_empty(dir.path) && std::chrono::steady_clock::now() < deadline) {
    if ((reaped = waitpid(pid, &status, WNOHANG) == pid)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!reaped) std::this_thread::sleep_for(std::chrono::seconds(1));
  std::string seen;
  char buf[4096];
  if (!reaped) kill(pid, SIGINT);
  ssize_t n = 0;
  while ((n = read(out[0], buf, sizeof buf)) > 0) seen.append(buf, static_cast<size_t>(n));
  close(out[0]);
  if (!reaped) {
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
  }
  if (seen.find("no Vulkan device") != std::string::npos) GTEST_SKIP() << seen;
  ASSERT_TRUE(WIFEXITED(status)) << seen;
  EXPECT_EQ(WEXITSTATUS(status), 1) << seen;
  EXPECT_NE(seen.find("interrupted after"), std::string::npos) << seen;
  const nlohmann::json doc = nlohmann::json::parse(slurp(trace));
  EXPECT_EQ(doc.at("otherData").at("partial"), true);
  EXPECT_NE(doc.at("otherData").at("partial_reason").get<std::string>().find("interrupted"),
            std::string::npos);
  size_t begins = 0;
  for (const auto& ev : doc.at("traceEvents")) begins += ev.at("ph") == "B" ? 1 : 0;
  EXPECT_GT(begins, 0u) << "the frames captured before the interrupt are in the trace";
}

TEST(ProfileTraceCli, DevNullIsWrittenThrough) {
  const CliResult r =
      run_cli("profile --frames 5 --size 8x8 --json --trace /dev/null", {.stderr_too = false});
  if (r.rc == 3) GTEST_SKIP() << "no Vulkan device: " << r.output;
  ASSERT_EQ(r.rc, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j.at("trace").at("written"), true);
  EXPECT_EQ(j.at("trace").at("partial"), false);
  EXPECT_GT(j.at("trace").at("spans").get<int>(), 0);
  struct stat st {};
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

}  // namespace
}  // namespace latlab::test
