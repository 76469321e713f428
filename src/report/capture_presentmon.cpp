// The PresentMon-compatible CSV of a capture (--presentmon-csv): one row per
// frame in present order, PresentMon 2.x's column names, times in ms
// (TimeInSeconds and CPUStartTime in s from the capture's first present),
// "NA" where latlab has no value. docs/capture.md maps every column.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "report/capture_report.hpp"

namespace latlab {
namespace {

using capture::FrameFigure;
using capture::kNoTime;

constexpr const char* kNa = "NA";

// The columns in the order written (each row's cells follow it).
constexpr const char* kColumns[] = {"Application",
                                    "ProcessID",
                                    "SwapChainAddress",
                                    "PresentRuntime",
                                    "SyncInterval",
                                    "PresentFlags",
                                    "AllowsTearing",
                                    "PresentMode",
                                    "CPUStartTime",
                                    "TimeInSeconds",
                                    "MsBetweenPresents",
                                    "MsInPresentAPI",
                                    "MsCPUBusy",
                                    "MsCPUWait",
                                    "MsGPULatency",
                                    "MsGPUTime",
                                    "MsGPUBusy",
                                    "MsGPUWait",
                                    "MsUntilRenderComplete",
                                    "MsRenderPresentLatency",
                                    "MsUntilDisplayed",
                                    "MsBetweenDisplayChange",
                                    "DisplayLatency",
                                    "DisplayedTime",
                                    "Dropped"};

std::string ms(std::optional<int64_t> ns) {
  if (!ns) return kNa;
  char b[40];
  std::snprintf(b, sizeof b, "%.6f", static_cast<double>(*ns) / 1e6);
  return b;
}

std::string seconds(std::optional<int64_t> ns) {
  if (!ns) return kNa;
  char b[40];
  std::snprintf(b, sizeof b, "%.9f", static_cast<double>(*ns) / 1e9);
  return b;
}

std::optional<int64_t> diff(int64_t a, int64_t b) {
  if (a == kNoTime || b == kNoTime) return std::nullopt;
  return a - b;
}

// A frame's present_complete, when it was measured.
int64_t displayed_at(const capture::CaptureFrameRow& r) {
  return r.record.no_complete == capture::NoComplete::none ? r.record.present_complete : kNoTime;
}

// The same source's frame just before (frames are numbered per source).
bool follows(const capture::CaptureFrameRow& prev, const capture::CaptureFrameRow& r) {
  return prev.pid == r.pid && prev.record.head.source == r.record.head.source &&
         prev.record.frame + 1 == r.record.frame;
}

const capture::CapturedSource* source_of(const capture::CaptureRecords& rec,
                                         const capture::CaptureFrameRow& r) {
  for (const auto& s : rec.stream.sources()) {
    if (s.pid == r.pid && s.source == r.record.head.source) return &s;
  }
  return nullptr;
}

std::string runtime_of(const capture::CapturedSource* s) {
  if (s == nullptr) return "Other";
  return s->api == capture::SourceApi::vulkan ? "Vulkan" : "OpenGL";
}

// The source's next frame displayed after frame `i`, passing over the
// frames discarded in between; null where one is not known to be either
// (present wait's times are not display times: capture::displayed).
const capture::CaptureFrameRow* next_displayed(const std::vector<capture::CaptureFrameRow>& f,
                                               size_t i) {
  for (size_t k = i; k + 1 < f.size() && follows(f[k], f[k + 1]); ++k) {
    const auto shown = capture::displayed(f[k + 1].record);
    if (!shown) return nullptr;
    if (*shown) return &f[k + 1];
  }
  return nullptr;
}

// PresentMon 1.x's Dropped: 1 for a frame the compositor discarded, 0 for
// one displayed, NA where the source cannot tell.
std::string dropped(const capture::FrameRecord& f) {
  const auto shown = capture::displayed(f);
  return shown ? (*shown ? "0" : "1") : kNa;
}

// Frame `i`'s cells, one per kColumns entry and in its order; `epoch` is
// time 0.
std::vector<std::string> row_cells(const capture::CaptureRecords& rec, size_t i, int64_t epoch) {
  const auto& frames = rec.summary.frames;
  const auto& r = frames[i];
  const auto& f = r.record;
  auto fig = [&](FrameFigure x) { return r.figures[static_cast<size_t>(x)]; };
  // DisplayedTime: until the next display time (between display times only).
  const bool on_screen = capture::displayed(f).value_or(false);
  const capture::CaptureFrameRow* next = on_screen ? next_displayed(frames, i) : nullptr;
  const int64_t shown = displayed_at(r);
  const capture::CapturedSource* src = source_of(rec, r);
  char swapchain[24];
  std::snprintf(swapchain, sizeof swapchain, "0x%016" PRIX64, f.swapchain);
  return {
      rec.process_name(r.pid),
      std::to_string(r.pid),
      swapchain,
      runtime_of(src),
      kNa,  // SyncInterval: the program's swap interval is not recorded
      kNa,  // PresentFlags
      kNa,  // AllowsTearing: follows from the present mode, not recorded
      kNa,  // PresentMode
      seconds(diff(f.frame_start, epoch)),
      seconds(diff(f.present_start, epoch)),
      ms(fig(FrameFigure::between_presents)),
      ms(fig(FrameFigure::in_present_api)),
      ms(fig(FrameFigure::cpu_busy)),
      ms(fig(FrameFigure::in_present_api)),  // MsCPUWait: until the next frame starts
      ms(fig(FrameFigure::gpu_latency)),
      ms(fig(FrameFigure::gpu_time)),
      ms(fig(FrameFigure::gpu_busy)),
      ms(fig(FrameFigure::gpu_wait)),
      ms(fig(FrameFigure::until_render_complete)),
      ms(fig(FrameFigure::until_render_complete)),
      ms(diff(shown, f.present_start)),
      ms(fig(FrameFigure::between_displays)),
      ms(diff(shown, f.frame_start)),
      ms(next != nullptr ? next->figures[static_cast<size_t>(FrameFigure::between_displays)]
                         : std::nullopt),
      dropped(f),
  };
}

// One CSV line; a cell with a comma or a quote is quoted (RFC 4180).
std::string csv_line(const std::vector<std::string>& cells) {
  std::string line;
  for (const auto& c : cells) {
    if (&c != &cells[0]) line += ',';
    if (c.find_first_of(",\"") == std::string::npos) {
      line += c;
    } else {
      line += '"';
      for (char ch : c) line += ch == '"' ? std::string("\"\"") : std::string(1, ch);
      line += '"';
    }
  }
  return line;
}

}  // namespace

std::string capture_presentmon_csv(const capture::CaptureRecords& rec) {
  const auto& frames = rec.summary.frames;
  std::string out;
  for (const char* c : kColumns) out += std::string(out.empty() ? "" : ",") + c;
  out += '\n';
  int64_t epoch = kNoTime;  // the capture's first present
  for (const auto& r : frames) {
    if (epoch == kNoTime || r.record.present_start < epoch) epoch = r.record.present_start;
  }
  // Present order across sources and processes, as PresentMon lists them.
  std::vector<size_t> order(frames.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return frames[a].record.present_start < frames[b].record.present_start;
  });
  for (const size_t i : order) out += csv_line(row_cells(rec, i, epoch)) + '\n';
  return out;
}

}  // namespace latlab
