// The receiving side of the capture record stream (capture_record.hpp):
// what each source said of itself (hello, unavailable, windows, cost,
// bracketing, end), kept for the result, and its submissions and frames,
// held only until the reader takes them (capture_pipeline.hpp streams them
// to the writers and the distributions).
//
// Threads: not thread-safe; one reader thread adds and takes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "capture/capture_record.hpp"

namespace latlab::capture {

struct CapturedSource {
  uint32_t pid = 0;
  uint64_t source = 0;
  SourceApi api{};
  std::string device_name;
  std::string clock_method;  // "" when GPU times cannot be placed on the host clock
  std::string source_name;
  std::string present_method;  // how present_complete is measured ("" when it is not)
  bool ended = false;          // an EndRecord came: the source shut down cleanly
};

// A window a source presents to (WindowRecord).
struct CapturedWindow {
  uint32_t pid = 0;
  uint64_t source = 0;
  uint64_t swapchain = 0;
  uint64_t window = 0;
  WindowSystem system = WindowSystem::x11;
  std::string display;
};

// The newest CostRecord of a source.
struct CapturedCost {
  uint32_t pid = 0;
  uint64_t source = 0;
  CostRecord record;
};

// A BracketRecord with its process.
struct CapturedBracket {
  uint32_t pid = 0;
  uint64_t source = 0;
  BracketRecord record;
};

struct CapturedUnavailable {
  uint32_t pid = 0;
  uint64_t source = 0;
  std::string name;
  std::string reason;
};

// The records received, in arrival order per kind; submissions and frames
// until taken.
class CaptureStream {
 public:
  // One datagram. false: malformed (bad magic, a size that does not match),
  // counted in malformed(); an unknown type is skipped (counted in unknown()).
  bool add(std::span<const std::byte> datagram);

  const std::vector<CapturedSource>& sources() const { return sources_; }
  const std::vector<CapturedUnavailable>& unavailable() const { return unavailable_; }
  // Received and not taken yet.
  const std::vector<SubmitRecord>& submits() const { return submits_; }
  const std::vector<FrameRecord>& frames() const { return frames_; }
  // Hands over what submits() and frames() hold, leaving them empty.
  std::vector<SubmitRecord> take_submits() { return std::exchange(submits_, {}); }
  std::vector<FrameRecord> take_frames() { return std::exchange(frames_, {}); }
  // Every frame record received, taken or not.
  uint64_t frames_received() const { return frames_received_; }
  const std::vector<CapturedWindow>& windows() const { return windows_; }
  const std::vector<CapturedCost>& costs() const { return costs_; }
  const std::vector<CapturedBracket>& brackets() const { return brackets_; }
  uint64_t malformed() const { return malformed_; }
  uint64_t unknown() const { return unknown_; }
  // Records the sources could not send: gaps in each process's (and lane's) sequence
  // numbers, or what its last EndRecord counted, whichever is larger.
  uint64_t dropped() const;

 private:
  struct PidSeq {
    uint32_t pid = 0;
    uint8_t lane = 0;  // RecordHead::seq >> kSeqLaneShift
    uint64_t received = 0;
    uint64_t max_seq = 0;
    uint64_t end_dropped = 0;
  };
  // Counts the record on its sender's lane; the lane's entry.
  PidSeq& count_seq(const RecordHead& head);
  // Keeps `r` as the newest cost of its source.
  void set_cost(const RecordHead& head, const CostRecord& r);
  void end_source(const RecordHead& head, const EndRecord& r, PidSeq& seq);
  std::vector<CapturedSource> sources_;
  std::vector<CapturedUnavailable> unavailable_;
  std::vector<SubmitRecord> submits_;
  std::vector<FrameRecord> frames_;
  std::vector<CapturedWindow> windows_;
  std::vector<CapturedCost> costs_;
  std::vector<CapturedBracket> brackets_;
  std::vector<PidSeq> seqs_;
  uint64_t malformed_ = 0;
  uint64_t unknown_ = 0;
  uint64_t frames_received_ = 0;
};

// The name of an outcome in the result's submit_spans ("measured" for none).
const char* to_string(NoSpan why);

}  // namespace latlab::capture
