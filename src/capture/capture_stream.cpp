#include "capture/capture_stream.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

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

std::optional<int64_t> diff(int64_t a, int64_t b) {
  if (a == kNoTime || b == kNoTime) return std::nullopt;
  return a - b;
}

// The distributions (us) of the figures of the rows that `take` accepts.
template <class Take>
void summarize_figures(const std::vector<CaptureFrameRow>& rows, Take take,
                       Distribution (&out)[kFrameFigureCount]) {
  for (size_t i = 0; i < kFrameFigureCount; ++i) {
    std::vector<double> us;
    uint64_t missing = 0;
    for (const auto& r : rows) {
      if (!take(r)) continue;
      if (r.figures[i]) {
        us.push_back(static_cast<double>(*r.figures[i]) / 1000.0);
      } else {
        ++missing;
      }
    }
    out[i] = summarize_in_place(us, missing);
  }
}

}  // namespace

const char* to_string(FrameFigure f) {
  switch (f) {
    case FrameFigure::between_presents:
      return "between_presents";
    case FrameFigure::in_present_api:
      return "in_present_api";
    case FrameFigure::cpu_busy:
      return "cpu_busy";
    case FrameFigure::acquire_wait:
      return "acquire_wait";
    case FrameFigure::gpu_latency:
      return "gpu_latency";
    case FrameFigure::gpu_time:
      return "gpu_time";
    case FrameFigure::gpu_busy:
      return "gpu_busy";
    case FrameFigure::gpu_wait:
      return "gpu_wait";
    case FrameFigure::until_render_complete:
      return "until_render_complete";
    case FrameFigure::until_displayed:
      return "until_displayed";
    case FrameFigure::between_displays:
      return "between_displays";
    case FrameFigure::layer_present_cpu:
      return "layer_present_cpu";
    case FrameFigure::layer_submit_cpu:
      return "layer_submit_cpu";
    case FrameFigure::count_:
      break;
  }
  return "?";
}

const char* to_string(SubmitFigure f) {
  switch (f) {
    case SubmitFigure::gpu_span:
      return "gpu_span";
    case SubmitFigure::submit_to_gpu:
      return "submit_to_gpu";
    case SubmitFigure::in_submit_api:
      return "in_submit_api";
    case SubmitFigure::layer_cpu:
      return "layer_cpu";
    case SubmitFigure::count_:
      break;
  }
  return "?";
}

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
      ok = read_into<FrameRecord>(d, [&](const FrameRecord& r) { frames_.push_back(r); });
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
  }
  return "unknown";
}

const char* to_string(NoComplete why) {
  switch (why) {
    case NoComplete::none:
      return "measured";
    case NoComplete::unavailable:
      return "unavailable";
    case NoComplete::dropped:
      return "dropped";
    case NoComplete::failed:
      return "failed";
    case NoComplete::retired:
      return "retired";
    case NoComplete::late:
      return "late";
    case NoComplete::not_tagged:
      return "not_tagged";
    case NoComplete::discarded:
      return "discarded";
  }
  return "unknown";
}

std::optional<bool> displayed(const FrameRecord& f) {
  if (f.no_complete == NoComplete::discarded) return false;
  const bool display_time = f.complete_method == PresentMethod::display_timing ||
                            f.complete_method == PresentMethod::wp_presentation;
  if (display_time && f.no_complete == NoComplete::none) return true;
  return std::nullopt;
}

