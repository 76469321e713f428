#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <string>

#include "latlab/bench/latency_report.hpp"

namespace latlab {

namespace {

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\"");
  const auto e = s.find_last_not_of(" \t\"\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, e - b + 1);
}

// The value after `key` + separator in the first matching line of `path`.
std::string read_keyed(const char* path, const std::string& key, char sep) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto pos = line.find(sep);
    if (pos == std::string::npos) continue;
    if (trim(line.substr(0, pos)) != key) continue;
    return trim(line.substr(pos + 1));
  }
  return "";
}

}  // namespace

MachineInfo collect_machine_info() {
  MachineInfo m;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) m.hostname = host;
  utsname u{};
  if (uname(&u) == 0) {
    m.kernel = std::string(u.sysname) + " " + u.release + " " + u.version;
    m.arch = u.machine;
  }
  m.cpu_model = read_keyed("/proc/cpuinfo", "model name", ':');
  m.os = read_keyed("/etc/os-release", "PRETTY_NAME", '=');
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  m.logical_cpus = n > 0 ? static_cast<uint32_t>(n) : 0;
  return m;
}

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return CPU_COUNT(&set);
}

bool poll_observer_on(const std::string& mode) {
  if (mode == "on") return true;
  if (mode == "off") return false;
  return usable_cpus() >= kPollAutoMinCpus;
}

ProcessMemory read_process_memory() {
  ProcessMemory m;
  auto kb = [](const std::string& v) -> int64_t {
    if (v.empty()) return -1;
    try {
      return std::stoll(v);  // "1234 kB"
    } catch (...) {
      return -1;
    }
  };
  m.rss_kb = kb(read_keyed("/proc/self/status", "VmRSS", ':'));
  m.peak_rss_kb = kb(read_keyed("/proc/self/status", "VmHWM", ':'));
  return m;
}

std::string utc_now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace latlab
