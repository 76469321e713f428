#include "latlab/bench/present_probe.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "latlab/host_clock.hpp"

namespace latlab {
namespace {

void say(int fd, const std::string& line) {
  const std::string s = line + "\n";
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

// The child: every step is announced first, so a crash names its step.
[[noreturn]] void child(int fd, DeviceSelector selector, const PresentDesc& desc) {
  selector.present = true;
  say(fd, "step opening the device");
  auto dev = open_latency_device(selector);
  if (!dev) {
    say(fd, "error " + dev.error().message);
    _exit(3);
  }
  say(fd, "step making the X11 window, surface and swapchain");
  auto present = (*dev)->open_present(desc);
  if (!present) {
    say(fd, "error " + present.error().message);
    _exit(3);
  }
  say(fd, "step presenting one frame");
  const FrameWorkload work;
  if (auto s = (*dev)->submit_frame(0, work); !s) {
    say(fd, "error " + s.error().message);
    _exit(3);
  }
  if (auto p = (*present)->present(0); !p) {
    say(fd, "error vkQueuePresentKHR: " + p.error().message);
    _exit(3);
  }
  if (auto w = (*dev)->wait_frame(0); !w) {
    say(fd, "error " + w.error().message);
    _exit(3);
  }
  say(fd, "step tearing down");
  present->reset();
  dev->reset();
  say(fd, "ok");
  _exit(0);
}

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

// What the child said: the last step it announced and its error line, if any.
std::pair<std::string, std::string> child_said(const std::string& text) {
  std::string step = "starting";
  std::string error;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const std::string line = text.substr(pos, nl == std::string::npos ? nl : nl - pos);
    if (line.rfind("step ", 0) == 0) step = line.substr(5);
    if (line.rfind("error ", 0) == 0) error = line.substr(6);
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return {step, error};
}

}  // namespace

Result<void> probe_present_in_child(const DeviceSelector& selector, const PresentDesc& desc,
                                    int64_t timeout_ns) {
  if (desc.display.empty() && !env_set("DISPLAY") && !env_set("WAYLAND_DISPLAY"))
    return make_error("no display: DISPLAY is not set (nor WAYLAND_DISPLAY)");
  int fds[2];
  if (pipe(fds) != 0) return make_error(std::string("pipe failed: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return make_error(std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    child(fds[1], selector, desc);
  }
  close(fds[1]);
  std::string text;
  const int64_t end = host_now_ns() + timeout_ns;
  bool timed_out = false;
  for (;;) {
    const int64_t left_ms = (end - host_now_ns()) / 1'000'000;
    if (left_ms <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left_ms, 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[512];
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;  // the child exited (or closed the pipe)
    text.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const auto [step, error] = child_said(text);
  if (timed_out) {
    return make_error("the present probe (a child process) did not finish within " +
                      std::to_string(timeout_ns / 1'000'000'000) + " s while " + step +
                      "; it was killed");
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return make_error("the present probe (a child process) was killed by signal " +
                      std::to_string(sig) + " (" + strsignal(sig) + ") while " + step +
                      ": presenting here would crash");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  if (!error.empty()) return make_error(error);
  return make_error("the present probe (a child process) failed while " + step + " (exit status " +
                    std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
}

PresentSetup probe_run_present(bool asked, const DeviceSelector& selector,
                               const PresentDesc& desc) {
  PresentSetup s;
  s.asked = asked;
  if (!asked) return s;
  if (!backend_info(selector.backend).present) {
    s.unavailable = "the present path needs --backend vulkan (the " +
                    std::string(backend_name(selector.backend)) + " backend has no present path)";
    return s;
  }
  if (Result<void> probe = probe_present_in_child(selector, desc); !probe) {
    s.probe_error = probe.error().message;
    s.unavailable = s.probe_error;
  }
  return s;
}

void open_run_present(LatencyDevice& device, const PresentDesc& desc, PresentSetup& setup,
                      const std::function<void(const std::string&)>& info) {
  if (!setup.asked) return;
  if (setup.unavailable.empty()) {
    Result<std::unique_ptr<PresentPath>> opened = device.open_present(desc);
    if (opened) {
      setup.path = std::move(opened.value());
    } else {
      setup.unavailable = opened.error().message;
    }
  }
  if (!setup.path) {
    info("  present unavailable: " + setup.unavailable);
    return;
  }
  const PresentInfo pi = setup.path->info();
  info(fmt::format("  present: {} mode (offered: {}), {} swapchain images, {}", pi.present_mode,
                   fmt::join(pi.modes_offered, ", "), pi.swapchain_images, pi.surface));
  for (const ScreenObserverInfo& ob : pi.observers) {
    if (ob.available) {
      info(fmt::format("  screen observer {}: polled every {} us", ob.name,
                       static_cast<double>(ob.poll_period_ns) / 1e3));
    }
  }
  if (desc.hold_ns > 0) {
    info(fmt::format(
        "  present hold: each frame's copy held {} ms after its present call (test knob)",
        static_cast<double>(desc.hold_ns) / 1e6));
  }
}

}  // namespace latlab
