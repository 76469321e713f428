#include "capture/thread_cpu.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace latlab::capture {
namespace {

// The CPU clock of thread `tid` of this process: the kernel's encoding of
// a per-thread scheduler clock (what pthread_getcpuclockid returns, for a
// thread known only by its id).
clockid_t thread_clock(pid_t tid) {
  return static_cast<clockid_t>((~static_cast<unsigned>(tid)) << 3U) | 6;
}

bool named_ours(pid_t tid) {
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/comm";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char name[32] = {};
  const ssize_t n = ::read(fd, name, sizeof(name) - 1);
  ::close(fd);
  return n > 0 && std::string_view(name, static_cast<size_t>(n)).starts_with(kLatlabThreadPrefix);
}

}  // namespace

int64_t LatlabThreadsCpu::sample() {
  for (Seen& s : seen_) s.listed = false;
  if (DIR* dir = ::opendir("/proc/self/task")) {
    while (const dirent* e = ::readdir(dir)) {
      const pid_t tid = static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10));
      if (tid <= 0) continue;
      auto it =
          std::find_if(seen_.begin(), seen_.end(), [&](const Seen& s) { return s.tid == tid; });
      if (it == seen_.end()) it = seen_.insert(seen_.end(), Seen{tid});
      it->listed = true;
      // A thread names itself after it starts: a name not ours is read again.
      if (!it->ours) it->ours = named_ours(tid);
      if (!it->ours) continue;
      timespec ts{};
      if (::clock_gettime(thread_clock(tid), &ts) == 0) {
        it->cpu_ns = int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
      }
    }
    ::closedir(dir);
  }
  // The program's threads that exited are forgotten; latlab's keep their last figure.
  std::erase_if(seen_, [](const Seen& s) { return !s.listed && !s.ours; });
  int64_t total = 0;
  for (const Seen& s : seen_) total += s.ours ? s.cpu_ns : 0;
  return total;
}

uint32_t LatlabThreadsCpu::threads() const {
  return static_cast<uint32_t>(
      std::count_if(seen_.begin(), seen_.end(), [](const Seen& s) { return s.ours; }));
}

}  // namespace latlab::capture
