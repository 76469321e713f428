// A minimal Chrome DevTools Protocol client over --remote-debugging-pipe
// (commands on the browser's fd 3, replies and events on its fd 4, each
// message NUL-terminated JSON), for the browser test of the HTML report.
// Starts Debian's headless chromium with a fresh profile; no network, no npm.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace latlab::e2e {

class CdpBrowser {
 public:
  // Starts `chromium` headless; its output goes to `log_path`. Check ok().
  CdpBrowser(const std::string& chromium, const std::string& profile_dir,
             const std::string& log_path) {
    int to_browser[2];
    int from_browser[2];
    if (pipe(to_browser) != 0 || pipe(from_browser) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (log >= 0) {
        dup2(log, 1);
        dup2(log, 2);
      }
      // fds 3 and 4 as the protocol wants them; dup first so no fd is lost.
      const int in = dup(to_browser[0]);
      const int out = dup(from_browser[1]);
      dup2(in, 3);
      dup2(out, 4);
      for (int fd = 5; fd < 1024; ++fd) close(fd);
      const std::string profile = "--user-data-dir=" + profile_dir;
      execl(chromium.c_str(), chromium.c_str(), "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions",
            "--remote-debugging-pipe", profile.c_str(), "about:blank",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_browser[0]);
    close(from_browser[1]);
    write_fd_ = to_browser[1];
    read_fd_ = from_browser[0];
  }
  ~CdpBrowser() {
    if (write_fd_ >= 0) close(write_fd_);  // the browser exits when its pipe closes
    if (read_fd_ >= 0) close(read_fd_);
    if (pid_ > 0) {
      for (int i = 0; i < 50; ++i) {
        if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
        usleep(100'000);
      }
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  CdpBrowser(const CdpBrowser&) = delete;
  CdpBrowser& operator=(const CdpBrowser&) = delete;

  bool ok() const { return pid_ > 0 && write_fd_ >= 0; }

  // Every event received so far (method, params, sessionId).
  const std::vector<nlohmann::json>& events() const { return events_; }

  // Sends a command and waits for its reply; nullopt on timeout or a closed
  // pipe, the reply (with "result" or "error") otherwise.
  std::optional<nlohmann::json> call(const std::string& method, nlohmann::json params = nlohmann::json::object(),
                                     const std::string& session = "",
                                     std::chrono::seconds timeout = std::chrono::seconds(60)) {
    const int id = ++next_id_;
    nlohmann::json msg{{"id", id}, {"method", method}, {"params", std::move(params)}};
    if (!session.empty()) msg["sessionId"] = session;
    std::string text = msg.dump();
    text.push_back('\0');
    for (size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(write_fd_, text.data() + done, text.size() - done);
      if (n <= 0) return std::nullopt;
      done += static_cast<size_t>(n);
    }
    std::optional<nlohmann::json> reply;
    wait_for([&](const nlohmann::json& m) {
      if (m.contains("id") && m["id"] == id) {
        reply = m;
        return true;
      }
      return false;
    }, timeout);
    return reply;
  }

  // Reads messages until `done` returns true for one (events are kept) or
  // the timeout passes; returns whether `done` was satisfied. Events already
  // received are offered first.
  bool wait_for(const std::function<bool(const nlohmann::json&)>& done,
                std::chrono::milliseconds timeout) {
    for (const auto& e : events_)
      if (done(e)) return true;
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (true) {
      for (size_t nul; (nul = buffer_.find('\0')) != std::string::npos;) {
        nlohmann::json m = nlohmann::json::parse(buffer_.substr(0, nul), nullptr, false);
        buffer_.erase(0, nul + 1);
        if (m.is_discarded()) continue;
        const bool is_event = m.contains("method");
        if (is_event) events_.push_back(m);
        if (done(m)) return true;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{read_fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[65536];
      const ssize_t n = ::read(read_fd_, buf, sizeof buf);
      if (n <= 0) return false;
      buffer_.append(buf, static_cast<size_t>(n));
    }
  }

 private:
  pid_t pid_ = -1;
  int write_fd_ = -1;
  int read_fd_ = -1;
  int next_id_ = 0;
  std::string buffer_;
  std::vector<nlohmann::json> events_;
};

// Standard base64 (the screenshot's PNG); invalid characters are skipped.
inline std::string base64_decode(const std::string& in) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v = -1;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+') v = 62;
    else if (c == '/') v = 63;
    if (v < 0) continue;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

}  // namespace latlab::e2e
