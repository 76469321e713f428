#include "trace_events.hpp"

#include <cinttypes>
#include <cstdio>

namespace latlab::trace_events {

void append_escaped(std::string& out, std::string_view s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

void append_us(std::string& out, int64_t ns) {
  char buf[40];
  const bool neg = ns < 0;
  const uint64_t a = neg ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%03" PRIu64, neg ? "-" : "", a / 1000, a % 1000);
  out += buf;
}

void append_span_event(std::string& out, char ph, int pid, int tid, bool gpu, std::string_view name,
                       int64_t begin_ns, int64_t end_ns, int64_t frame_id, const ZoneSite* site) {
  out += ",\n{\"ph\":\"";
  out += ph;
  out += "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
  append_us(out, ph == 'B' ? begin_ns : end_ns);
  out += ",\"name\":";
  append_escaped(out, name);
  if (ph == 'B') {
    out += ",\"cat\":\"";
    out += gpu ? "gpu" : "cpu";
    out += '"';
    if (frame_id >= 0) {
      out += ",\"args\":{\"frame\":" + std::to_string(frame_id) +
             ",\"duration_ns\":" + std::to_string(end_ns - begin_ns);
      if (site != nullptr) {
        out += ",\"function\":";
        append_escaped(out, site->function != nullptr ? site->function : "");
        out += ",\"file\":";
        append_escaped(out, site->file != nullptr ? site->file : "");
        out += ",\"line\":" + std::to_string(site->line);
      }
      out += '}';
    }
  }
  out += '}';
}

void append_lane_meta(std::string& out, int pid, int tid, std::string_view name,
                      int64_t sort_index) {
  out += ",\n{\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
         ",\"name\":\"thread_name\",\"args\":{\"name\":";
  append_escaped(out, name);
  out += "}},\n{\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
         ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" + std::to_string(sort_index) +
         "}}";
}

void append_cpu_process_meta(std::string& out) {
  out +=
      "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"CPU\"}},\n";
  out +=
      "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":"
      "1}}";
}

void append_gpu_process_meta(std::string& out, uint32_t g, std::string_view name) {
  const std::string pid = std::to_string(kGpuPid + static_cast<int>(g));
  out += ",\n{\"ph\":\"M\",\"pid\":" + pid +
         ",\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":";
  append_escaped(out, name);
  out += "}},\n{\"ph\":\"M\",\"pid\":" + pid +
         ",\"tid\":0,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":" + pid + "}}";
}

}  // namespace latlab::trace_events
