#include "latlab/host_time.hpp"

#include <cerrno>
#include <ctime>

namespace latlab {

void host_sleep_until(int64_t deadline_ns) {
  const timespec ts = host_ns_to_timespec(deadline_ns);
  while (clock_nanosleep(kHostClockId, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace latlab
