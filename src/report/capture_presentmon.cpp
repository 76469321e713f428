// The PresentMon-compatible CSV of a capture (--presentmon-csv): one row per
// frame in present order, PresentMon 2.x's column names, times in ms
// (TimeInSeconds and CPUStartTime in s from the capture's first present),
// "NA" where latlab has no value. docs/capture.md maps every column.
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "capture/capture_pipeline.hpp"
#include "report/capture_csv_writers.hpp"
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

// A frame's present_complete, when it was measured.
int64_t displayed_at(const capture::CaptureFrameRow& r) {
  return r.record.no_complete == capture::NoComplete::none ? r.record.present_complete : kNoTime;
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

// PresentMon 1.x's Dropped: 1 for a frame the compositor discarded, 0 for
// one displayed, NA where the source cannot tell.
std::string dropped(const capture::FrameRecord& f) {
  const auto shown = capture::displayed(f);
  return shown ? (*shown ? "0" : "1") : kNa;
}

// A frame's cells, one per kColumns entry and in its order; `epoch` is
// time 0.
std::vector<std::string> row_cells(const capture::CaptureRecords& rec,
                                   const capture::FrameRowView& v, int64_t epoch) {
  const auto& r = v.row;
  const auto& f = r.record;
  auto fig = [&](FrameFigure x) { return r.figures[static_cast<size_t>(x)]; };
  // DisplayedTime: until the next display time (between display times only).
  const bool on_screen = capture::displayed(f).value_or(false);
  const capture::CaptureFrameRow* next = on_screen ? v.next_shown : nullptr;
  const int64_t shown = displayed_at(r);
  const capture::CapturedSource* src = source_of(rec, r);
  const std::string swapchain = swapchain_handle(f.swapchain);
  return {
      rec.process_name(r.pid),
      std::to_string(r.pid),
      swapchain,
      runtime_of(src),
      kNa,  // SyncInterval: the program's swap interval is not recorded
      kNa,  // PresentFlags
      kNa,  // AllowsTearing: follows from the present mode, not recorded
      kNa,  // PresentMode
      seconds(capture::time_diff(f.frame_start, epoch)),
      seconds(capture::time_diff(f.present_start, epoch)),
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
      ms(capture::time_diff(shown, f.present_start)),
      ms(fig(FrameFigure::between_displays)),
      ms(capture::time_diff(shown, f.frame_start)),
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

std::string presentmon_header() {
  std::string out;
  for (const char* c : kColumns) out += std::string(out.empty() ? "" : ",") + c;
  return out + '\n';
}

}  // namespace

PresentmonCsvWriter::PresentmonCsvWriter() : CaptureCsvWriter(presentmon_header()) {}

// Rows come in present order: the first is the capture's first present.
void PresentmonCsvWriter::frame(const capture::FrameRowView& v,
                                const capture::CaptureRecords& context) {
  if (epoch_ == kNoTime) epoch_ = v.row.record.present_start;
  write(csv_line(row_cells(context, v, epoch_)) + '\n');
}

std::string capture_presentmon_csv(const capture::CaptureRecords& records) {
  PresentmonCsvWriter w;
  capture::replay_rows(records, w);
  return w.text();
}

}  // namespace latlab
