// An Xvfb server for one test: started with -displayfd (it picks a free
// display number and writes it back), killed when the object goes. The
// reason it could not start is kept for GTEST_SKIP.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace latlab::e2e {

class XvfbServer {
 public:
  XvfbServer() {
    int fds[2];
    if (pipe(fds) != 0) {
      why_ = "pipe failed";
      return;
    }
    pid_ = fork();
    if (pid_ == 0) {
      close(fds[0]);
      const std::string fd = std::to_string(fds[1]);
      const int devnull = open("/dev/null", O_WRONLY);
      if (devnull >= 0) {
        dup2(devnull, 1);
        dup2(devnull, 2);
      }
      execlp("Xvfb", "Xvfb", "-displayfd", fd.c_str(), "-screen", "0", "640x480x24", "-nolisten",
             "tcp", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fds[1]);
    std::string text;
    for (int waited_ms = 0; waited_ms < 15000;) {
      pollfd p{fds[0], POLLIN, 0};
      if (poll(&p, 1, 250) <= 0) {
        waited_ms += 250;
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;
          break;
        }
        continue;
      }
      char buf[32];
      const ssize_t n = read(fds[0], buf, sizeof buf);
      if (n <= 0) break;
      text.append(buf, static_cast<size_t>(n));
      if (text.find('\n') != std::string::npos) break;
    }
    close(fds[0]);
    if (text.empty() || text.find('\n') == std::string::npos) {
      why_ = "Xvfb did not start (is the xvfb package installed? scripts/install-deps.sh adds it)";
      return;
    }
    display_ = ":" + text.substr(0, text.find('\n'));
  }
  ~XvfbServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
  }
  XvfbServer(const XvfbServer&) = delete;
  XvfbServer& operator=(const XvfbServer&) = delete;

  bool ok() const { return !display_.empty(); }
  const std::string& display() const { return display_; }  // ":N"
  const std::string& why_not() const { return why_; }

 private:
  pid_t pid_ = -1;
  std::string display_;
  std::string why_;
};

}  // namespace latlab::e2e
