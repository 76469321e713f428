#include "capture/capture_stream.hpp"

#include <algorithm>
#include <cstring>

namespace latlab::capture {
namespace {

template <class R>
bool read_record(std::span<const std::byte> d, R& out) {
  // A longer record is a newer revision of the same type: fields are only
  // appended, so its known prefix reads as before.
  if (d.size() < sizeof(R)) return false;
  std::memcpy(&out, d.data(), sizeof(R));
  return true;
}

// The head of a datagram; false when it is too short or not a record.
bool read_head(std::span<const std::byte> d, RecordHead& head) {
  if (d.size() < sizeof(head)) return false;
  std::memcpy(&head, d.data(), sizeof(head));
  return head.magic == kRecordMagic && head.size == d.size() && head.version != 0;
}

// Reads an R from `d` and hands it to `take`; false when `d` is too short.
template <class R, class Take>
bool read_into(std::span<const std::byte> d, Take take) {
  R r;
  if (!read_record(d, r)) return false;
  take(r);
  return true;
}

}  // namespace

bool CaptureStream::add(std::span<const std::byte> d) {
  RecordHead head;
  if (!read_head(d, head)) {
    ++malformed_;
    return false;
  }
  PidSeq& seq = count_seq(head);
  bool ok = true;
  switch (head.type) {
    case RecordType::hello:
      ok = read_into<HelloRecord>(d, [&](const HelloRecord& r) {
        sources_.push_back({head.pid, head.source, r.api, std::string(text_of(r.device_name)),
                            std::string(text_of(r.clock_method)),
                            std::string(text_of(r.source_name)),
                            std::string(text_of(r.present_method)), false});
      });
      break;
    case RecordType::unavailable:
      ok = read_into<UnavailableRecord>(d, [&](const UnavailableRecord& r) {
        unavailable_.push_back(
            {head.pid, head.source, std::string(text_of(r.name)), std::string(text_of(r.reason))});
      });
      break;
    case RecordType::submit:
      ok = read_into<SubmitRecord>(d, [&](const SubmitRecord& r) { submits_.push_back(r); });
      break;
    case RecordType::frame:
      ok = read_into<FrameRecord>(d, [&](const FrameRecord& r) {
        frames_.push_back(r);
        ++frames_received_;
      });
      break;
    case RecordType::window:
      ok = read_into<WindowRecord>(d, [&](const WindowRecord& r) {
        windows_.push_back({head.pid, head.source, r.swapchain, r.window, r.system,
                            std::string(text_of(r.display))});
      });
      break;
    case RecordType::bracket:
      ok = read_into<BracketRecord>(d, [&](const BracketRecord& r) {
        brackets_.push_back({head.pid, head.source, r});
      });
      break;
    case RecordType::cost:
      ok = read_into<CostRecord>(d, [&](const CostRecord& r) { set_cost(head, r); });
      break;
    case RecordType::end:
      ok = read_into<EndRecord>(d, [&](const EndRecord& r) { end_source(head, r, seq); });
      break;
    default:
      ++unknown_;
      return true;
  }
  if (!ok) ++malformed_;
  return ok;
}

CaptureStream::PidSeq& CaptureStream::count_seq(const RecordHead& head) {
  const auto lane = static_cast<uint8_t>(head.seq >> kSeqLaneShift);
  const uint64_t number = head.seq & ((uint64_t{1} << kSeqLaneShift) - 1);
  auto seq = std::find_if(seqs_.begin(), seqs_.end(),
                          [&](const PidSeq& p) { return p.pid == head.pid && p.lane == lane; });
  if (seq == seqs_.end()) seq = seqs_.insert(seqs_.end(), PidSeq{head.pid, lane, 0, 0, 0});
  ++seq->received;
  seq->max_seq = std::max(seq->max_seq, number);
  return *seq;
}

void CaptureStream::set_cost(const RecordHead& head, const CostRecord& r) {
  auto c = std::find_if(costs_.begin(), costs_.end(), [&](const CapturedCost& x) {
    return x.pid == head.pid && x.source == head.source;
  });
  if (c == costs_.end())
    c = costs_.insert(costs_.end(), CapturedCost{head.pid, head.source, CostRecord{}});
  c->record = r;
}

void CaptureStream::end_source(const RecordHead& head, const EndRecord& r, PidSeq& seq) {
  seq.end_dropped = std::max(seq.end_dropped, r.dropped);
  for (auto& s : sources_) {
    if (s.pid == head.pid && s.source == head.source) s.ended = true;
  }
}

uint64_t CaptureStream::dropped() const {
  uint64_t total = 0;
  for (const auto& p : seqs_) {
    // More received than numbered: a sender repeated numbers; no gap to count.
    const uint64_t gaps = p.received > p.max_seq ? 0 : p.max_seq + 1 - p.received;
    total += std::max(gaps, p.end_dropped);
  }
  return total;
}

const char* to_string(NoSpan why) {
  switch (why) {
    case NoSpan::none:
      return "measured";
    case NoSpan::no_work:
      return "no_work";
    case NoSpan::cannot_time:
      return "cannot_time";
    case NoSpan::ring_full:
      return "ring_full";
    case NoSpan::not_bracketable:
      return "not_bracketable";
    case NoSpan::not_read:
      return "not_read";
    case NoSpan::failed:
      return "failed";
    case NoSpan::budget:
      return "budget";
  }
  return "unknown";
}

}  // namespace latlab::capture
