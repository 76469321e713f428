// The result document and the per-frame and per-submission CSVs of a capture (docs/capture.md,
// "The result").
#include <cstdint>
#include <string>

#include "report/capture_report.hpp"
#include "report/result_json.hpp"

namespace latlab {
namespace {

using capture::kNoTime;

std::string t(int64_t v) { return v == kNoTime ? std::string() : std::to_string(v); }

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

}  // namespace

std::string capture_result_text(const RunResult& result) {
  return run_result_to_json(result).dump(2) + "\n";
}

std::string capture_frames_csv(const capture::CaptureRecords& records) {
  const capture::CaptureSummary& s = records.summary;
  const capture::ScreenSummary& sc = records.screen;
  std::string out =
      "pid,source,frame,swapchain,frame_start_ns,present_start_ns,present_end_ns,gpu_begin_ns,"
      "gpu_end_ns,present_complete_ns,submits,gpu_spans_missing,present_result";
  // gpu_busy_ns and acquire_wait_ns are figures below (each once, with the
  // figure's conditions), not raw columns.
  for (size_t i = 0; i < capture::kFrameFigureCount; ++i)
    out += std::string(",") + capture::to_string(static_cast<capture::FrameFigure>(i)) + "_ns";
  out += ",no_complete,screen_updated_ns,screen_server_ms";
  out += ",complete_method,displayed,refresh_ns,display_seq,display_flags\n";
  for (size_t k = 0; k < s.frames.size(); ++k) {
    const auto& row = s.frames[k];
    const auto& f = row.record;
    out += std::to_string(row.pid) + ',' + std::to_string(f.head.source) + ',' +
           std::to_string(f.frame) + ',' + std::to_string(f.swapchain) + ',' + t(f.frame_start) +
           ',' + t(f.present_start) + ',' + t(f.present_end) + ',' + t(f.gpu_begin) + ',' +
           t(f.gpu_end) + ',' + t(f.present_complete) + ',' + std::to_string(f.submits) + ',' +
           std::to_string(f.gpu_spans_missing) + ',' + std::to_string(f.present_result);
    for (const auto& v : row.figures) out += ',' + (v ? std::to_string(*v) : std::string());
    const auto& seen = sc.per_frame[k];
    out += ',' + std::to_string(static_cast<uint32_t>(f.no_complete)) + ',' +
           (seen ? std::to_string(seen->host_ns) + ',' + std::to_string(seen->server_ms) : ",");
    out += display_cells(f);
    out += '\n';
  }
  return out;
}

std::string capture_submits_csv(const capture::CaptureRecords& records) {
  std::string out =
      "pid,source,frame,queue_family,cpu_start_ns,cpu_end_ns,gpu_begin_ns,gpu_end_ns,"
      "layer_cpu_ns,batches,command_buffers,no_span,result\n";
  for (const auto& r : records.stream.submits()) {
    out += std::to_string(r.head.pid) + ',' + std::to_string(r.head.source) + ',' +
           std::to_string(r.frame) + ',' + std::to_string(r.queue_family) + ',' + t(r.cpu_start) +
           ',' + t(r.cpu_end) + ',' + t(r.gpu_begin) + ',' + t(r.gpu_end) + ',' +
           std::to_string(r.source_cpu_ns) + ',' + std::to_string(r.batches) + ',' +
           std::to_string(r.command_buffers) + ',' +
           std::to_string(static_cast<uint32_t>(r.no_span)) + ',' + std::to_string(r.result) + '\n';
  }
  return out;
}

}  // namespace latlab
