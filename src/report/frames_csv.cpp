#include <fmt/format.h>

#include <iterator>
#include <string>

#include "core/output_file.hpp"
#include "latlab/bench/latency_report.hpp"
#include "report/present_report.hpp"

namespace latlab {

namespace {

void append_header(std::string& buf, const LatencyRun& run) {
  auto out = std::back_inserter(buf);
  buf += "frame_id,block_kind,block_index";
  for (size_t m = 0; m < kMarkerCount; ++m) {
    const auto marker = static_cast<Marker>(m);
    if (marker == Marker::gpu_begin || marker == Marker::gpu_end) {
      fmt::format_to(out, ",{}_ticks", to_string(marker));
    } else {
      fmt::format_to(out, ",{}_ns", to_string(marker));
    }
  }
  buf += ",map_error_ns,gpu_status,fence_status,poll_status,consumer_behind,device_error";
  for (size_t s = 0; s < kSeriesCount; ++s)
    fmt::format_to(out, ",{}_ns", to_string(static_cast<Series>(s)));
  buf += ",bookkeeping_overlap_ns,mode";
  append_present_csv_header(buf, run);
  buf += '\n';
}

// The markers as recorded: GPU ticks raw, host times in ns; empty if absent.
void append_markers(std::string& buf, const FrameRecord& r) {
  auto out = std::back_inserter(buf);
  for (size_t m = 0; m < kMarkerCount; ++m) {
    const auto marker = static_cast<Marker>(m);
    if (!r.has(marker)) {
      buf += ',';
    } else if (marker == Marker::gpu_begin) {
      fmt::format_to(out, ",{}", r.gpu_begin_ticks);
    } else if (marker == Marker::gpu_end) {
      fmt::format_to(out, ",{}", r.gpu_end_ticks);
    } else {
      fmt::format_to(out, ",{}", r.host_ns(marker));
    }
  }
}

// Frame `i` of block `b`.
void append_row(std::string& buf, const LatencyRun& run, const BlockResult& b, uint64_t i) {
  auto out = std::back_inserter(buf);
  const uint64_t id = b.first_device_frame + i;
  const FrameRecord& r = run.frames[b.first_frame + i];
  fmt::format_to(out, "{},{},{}", id, to_string(b.kind), b.index);
  append_markers(buf, r);
  if (r.has(Marker::gpu_end_host)) {
    fmt::format_to(out, ",{}", r.map_error_ns);
  } else {
    buf += ',';
  }
  fmt::format_to(out, ",{},{},{},{},{}", to_string(r.gpu_status), to_string(r.fence_status),
                 to_string(r.poll_status), (r.flags & kFrameConsumerBehind) ? 1 : 0,
                 (r.flags & kFrameDeviceError) ? 1 : 0);
  for (size_t s = 0; s < kSeriesCount; ++s) {
    if (const auto v = series_value_ns(r, static_cast<Series>(s), run.device.ticks)) {
      fmt::format_to(out, ",{}", *v);
    } else {
      buf += ',';
    }
  }
  // latlab's own work inside the frame's path: empty without spans.
  if (const auto o = bookkeeping_overlap_ns(r, run.bookkeeping); o && !run.bookkeeping.empty()) {
    fmt::format_to(out, ",{}", *o);
  } else {
    buf += ',';
  }
  buf += ',';
  buf += b.mode < run.modes.size() ? run.modes[b.mode].name : std::string("baseline");
  append_present_csv_row(buf, run, b.first_frame + i);
  buf += '\n';
}

}  // namespace

Result<void> write_frames_csv(const std::string& path, const LatencyRun& run) {
  OutputFile f;
  if (Result<void> r = f.open(path); !r) return r;

  std::string buf;
  buf.reserve(1 << 16);
  append_header(buf, run);
  for (const BlockResult& b : run.blocks) {
    if (b.kind != BlockKind::warmup && b.kind != BlockKind::measured) continue;
    for (uint64_t i = 0; i < b.frames_run; ++i) {
      append_row(buf, run, b, i);
      if (buf.size() > (1 << 15)) {
        if (Result<void> w = f.write(buf); !w) return w;
        buf.clear();
      }
    }
  }
  if (Result<void> w = f.write(buf); !w) return w;
  return f.commit();
}

}  // namespace latlab
