#include "report/capture_input_report.hpp"

#include <cinttypes>
#include <cstdio>
#include <string>

namespace latlab {
namespace {

std::string cell(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string(); }

}  // namespace

InputsCsvWriter::InputsCsvWriter()
    : CaptureCsvWriter(
          "input,scheduled_ns,woke_ns,sent_ns,seen_ns,seen_server_ms,pid,source,swapchain_handle,"
          "frame,"
          "frame_start_ns,present_start_ns,present_end_ns,gpu_end_ns,present_complete_ns,"
          "screen_updated_ns,reaction_ns,no_frame,no_reaction\n") {}

void InputsCsvWriter::input(const capture::InputRow& row, bool reaction) {
  const capture::InputMarker& m = row.marker;
  std::string out = std::to_string(m.id) + ',' + std::to_string(m.scheduled) + ',' +
                    std::to_string(m.woke) + ',' + std::to_string(m.sent) + ',';
  if (row.seen) {
    out += std::to_string(row.seen->host_ns) + ',' + std::to_string(row.seen->server_ms) + ',';
  } else {
    out += ",,";
  }
  if (row.frame) {
    const capture::InputFrame& f = *row.frame;
    out += std::to_string(f.pid) + ',' + (f.source_index ? std::to_string(*f.source_index) : "") +
           ',' + swapchain_handle(f.swapchain) + ',' + std::to_string(f.frame) + ',' +
           std::to_string(f.frame_start) + ',' + std::to_string(f.present_start) + ',' +
           std::to_string(f.present_end) + ',' + cell(f.gpu_end) + ',' + cell(f.present_complete) +
           ',' + cell(f.screen_updated) + ',';
  } else {
    out += ",,,,,,,,,,";
  }
  out += (reaction ? cell(row.reaction) : std::string()) + ',' + row.no_frame + ',' +
         row.no_reaction + '\n';
  write(out);
}

void print_capture_input(std::FILE* out, const CaptureInput& in) {
  std::fprintf(out,
               "latlab capture: input %s: %" PRIu64 " sent (%" PRIu64 " seen by XInput2), %" PRIu64
               " assigned to a frame",
               in.spec.c_str(), in.sent, in.seen, in.assigned);
  for (const auto& [why, n] : in.not_assigned)
    std::fprintf(out, ", %" PRIu64 " %s", n, why.c_str());
  if (in.reaction) std::fprintf(out, "; %" PRIu64 " reactions", in.reactions);
  std::fprintf(out, "\n");
  const Distribution& late = in.injector_lateness;
  if (!late.empty())
    std::fprintf(out, "latlab capture:   injector lateness p50 %.1f us, p99 %.1f us, max %.1f us\n",
                 late.p50, late.p99, late.max);
  for (const auto& [name, d] : in.figures) {
    if (d.empty()) continue;
    std::fprintf(out, "latlab capture:   %s p50 %.1f us, p90 %.1f us, p99 %.1f us (%" PRIu64 ")\n",
                 name.c_str(), d.p50, d.p90, d.p99, d.count);
  }
}

}  // namespace latlab
