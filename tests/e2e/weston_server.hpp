// A headless weston for one test: its own XDG_RUNTIME_DIR (a fresh
// directory, mode 700) and socket, started with the headless backend (no
// output device: its "display" is a repaint timer), stopped and removed when
// the object goes. The reason it could not start is kept for GTEST_SKIP.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace latlab::e2e {

class WestonServer {
 public:
  WestonServer() {
    char dir[] = "/tmp/latlab-weston-XXXXXX";
    if (mkdtemp(dir) == nullptr) {
      why_ = "mkdtemp failed";
      return;
    }
    dir_ = dir;
    chmod(dir, 0700);
    const std::string log = dir_ + "/weston.log";
    pid_ = fork();
    if (pid_ == 0) {
      setenv("XDG_RUNTIME_DIR", dir_.c_str(), 1);
      unsetenv("WAYLAND_DISPLAY");
      unsetenv("DISPLAY");
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
      execlp("weston", "weston", "--backend=headless-backend.so", "--socket=latlab-test",
             "--idle-time=0", "--no-config", static_cast<char*>(nullptr));
      _exit(127);
    }
    const std::string socket = dir_ + "/latlab-test";
    for (int waited_ms = 0; waited_ms < 15000; waited_ms += 50) {
      if (access(socket.c_str(), F_OK) == 0) return;
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    why_ = "weston did not start headless (is the weston package installed? "
           "scripts/install-deps.sh adds it): " +
           tail(log);
  }
  ~WestonServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }
  WestonServer(const WestonServer&) = delete;
  WestonServer& operator=(const WestonServer&) = delete;

  bool ok() const { return why_.empty(); }
  const std::string& why_not() const { return why_; }
  // "XDG_RUNTIME_DIR=... WAYLAND_DISPLAY=latlab-test" for a client's command line.
  std::string env() const { return "XDG_RUNTIME_DIR=" + dir_ + " WAYLAND_DISPLAY=latlab-test"; }

 private:
  static std::string tail(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    return text.size() > 400 ? text.substr(text.size() - 400) : text;
  }

  pid_t pid_ = -1;
  std::string dir_;
  std::string why_;
};

}  // namespace latlab::e2e
