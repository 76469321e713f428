#include "capture/frame_assembly.hpp"

#include <algorithm>
#include <vector>

namespace latlab::capture {

int64_t union_length_ns(std::span<const SubmitRecord> submits) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  spans.reserve(submits.size());
  for (const auto& s : submits) {
    if (s.no_span == NoSpan::none && s.gpu_begin != kNoTime && s.gpu_end != kNoTime &&
        s.gpu_end >= s.gpu_begin) {
      spans.emplace_back(s.gpu_begin, s.gpu_end);
    }
  }
  std::sort(spans.begin(), spans.end());
  int64_t total = 0;
  int64_t cur_begin = 0;
  int64_t cur_end = 0;
  bool open = false;
  for (const auto& [b, e] : spans) {
    if (open && b <= cur_end) {
      cur_end = std::max(cur_end, e);
      continue;
    }
    if (open) total += cur_end - cur_begin;
    cur_begin = b;
    cur_end = e;
    open = true;
  }
  if (open) total += cur_end - cur_begin;
  return total;
}

void fill_gpu_figures(FrameRecord& frame, std::span<const SubmitRecord> submits) {
  frame.submits = static_cast<uint32_t>(submits.size());
  frame.gpu_spans_missing = 0;
  frame.source_submit_ns = 0;
  int64_t begin = kNoTime;
  int64_t end = kNoTime;
  uint32_t measured = 0;
  for (const auto& s : submits) {
    frame.source_submit_ns += s.source_cpu_ns;
    if (s.no_span == NoSpan::no_work) continue;
    if (s.no_span != NoSpan::none || s.gpu_begin == kNoTime || s.gpu_end == kNoTime) {
      ++frame.gpu_spans_missing;
      continue;
    }
    begin = begin == kNoTime ? s.gpu_begin : std::min(begin, s.gpu_begin);
    end = end == kNoTime ? s.gpu_end : std::max(end, s.gpu_end);
    ++measured;
  }
  if (frame.gpu_spans_missing > 0 || measured == 0) {
    frame.gpu_begin = frame.gpu_end = frame.gpu_busy_ns = kNoTime;
    return;
  }
  frame.gpu_begin = begin;
  frame.gpu_end = end;
  frame.gpu_busy_ns = union_length_ns(submits);
}

}  // namespace latlab::capture
