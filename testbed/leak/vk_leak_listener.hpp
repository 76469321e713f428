// A gtest listener that fails a test which leaves Vulkan objects alive
// (instances, devices, any kind vk_leak_counts.h names), destroys a parent
// before its children, or runs the process towards its open-file limit;
// the counts come from the wrappers linked into the binary
// (testbed/leak/vk_leak_linked.cpp). With LATLAB_VKLEAK_REPORT=1 it also
// prints, per test, the process's open fds, memory mappings and threads, the
// live objects, and which fd targets and mapped files a test left behind
// (bench/device/vulkan_leak.sh reads these lines on the GPU machine).
//
// Why: on NVIDIA every instance and device holds device files and mappings
// that lavapipe does not, so a leak that costs nothing here exhausts the
// process after a few dozen contexts there (VK_ERROR_INCOMPATIBLE_DRIVER
// from every later vkCreateInstance). Checked per test, a leak fails the
// test that made it, on any driver.
#pragma once

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "leak/vk_leak_counts.h"

namespace latlab::test::vkleak {

// What the process holds at one moment.
struct Snapshot {
  std::array<int, LATLAB_VKLEAK_KINDS> live{};
  uint64_t order_faults = 0;
  std::map<std::string, int> fds;   // by target, numbers dropped ("pipe:", "/dev/nvidia0")
  std::map<std::string, int> maps;  // mappings by file ("[anon]" for none)
  int threads = 0;

  int open_fds() const {
    int n = 0;
    for (const auto& [target, count] : fds) n += count;
    return n;
  }
  int mappings() const {
    int n = 0;
    for (const auto& [file, count] : maps) n += count;
    return n;
  }
};

// "socket:[1234]" -> "socket:", "anon_inode:[eventfd]" stays.
inline std::string fd_kind(std::string target) {
  const size_t open = target.find(":[");
  if (open != std::string::npos && target.size() > open + 2 &&
      std::isdigit(static_cast<unsigned char>(target[open + 2])) != 0)
    target.resize(open + 1);
  return target;
}

inline std::map<std::string, int> open_fd_targets() {
  std::map<std::string, int> out;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return out;
  const int own = dirfd(d);
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] == '.' || std::atoi(e->d_name) == own) continue;
    char buf[512];
    const std::string link = std::string("/proc/self/fd/") + e->d_name;
    const ssize_t n = readlink(link.c_str(), buf, sizeof buf - 1);
    ++out[n > 0 ? fd_kind(std::string(buf, static_cast<size_t>(n))) : "?"];
  }
  closedir(d);
  return out;
}

inline std::map<std::string, int> mapped_files() {
  std::map<std::string, int> out;
  std::ifstream in("/proc/self/maps");
  std::string line;
  while (std::getline(in, line)) {
    // address perms offset dev inode [path]
    std::istringstream fields(line);
    std::string skip, path;
    for (int i = 0; i < 5; ++i) fields >> skip;
    fields >> path;
    ++out[path.empty() ? "[anon]" : path];
  }
  return out;
}

inline int thread_count() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (const dirent* e = readdir(d)) n += e->d_name[0] != '.' ? 1 : 0;
    closedir(d);
  }
  return n;
}

inline Snapshot take_snapshot() {
  Snapshot s;
  for (int k = 0; k < LATLAB_VKLEAK_KINDS; ++k) s.live[k] = latlab_vkleak_live(k);
  s.order_faults = latlab_vkleak_order_faults();
  s.fds = open_fd_targets();
  s.maps = mapped_files();
  s.threads = thread_count();
  return s;
}

// The kinds with more live objects in `after` than in `before`
// ("instance 0 -> 1, fence 2 -> 3"); empty when none.
inline std::string grown_objects(const Snapshot& before, const Snapshot& after) {
  std::string out;
  for (int k = 0; k < LATLAB_VKLEAK_KINDS; ++k) {
    if (after.live[k] <= before.live[k]) continue;
    out += (out.empty() ? "" : ", ") + std::string(latlab_vkleak_kind_name(k)) + " " +
           std::to_string(before.live[k]) + " -> " + std::to_string(after.live[k]);
  }
  return out;
}

// Entries whose count changed ("+/dev/nvidia0 x2, -pipe: x1"); empty when none.
inline std::string changed(const std::map<std::string, int>& before,
                           const std::map<std::string, int>& after) {
  std::map<std::string, int> delta;
  for (const auto& [k, n] : after) delta[k] += n;
  for (const auto& [k, n] : before) delta[k] -= n;
  std::string out;
  for (const auto& [k, d] : delta) {
    if (d == 0) continue;
    out += (out.empty() ? "" : ", ") + std::string(d > 0 ? "+" : "-") + k + " x" +
           std::to_string(d > 0 ? d : -d);
  }
  return out;
}

// The process's soft limit on open files (0 when unknown).
inline uint64_t fd_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 0;
  return r.rlim_cur;
}

class Listener : public ::testing::EmptyTestEventListener {
 public:
  Listener() {
    const char* r = std::getenv("LATLAB_VKLEAK_REPORT");
    report_ = r != nullptr && std::atoi(r) != 0;
  }

  void OnTestProgramStart(const ::testing::UnitTest&) override {
    if (!report_) return;
    const Snapshot s = take_snapshot();
    std::printf("[vkleak] start: fds %d (limit %llu), maps %d, threads %d\n", s.open_fds(),
                static_cast<unsigned long long>(fd_limit()), s.mappings(), s.threads);
  }

  void OnTestStart(const ::testing::TestInfo&) override { before_ = take_snapshot(); }

  // Failures here count against the test that just ran (gtest's sample10 does the same).
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const Snapshot after = take_snapshot();
    const std::string grown = grown_objects(before_, after);
    EXPECT_TRUE(grown.empty()) << "the test left Vulkan objects alive: " << grown;
    EXPECT_EQ(after.order_faults, before_.order_faults)
        << "a Vulkan parent was destroyed before its children (the wrappers print which)";
    // Half the limit: far above what any driver holds for the objects of
    // one test (NVIDIA: tens of fds), well before vkCreateInstance fails.
    const uint64_t limit = fd_limit();
    EXPECT_TRUE(limit == 0 || static_cast<uint64_t>(after.open_fds()) < limit / 2)
        << after.open_fds() << " files open of a limit of " << limit
        << "; this test changed: " << changed(before_.fds, after.fds);
    if (report_) {
      std::printf(
          "[vkleak] %s.%s: fds %d (%+d) maps %d (%+d) threads %d (%+d)%s%s%s%s\n",
          info.test_suite_name(), info.name(), after.open_fds(),
          after.open_fds() - before_.open_fds(), after.mappings(),
          after.mappings() - before_.mappings(), after.threads, after.threads - before_.threads,
          grown.empty() ? "" : "; alive: ", grown.c_str(),
          after.fds == before_.fds ? "" : "; fds: ", changed(before_.fds, after.fds).c_str());
      const std::string maps = changed(before_.maps, after.maps);
      if (!maps.empty()) std::printf("[vkleak]   maps: %s\n", maps.c_str());
      std::fflush(stdout);
    }
  }

 private:
  bool report_ = false;
  Snapshot before_;
};

}  // namespace latlab::test::vkleak
