#include "capture/record_sender.hpp"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace latlab::capture {
namespace {

int fd_from_environment() {
  const char* v = std::getenv(kCaptureFdEnv);
  if (v == nullptr || *v == '\0') return -1;
  char* end = nullptr;
  const long fd = std::strtol(v, &end, 10);
  if (*end != '\0' || fd < 0 || fd > 1'000'000) return -1;
  int type = 0;
  socklen_t len = sizeof(type);
  // Only a SOCK_SEQPACKET socket: a number that now names another file of
  // the program (the variable leaked to an unrelated child) is left alone.
  if (getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_TYPE, &type, &len) != 0 ||
      type != SOCK_SEQPACKET) {
    return -1;
  }
  return static_cast<int>(fd);
}

}  // namespace

RecordSender& RecordSender::process(uint8_t lane) {
  static RecordSender sender(fd_from_environment(), lane);
  return sender;
}

bool RecordSender::send_bytes(void* record, uint32_t size, RecordHead& head) {
  head.pid = static_cast<uint32_t>(getpid());
  head.seq = seq_.fetch_add(1, std::memory_order_relaxed);
  if (fd_ < 0 || reader_gone_.load(std::memory_order_relaxed)) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  for (;;) {
    const ssize_t n = ::send(fd_, record, size, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(size)) {
      sent_.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET || errno == EBADF || errno == ENOTSOCK))
      reader_gone_.store(true, std::memory_order_relaxed);
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
}

void RecordSender::send_batch(std::byte* data, size_t stride, const uint32_t* sizes, size_t n) {
  const auto pid = static_cast<uint32_t>(getpid());
  constexpr size_t kMax = 64;
  std::array<iovec, kMax> iov{};
  std::array<mmsghdr, kMax> msgs{};
  size_t done = 0;
  while (done < n) {
    const size_t m = std::min(kMax, n - done);
    for (size_t i = 0; i < m; ++i) {
      std::byte* rec = data + (done + i) * stride;
      RecordHead head;
      std::memcpy(&head, rec, sizeof(head));
      head.pid = pid;
      head.seq = seq_.fetch_add(1, std::memory_order_relaxed);
      std::memcpy(rec, &head, sizeof(head));
      iov[i] = {rec, sizes[done + i]};
      msgs[i] = {};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    size_t sent = 0;
    while (sent < m && fd_ >= 0 && !reader_gone_.load(std::memory_order_relaxed)) {
      const int k = ::sendmmsg(fd_, &msgs[sent], static_cast<unsigned>(m - sent),
                               MSG_DONTWAIT | MSG_NOSIGNAL);
      if (k > 0) {
        sent += static_cast<size_t>(k);
        continue;
      }
      if (k < 0 && errno == EINTR) continue;
      if (k < 0 && (errno == EPIPE || errno == ECONNRESET || errno == EBADF || errno == ENOTSOCK))
        reader_gone_.store(true, std::memory_order_relaxed);
      break;  // full: the rest of this part is dropped
    }
    sent_.fetch_add(sent, std::memory_order_relaxed);
    dropped_.fetch_add(m - sent, std::memory_order_relaxed);
    done += m;
  }
}

}  // namespace latlab::capture