namespace {

// One frame's figures; `prev` is the source's frame before it (or null),
// `last_shown` the display time of its last frame displayed before
// (kNoTime: none, or one in between not known to be displayed or not).
CaptureFrameRow frame_row(const FrameRecord& f, const FrameRecord* prev, int64_t last_shown,
                          uint32_t pid) {
  CaptureFrameRow row;
  row.record = f;
  row.pid = pid;
  auto set = [&](FrameFigure x, std::optional<int64_t> v) {
    row.figures[static_cast<size_t>(x)] = v;
  };
  const bool consecutive = prev != nullptr && prev->frame + 1 == f.frame;
  set(FrameFigure::between_presents,
      consecutive ? diff(f.present_start, prev->present_start) : std::nullopt);
  set(FrameFigure::in_present_api, diff(f.present_end, f.present_start));
  auto frame_cpu = diff(f.present_start, f.frame_start);
  set(FrameFigure::cpu_busy, frame_cpu);
  set(FrameFigure::acquire_wait, f.frame_start != kNoTime && f.acquire_wait_ns != kNoTime
                                     ? std::optional<int64_t>(f.acquire_wait_ns)
                                     : std::nullopt);
  set(FrameFigure::gpu_latency, diff(f.gpu_begin, f.frame_start));
  auto gpu_time = diff(f.gpu_end, f.gpu_begin);
  set(FrameFigure::gpu_time, gpu_time);
  set(FrameFigure::gpu_busy,
      f.gpu_busy_ns != kNoTime ? std::optional<int64_t>(f.gpu_busy_ns) : std::nullopt);
  set(FrameFigure::gpu_wait, gpu_time && f.gpu_busy_ns != kNoTime
                                 ? std::optional<int64_t>(*gpu_time - f.gpu_busy_ns)
                                 : std::nullopt);
  set(FrameFigure::until_render_complete, diff(f.gpu_end, f.present_start));
  set(FrameFigure::until_displayed, diff(f.present_complete, f.present_start));
  set(FrameFigure::between_displays,
      displayed(f).value_or(false) ? diff(f.present_complete, last_shown) : std::nullopt);
  set(FrameFigure::layer_present_cpu, f.source_present_ns);
  set(FrameFigure::layer_submit_cpu, f.source_submit_ns);
  return row;
}

// The frame rows, per source in frame order (the order the source sent
// them), with the frame counts.
void add_frame_rows(const CaptureStream& stream, CaptureSummary& out) {
  std::map<std::pair<uint32_t, uint64_t>, std::vector<const FrameRecord*>> by_source;
  for (const auto& f : stream.frames()) by_source[{f.head.pid, f.head.source}].push_back(&f);
  for (auto& [key, frames] : by_source) {
    std::sort(frames.begin(), frames.end(),
              [](const FrameRecord* a, const FrameRecord* b) { return a->frame < b->frame; });
    const FrameRecord* prev = nullptr;
    int64_t last_shown = kNoTime;
    for (const FrameRecord* f : frames) {
      if (f->gpu_spans_missing > 0) ++out.frames_with_missing_gpu;
      const auto nc = static_cast<size_t>(f->no_complete);
      if (nc < std::size(out.no_complete_counts)) ++out.no_complete_counts[nc];
      if (prev == nullptr || prev->frame + 1 != f->frame) last_shown = kNoTime;
      out.frames.push_back(frame_row(*f, prev, last_shown, key.first));
      const auto shown = displayed(*f);
      if (!shown) last_shown = kNoTime;
      if (shown.value_or(false)) last_shown = f->present_complete;
      prev = f;
    }
  }
}

// The frame figures of each swapchain, in the order the swapchains first
// appear among the rows.
void summarize_swapchains(CaptureSummary& out) {
  for (const auto& r : out.frames) {
    auto same = [&](const SwapchainSummary& w) {
      return w.pid == r.pid && w.source == r.record.head.source &&
             w.swapchain == r.record.swapchain;
    };
    auto it = std::find_if(out.per_swapchain.begin(), out.per_swapchain.end(), same);
    if (it == out.per_swapchain.end())
      it = out.per_swapchain.insert(out.per_swapchain.end(),
                                    {r.pid, r.record.head.source, r.record.swapchain, 0, {}});
    ++it->frames;
  }
  for (auto& w : out.per_swapchain) {
    summarize_figures(
        out.frames,
        [&](const CaptureFrameRow& r) {
          return r.pid == w.pid && r.record.head.source == w.source &&
                 r.record.swapchain == w.swapchain;
        },
        w.frame_figures);
  }
}

void summarize_submits(const CaptureStream& stream, CaptureSummary& out) {
  std::vector<double> sub[kSubmitFigureCount];
  uint64_t sub_missing[kSubmitFigureCount] = {};
  for (const auto& s : stream.submits()) {
    ++out.submits;
    const auto why = static_cast<size_t>(s.no_span);
    if (why < std::size(out.no_span_counts)) ++out.no_span_counts[why];
    if (s.no_span == NoSpan::no_work) {
      ++out.submits_without_work;
    } else if (s.no_span != NoSpan::none || s.gpu_begin == kNoTime || s.gpu_end == kNoTime) {
      ++out.gpu_spans_missing;
    }
    auto put = [&](SubmitFigure x, std::optional<int64_t> v) {
      const auto i = static_cast<size_t>(x);
      if (v) {
        sub[i].push_back(static_cast<double>(*v) / 1000.0);
      } else {
        ++sub_missing[i];
      }
    };
    if (s.no_span != NoSpan::no_work) {
      put(SubmitFigure::gpu_span, diff(s.gpu_end, s.gpu_begin));
      put(SubmitFigure::submit_to_gpu, diff(s.gpu_begin, s.cpu_start));
    }
    put(SubmitFigure::in_submit_api, diff(s.cpu_end, s.cpu_start));
    put(SubmitFigure::layer_cpu, s.source_cpu_ns);
  }
  for (size_t i = 0; i < kSubmitFigureCount; ++i)
    out.submit_figures[i] = summarize_in_place(sub[i], sub_missing[i]);
}

// latlab's own cost: threads per process the largest of its sources'
// figures (each is the whole process's), summed over processes.
void summarize_costs(const CaptureStream& stream, CaptureSummary& out) {
  std::map<uint32_t, std::pair<int64_t, uint32_t>> threads_by_pid;  // cpu ns, threads
  for (const CapturedCost& c : stream.costs()) {
    out.has_cost = true;
    out.query_reads += c.record.query_reads;
    out.bracketed += c.record.bracketed;
    auto& [cpu, n] = threads_by_pid[c.pid];
    cpu = std::max(cpu, c.record.threads_cpu_ns);
    n = std::max(n, c.record.threads);
  }
  for (const auto& [pid, t] : threads_by_pid) {
    out.latlab_threads_cpu_ns += t.first;
    out.latlab_threads += t.second;
  }
}

}  // namespace

CaptureSummary summarize_capture(const CaptureStream& stream) {
  CaptureSummary out;
  add_frame_rows(stream, out);
  summarize_figures(
      out.frames, [](const CaptureFrameRow&) { return true; }, out.frame_figures);
  summarize_swapchains(out);
  summarize_submits(stream, out);
  summarize_costs(stream, out);
  return out;
}

std::string missing_span_reasons(const CaptureSummary& s) {
  std::string out;
  for (size_t i = 0; i < std::size(s.no_span_counts); ++i) {
    const auto why = static_cast<NoSpan>(i);
    if (why == NoSpan::none || why == NoSpan::no_work || s.no_span_counts[i] == 0) continue;
    out += (out.empty() ? "" : ", ") + std::string(to_string(why)) + " " +
           std::to_string(s.no_span_counts[i]);
  }
  return out;
}

}  // namespace latlab::capture
