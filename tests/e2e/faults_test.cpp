// Faults while `latlab run` writes its result (docs/faults.md): a full disk,
// a read-only directory, SIGTERM and SIGKILL. Each ends with a clear error or
// a partial result that says why, never a crash, and the previous result file
// is left whole.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "e2e/cli_run_helpers.hpp"

namespace latlab::e2e {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPrevious = "{\"previous\": true}\n";

// A tmpfs of `kib` KiB mounted on a fresh directory (root only); unmounted
// on destruction. mounted() false: the reason is in `why`.
struct TinyFs {
  TempDir dir;
  bool ok = false;
  std::string why;
  explicit TinyFs(int kib) {
    if (geteuid() != 0) {
      why = "not root: cannot mount a tmpfs";
      return;
    }
    const std::string opts = "size=" + std::to_string(kib) + "k";
    if (mount("tmpfs", dir.path.c_str(), "tmpfs", 0, opts.c_str()) != 0) {
      why = std::string("mount tmpfs failed: ") + std::strerror(errno);
      return;
    }
    ok = true;
  }
  bool remount_read_only() const {
    return mount("tmpfs", dir.path.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) == 0;
  }
  ~TinyFs() {
    if (ok) umount2(dir.path.c_str(), MNT_DETACH);
  }
};

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p);
  out << text;
}

// Files in `dir` other than `keep` (e.g. a temporary file left behind).
std::vector<std::string> others(const fs::path& dir, const std::string& keep) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename() != keep) out.push_back(e.path().filename().string());
  }
  return out;
}

const std::string kRun =
    "run --mode baseline --backend sim --time-scale 100 --frames 400 --warmup 0 --interval-ms 1-2 ";

TEST(RunFaults, DiskFullFailsClearlyAndKeepsThePreviousResult) {
  TinyFs tiny(16);  // the result with its per-frame columns is far larger
  if (!tiny.ok) GTEST_SKIP() << tiny.why;
  const fs::path out = tiny.dir.path / "r.json";
  write_file(out, kPrevious);
  const CliResult r = run_cli(kRun + "--out " + out.string());
  EXPECT_NE(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("No space left on device"), std::string::npos) << r.output;
  EXPECT_EQ(slurp(out), kPrevious);
  EXPECT_EQ(others(tiny.dir.path, "r.json"), std::vector<std::string>{}) << "a temporary file was left";
}

TEST(RunFaults, ReadOnlyDirectoryIsRefusedBeforeTheRun) {
  TinyFs tiny(64);
  if (!tiny.ok) GTEST_SKIP() << tiny.why;
  const fs::path out = tiny.dir.path / "r.json";
  write_file(out, kPrevious);
  ASSERT_TRUE(tiny.remount_read_only()) << std::strerror(errno);
  const CliResult r = run_cli(kRun + "--out " + out.string());
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("not writable"), std::string::npos) << r.output;
  EXPECT_EQ(slurp(out), kPrevious);
}

// Starts `latlab run` writing to `out`; returns its pid once the run's
// settings echo (after the signal handlers are installed) was read.
pid_t start_run(const std::string& out, const std::string& frames, int& stdout_fd) {
  const std::string bin = latlab_binary();
  std::vector<std::string> args{bin,         "run",   "--mode",        "baseline", "--backend", "sim",
                                "--frames",  frames,  "--warmup",      "0",        "--time-scale",
                                "20",        "--interval-ms", "1-2",   "--out",    out};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int fds[2];
  if (pipe(fds) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, bin.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) return -1;
  std::string seen;
  char buf[4096];
  while (seen.find("host clock") == std::string::npos) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    seen.append(buf, static_cast<size_t>(n));
  }
  stdout_fd = fds[0];
  return pid;
}

int finish(pid_t pid, int fd) {
  char buf[4096];
  while (read(fd, buf, sizeof buf) > 0) {
  }
  close(fd);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(RunFaults, SigtermWritesAPartialResultThatSaysWhy) {
  TempDir dir;
  const fs::path out = dir.path / "r.json";
  write_file(out, kPrevious);
  int fd = -1;
  const pid_t pid = start_run(out.string(), "1000000", fd);
  ASSERT_GT(pid, 0);
  // Past the start-up (a debug or sanitizer build takes most of a second to
  // set up a million frames' records), inside the ~75 s of measured frames:
  // a signal before any measured frame writes nothing, by design.
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  kill(pid, SIGTERM);
  const int status = finish(pid, fd);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 1);
  const nlohmann::json j = nlohmann::json::parse(slurp(out));
  ASSERT_TRUE(j.contains("partial")) << "no partial result written";
  EXPECT_EQ(j["partial"], true);
  EXPECT_NE(j["partial_reason"].get<std::string>().find("interrupted"), std::string::npos);
}

// SIGKILL cannot be handled: whenever it lands (during the run or while the
// result is written), the file is the previous one or a whole new document,
// never a truncated one.
TEST(RunFaults, SigkillAnywhereLeavesAWholeFile) {
  TempDir dir;
  const fs::path out = dir.path / "r.json";
  write_file(out, kPrevious);
  int replaced = 0;
  for (int delay_ms = 0; delay_ms <= 700; delay_ms += 100) {
    int fd = -1;
    const pid_t pid = start_run(out.string(), "300", fd);
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    kill(pid, SIGKILL);
    (void)finish(pid, fd);
    const std::string text = slurp(out);
    if (text == kPrevious) continue;
    ++replaced;
    const auto j = nlohmann::json::parse(text, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "a truncated result after SIGKILL at " << delay_ms << " ms";
    EXPECT_TRUE(j.contains("schema_version"));
  }
  std::printf("SIGKILL: %d of 8 runs had replaced the file before the kill\n", replaced);
}

}  // namespace
}  // namespace latlab::e2e
