// The sending side of the capture record stream (capture_record.hpp), for
// frame sources inside a captured program. Never blocks, never raises
// SIGPIPE, never allocates after the first call.
//
// Threads: send() from any thread. Ownership: one per process (process()),
// alive until exit; the descriptor is the one `latlab capture` handed over.
#pragma once

#include <atomic>
#include <cstdint>

#include "capture/capture_record.hpp"

namespace latlab::capture {

class RecordSender {
 public:
  // The process's sender of this library, from LATLAB_CAPTURE_FD (read
  // once). Inactive when the variable is absent or does not name a
  // SOCK_SEQPACKET socket. `lane` (kSeqLane*, taken at the first call): the
  // top byte of its seq, so that each frame-source library in a process
  // numbers its records apart (each has its own copy of this sender).
  static RecordSender& process(uint8_t lane = kSeqLaneVulkanLayer);

  bool active() const { return fd_ >= 0; }
  // Fills `record.head` (magic, version, type, size, pid, seq, source) and
  // sends it. false: dropped (socket full, reader gone, inactive), counted.
  template <class R>
  bool send(R& record, RecordType type, uint64_t source) {
    record.head = RecordHead{};
    record.head.type = type;
    record.head.size = sizeof(R);
    record.head.source = source;
    return send_bytes(&record, sizeof(R), record.head);
  }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  uint64_t sent() const { return sent_.load(std::memory_order_relaxed); }

  // For tests: a sender on `fd` (not owned).
  explicit RecordSender(int fd, uint8_t lane = kSeqLaneVulkanLayer)
      : fd_(fd), seq_(uint64_t{lane} << kSeqLaneShift) {}

 private:
  bool send_bytes(void* record, uint32_t size, RecordHead& head);

  int fd_ = -1;
  std::atomic<uint64_t> seq_;
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> sent_{0};
  std::atomic<bool> reader_gone_{false};
};

}  // namespace latlab::capture
