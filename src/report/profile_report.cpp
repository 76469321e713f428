// `latlab profile`'s output shared by its backends (profile_report.hpp).
#include "report/profile_report.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "report/profile_json.hpp"

namespace latlab {

nlohmann::json profile_stats_json(const std::vector<ZoneStat>& stats) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : stats) {
    // A zone with no timed frame has no statistics: null, never 0.
    const bool has = s.frames > 0;
    auto stat = [has](double v) { return has ? nlohmann::json(v) : nlohmann::json(nullptr); };
    out.push_back({{"zone", s.name},
                   {"frames", s.frames},
                   {"frames_missing", s.frames_missing},
                   {"calls_per_frame", stat(s.calls_per_frame)},
                   {"avg_ms", stat(s.avg_ms)},
                   {"min_ms", stat(s.min_ms)},
                   {"max_ms", stat(s.max_ms)},
                   {"p95_ms", stat(s.p95_ms)},
                   {"missing", s.missing}});
  }
  return out;
}

nlohmann::json profile_counters_json(const ProfilerCounters& counters) {
  return {{"frames_collected", counters.frames_collected},
          {"zones_ok", counters.zones_ok},
          {"zones_dropped", counters.zones_dropped},
          {"zones_invalid", counters.zones_invalid},
          {"zones_overlapped", counters.zones_overlapped},
          {"frames_without_queries", counters.frames_without_queries}};
}

nlohmann::json profile_clock_fit_json(const std::shared_ptr<const ClockFit>& fit) {
  if (!fit) return nlohmann::json();
  return {{"pairs_used", fit->pairs_used},
          {"drift_ppm", fit->drift_ppm()},
          {"base_error_ns", fit->base_error_ns},
          {"estimated", fit->estimated}};
}

void print_newest_frame_tree(const GpuProfiler& prof, const std::string& queue_name) {
  const auto last = prof.latest_frame();
  for (uint64_t id = last ? last->frame_id + 1 : 0; id-- > 0;) {
    const auto f = prof.frame(id);
    if (!f) break;
    if (f->zones.empty()) continue;
    fmt::print("{}\n", format_frame_tree(queue_name, *f));
    break;
  }
}

nlohmann::json profile_trace_json(const std::string& path, const ChromeTraceWriter& trace,
                                  bool written, bool partial) {
  return {{"path", path},
          {"spans", trace.span_count()},
          {"gpu_zones_unmapped", trace.gpu_zones_unmapped()},
          {"spans_late", trace.spans_late()},
          {"written", written},
          {"partial", partial}};
}

void print_host_mapping_line(const std::string& mapping,
                             const std::shared_ptr<const ClockFit>& fit) {
  fmt::print("  host mapping: {}", mapping);
  if (fit) {
    fmt::print(" ({} pairs, drift {:.3f} ppm, error at the anchor {} ns)", fit->pairs_used,
               fit->drift_ppm(), fit->base_error_ns);
  }
  fmt::print("\n\n");
}

void print_counters_line(const ProfilerCounters& c) {
  fmt::print(
      "frames collected {}, zones with a time {}, dropped {}, invalid {}, {}frames without queries "
      "{}\n",
      c.frames_collected, c.zones_ok, c.zones_dropped, c.zones_invalid,
      c.zones_overlapped > 0 ? fmt::format("overlapped (not timed) {}, ", c.zones_overlapped) : "",
      c.frames_without_queries);
}

void print_trace_line(const std::string& path, const ChromeTraceWriter& trace, bool written,
                      bool partial) {
  if (path.empty() || !written) return;
  fmt::print(
      "trace: {}{} ({} spans; open in ui.perfetto.dev or chrome://tracing){}\n", path,
      partial ? " (partial)" : "", trace.span_count(),
      trace.gpu_zones_unmapped() > 0
          ? fmt::format("; {} GPU zones left out: no host mapping", trace.gpu_zones_unmapped())
          : "");
}

void warn_untimed_zones(const ProfilerCounters& c, uint64_t expected) {
  if (c.zones_ok == expected) return;
  std::fprintf(stderr,
               "latlab profile: %llu of %llu zones have a time (dropped %llu, invalid %llu, "
               "overlapped %llu)\n",
               static_cast<unsigned long long>(c.zones_ok),
               static_cast<unsigned long long>(expected),
               static_cast<unsigned long long>(c.zones_dropped),
               static_cast<unsigned long long>(c.zones_invalid),
               static_cast<unsigned long long>(c.zones_overlapped));
}

bool open_trace_file(const std::string& path, ChromeTraceWriter& trace) {
  if (path.empty()) return true;
  if (auto o = trace.open(path); !o) {
    std::fprintf(stderr, "latlab profile: %s\n", o.error().message.c_str());
    return false;
  }
  return true;
}

bool close_trace_file(ChromeTraceWriter& trace, const std::string& partial_reason) {
  if (!trace.is_open()) return true;
  auto w = partial_reason.empty() ? trace.close() : trace.close_partial(partial_reason);
  if (!w) {
    std::fprintf(stderr, "latlab profile: %s\n", w.error().message.c_str());
    return false;
  }
  return true;
}

}  // namespace latlab
