// The result document and the per-frame and per-submission CSVs of a capture (docs/capture.md,
// "The result").
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "capture/capture_pipeline.hpp"
#include "report/capture_csv_writers.hpp"
#include "report/capture_report.hpp"
#include "report/result_json.hpp"

namespace latlab {
namespace {

using capture::kNoTime;

std::string t(int64_t v) { return v == kNoTime ? std::string() : std::to_string(v); }

// The source's index in the result's `sources`; empty before its hello.
std::string source_index(const capture::CaptureRecords& rec, uint32_t pid, uint64_t source) {
  const auto i = rec.source_index(pid, source);
  return i ? std::to_string(*i) : std::string();
}

// How present_complete was learnt, whether the frame was displayed (1, 0:
// discarded, empty: not known) and the compositor's display report.
std::string display_cells(const capture::FrameRecord& f) {
  const auto shown = capture::displayed(f);
  const bool reported = f.complete_method == capture::PresentMethod::wp_presentation &&
                        f.no_complete == capture::NoComplete::none;
  return std::string(",") + capture::present_method_name(f.complete_method) + ',' +
         (shown ? (*shown ? "1" : "0") : "") + ',' + t(f.refresh_ns) + ',' +
         (reported ? std::to_string(f.display_seq) + ',' + std::to_string(f.display_flags) : ",");
}

std::string frames_header() {
  std::string out =
      "pid,source,frame,swapchain,swapchain_handle,frame_start_ns,present_start_ns,present_end_ns,"
      "gpu_begin_ns,"
      "gpu_end_ns,present_complete_ns,submits,gpu_spans_missing,present_result";
  // gpu_busy_ns and acquire_wait_ns are figures below (each once, with the
  // figure's conditions), not raw columns.
  for (size_t i = 0; i < capture::kFrameFigureCount; ++i)
    out += std::string(",") + capture::to_string(static_cast<capture::FrameFigure>(i)) + "_ns";
  return out +
         ",no_complete,screen_updated_ns,screen_server_ms,complete_method,displayed,refresh_ns,"
         "display_seq,display_flags\n";
}

}  // namespace

std::string swapchain_handle(uint64_t handle) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%016" PRIX64, handle);
  return text;
}

Result<void> CaptureCsvWriter::open(const std::string& path) {
  if (Result<void> r = file_.open(path); !r) return r;
  open_ = true;
  write(std::exchange(text_, {}));
  return status_;
}

void CaptureCsvWriter::write(std::string_view line) {
  if (!open_) {
    text_ += line;
    return;
  }
  if (!status_) return;  // the first failure is what commit() says
  status_ = file_.write(line);
}

Result<void> CaptureCsvWriter::commit() {
  if (!status_) {
    file_.abandon();
    return status_;
  }
  return file_.commit();
}

FramesCsvWriter::FramesCsvWriter() : CaptureCsvWriter(frames_header()) {}

uint64_t FramesCsvWriter::swapchain_number(uint64_t source_index, uint64_t handle) {
  uint64_t n = 0;
  for (const auto& [src, h] : swapchains_) {
    if (src != source_index) continue;
    if (h == handle) return n;
    ++n;
  }
  swapchains_.emplace_back(source_index, handle);
  return n;
}

void FramesCsvWriter::frame(const capture::FrameRowView& v, const capture::CaptureRecords& rec) {
  const auto& row = v.row;
  const auto& f = row.record;
  const std::optional<size_t> index = rec.source_index(row.pid, f.head.source);
  const std::string handle = swapchain_handle(f.swapchain);
  const std::string src = index ? std::to_string(*index) : std::string();
  const std::string swapchain =
      index ? std::to_string(swapchain_number(*index, f.swapchain)) : std::string();
  std::string out = std::to_string(row.pid) + ',' + src + ',' + std::to_string(f.frame) + ',' +
                    swapchain + ',' + handle + ',' + t(f.frame_start) + ',' + t(f.present_start) +
                    ',' + t(f.present_end) + ',' + t(f.gpu_begin) + ',' + t(f.gpu_end) + ',' +
                    t(f.present_complete) + ',' + std::to_string(f.submits) + ',' +
                    std::to_string(f.gpu_spans_missing) + ',' + std::to_string(f.present_result);
  for (const auto& x : row.figures) out += ',' + (x ? std::to_string(*x) : std::string());
  const auto& seen = row.screen;
  out += ',' + std::to_string(static_cast<uint32_t>(f.no_complete)) + ',' +
         (seen ? std::to_string(seen->host_ns) + ',' + std::to_string(seen->server_ms) : ",");
  write(out + display_cells(f) + '\n');
}

SubmitsCsvWriter::SubmitsCsvWriter()
    : CaptureCsvWriter(
          "pid,source,frame,queue_family,cpu_start_ns,cpu_end_ns,gpu_begin_ns,gpu_end_ns,"
          "layer_cpu_ns,batches,command_buffers,no_span,result\n") {}

void SubmitsCsvWriter::submit(const capture::SubmitRecord& r, const capture::CaptureRecords& rec) {
  write(std::to_string(r.head.pid) + ',' + source_index(rec, r.head.pid, r.head.source) + ',' +
        std::to_string(r.frame) + ',' + std::to_string(r.queue_family) + ',' + t(r.cpu_start) +
        ',' + t(r.cpu_end) + ',' + t(r.gpu_begin) + ',' + t(r.gpu_end) + ',' +
        std::to_string(r.source_cpu_ns) + ',' + std::to_string(r.batches) + ',' +
        std::to_string(r.command_buffers) + ',' + std::to_string(static_cast<uint32_t>(r.no_span)) +
        ',' + std::to_string(r.result) + '\n');
}

std::string capture_result_text(const RunResult& result) {
  return run_result_to_json(result).dump(2) + "\n";
}

std::string capture_frames_csv(const capture::CaptureRecords& records) {
  FramesCsvWriter w;
  capture::replay_rows(records, w);
  return w.text();
}

std::string capture_submits_csv(const capture::CaptureRecords& records) {
  SubmitsCsvWriter w;
  capture::replay_rows(records, w);
  return w.text();
}

}  // namespace latlab
