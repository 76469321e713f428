// A FIFO's reader on a thread, for tests of outputs written through a FIFO
// (the output-file and trace-writer unit tests).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

namespace latlab::test {

// Reads a FIFO on a thread, never blocking on it: its read end is opened
// (non-blocking) before the writer comes, and the thread stops once the
// writer has returned and nothing is left (or after 20 s), so a writer that
// never opens the FIFO fails the test instead of hanging it. `stop_after`:
// close the read end after that many bytes (0: read to the end).
class FifoReader {
 public:
  FifoReader(const std::filesystem::path& fifo, size_t stop_after)
      : fd_(::open(fifo.c_str(), O_RDONLY | O_NONBLOCK)), stop_after_(stop_after) {
    thread_ = std::thread([this] { loop(); });
  }
  ~FifoReader() {
    if (thread_.joinable()) finish();
  }
  FifoReader(const FifoReader&) = delete;
  FifoReader& operator=(const FifoReader&) = delete;
  // Call once the writer returned: what was read.
  std::string finish() {
    writer_done_.store(true);
    thread_.join();
    return got_;
  }

 private:
  void loop() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (fd_ >= 0 && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      (void)poll(&p, 1, 50);
      char buf[4096];
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n > 0) {
        got_.append(buf, static_cast<size_t>(n));
        if (stop_after_ > 0 && got_.size() >= stop_after_) break;
        continue;
      }
      if (n == 0 && writer_done_.load()) break;  // no writer left, and it returned
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (fd_ >= 0) ::close(fd_);
  }

  int fd_;
  size_t stop_after_;
  std::atomic<bool> writer_done_{false};
  std::string got_;
  std::thread thread_;
};

}  // namespace latlab::test
