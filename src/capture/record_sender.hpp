// The sending side of the capture record stream (capture_record.hpp), for
// frame sources inside a captured program. Never blocks, never raises
// SIGPIPE, never allocates after the first call.
//
// Threads: send() from any thread. Ownership: one per process (process()),
// alive until exit; the descriptor is the one `latlab capture` handed over.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

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
  // Sends `n` records in one system call (sendmmsg) where the socket takes
  // them: record i is sizes[i] bytes at data + i * stride, its head filled
  // as send() fills it but for pid and seq, which this fills. Records that
  // do not fit are dropped and counted, as send() drops them.
  void send_batch(std::byte* data, size_t stride, const uint32_t* sizes, size_t n);
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

// Records gathered to go in one send_batch: a collector's pass sends its
// submissions and frames together (a system call per record cost the
// program more CPU than the rest of the pass). Not thread-safe; flushes
// when full and when destroyed.
class RecordBatch {
 public:
  explicit RecordBatch(RecordSender& sender) : sender_(sender) {}
  ~RecordBatch() { flush(); }
  RecordBatch(const RecordBatch&) = delete;
  RecordBatch& operator=(const RecordBatch&) = delete;

  template <class R>
  void add(R& record, RecordType type, uint64_t source) {
    static_assert(sizeof(R) <= kMaxRecordSize);
    if (count_ == kCapacity) flush();
    record.head = RecordHead{};
    record.head.type = type;
    record.head.size = sizeof(R);
    record.head.source = source;
    std::memcpy(&buffer_[count_ * kMaxRecordSize], &record, sizeof(R));
    sizes_[count_++] = sizeof(R);
  }
  void flush() {
    if (count_ > 0) sender_.send_batch(buffer_.data(), kMaxRecordSize, sizes_.data(), count_);
    count_ = 0;
  }

 private:
  static constexpr size_t kCapacity = 64;
  RecordSender& sender_;
  std::array<std::byte, kCapacity * kMaxRecordSize> buffer_{};
  std::array<uint32_t, kCapacity> sizes_{};
  size_t count_ = 0;
};

}  // namespace latlab::capture
