#include "profiler/heavy_fence.hpp"

#include <cassert>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace latlab::profiler_detail {
namespace {

#if defined(__linux__)
long membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0u, 0); }
#endif

bool register_process() {
#if defined(__linux__)
  const long cmds = membarrier(MEMBARRIER_CMD_QUERY);
  if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
  return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
#else
  return false;
#endif
}

}  // namespace

bool heavy_fence_available() {
  static const bool available = register_process();
  return available;
}

void heavy_fence() {
#if defined(__linux__)
  // Cannot fail once the process is registered.
  [[maybe_unused]] const long rc = membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
  assert(rc == 0);
#endif
}

}  // namespace latlab::profiler_detail
