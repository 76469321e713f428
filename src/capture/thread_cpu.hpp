// The CPU time of the threads latlab adds to a captured program: every
// thread of this process whose name starts with "latlab-" (each names itself
// when it starts: the Vulkan layer's collector and present waiters, the
// clock refresh, the GL interposer's sender). It is part of what capture
// costs the program (docs/capture.md, "Cost"), which the layer's timing of
// its own calls does not see.
//
// Clock: CPU nanoseconds of each thread (its CLOCK_THREAD_CPUTIME_ID).
// Threads: one caller at a time; call it from any thread of the process.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string_view>
#include <vector>

namespace latlab::capture {

inline constexpr std::string_view kLatlabThreadPrefix = "latlab-";

class LatlabThreadsCpu {
 public:
  // CPU ns of latlab's threads so far: the live ones now, the ones that
  // have exited at the last sample that saw them. A thread is seen from
  // the first sample after it named itself.
  int64_t sample();
  // latlab threads seen so far, exited ones included.
  uint32_t threads() const;

 private:
  struct Seen {
    pid_t tid = 0;
    bool ours = false;
    bool listed = false;  // in this sample's /proc/self/task
    int64_t cpu_ns = 0;   // at the last sample (ours only)
  };
  std::vector<Seen> seen_;
};

}  // namespace latlab::capture
