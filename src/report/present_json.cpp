#include <fmt/format.h>

#include <iterator>

#include "report/present_report.hpp"
#include "report/result_fields.hpp"
#include "report/result_json.hpp"

namespace latlab {

using json = nlohmann::ordered_json;

json present_to_json(const LatencyRun& run) {
  return run.present ? fields::write_object(run, fields::kPresentFields) : json(nullptr);
}

json mode_present_to_json(const LatencyRun& run, const LatencyModeResult& mode) {
  if (!run.present) return nullptr;
  json j;
  json stages;
  for (size_t s = 0; s < kPresentSeriesCount; ++s)
    stages[std::string(to_string(static_cast<PresentSeries>(s)))] =
        distribution_to_json(mode.present.stages[s]);
  j["stages"] = stages;
  json screen = json::object();
  for (size_t o = 0; o < run.present->observers.size() && o < mode.present.screen.size(); ++o) {
    const ScreenObserverInfo& info = run.present->observers[o];
    if (!info.available) continue;  // listed, with why, in present.screen_observers
    json series;
    for (size_t s = 0; s < kScreenSeriesCount; ++s)
      series[std::string(to_string(static_cast<ScreenSeries>(s)))] =
          distribution_to_json(mode.present.screen[o][s]);
    screen[info.name] = series;
  }
  j["screen"] = screen;
  return j;
}

void append_present_csv_header(std::string& out, const LatencyRun& run) {
  if (!run.present) return;
  out += ",present_start_ns,present_end_ns,present_complete_ns";
  for (const ScreenObserverInfo& o : run.present->observers) out += ",screen_" + o.name + "_ns";
  for (size_t s = 0; s < kPresentSeriesCount; ++s)
    fmt::format_to(std::back_inserter(out), ",{}_ns", to_string(static_cast<PresentSeries>(s)));
  for (const ScreenObserverInfo& o : run.present->observers) {
    for (size_t s = 0; s < kScreenSeriesCount; ++s)
      fmt::format_to(std::back_inserter(out), ",{}_{}_ns", to_string(static_cast<ScreenSeries>(s)),
                     o.name);
  }
}

void append_present_csv_row(std::string& out, const LatencyRun& run, uint64_t i) {
  if (!run.present || i >= run.present_frames.size()) return;
  const PresentRecord& p = run.present_frames[i];
  const FrameRecord& f = run.frames[i];
  auto it = std::back_inserter(out);
  const auto cell = [&](bool has, int64_t v) {
    if (has) {
      fmt::format_to(it, ",{}", v);
    } else {
      out += ',';
    }
  };
  cell(p.has(PresentRecord::kStart), p.present_start_ns);
  cell(p.has(PresentRecord::kEnd), p.present_end_ns);
  cell(p.has(PresentRecord::kComplete), p.present_complete_ns);
  const size_t n = run.present->observers.size();
  for (size_t o = 0; o < n; ++o)
    cell(o < kMaxScreenObservers && p.has_screen(o), o < kMaxScreenObservers ? p.screen_ns[o] : 0);
  for (size_t s = 0; s < kPresentSeriesCount; ++s) {
    const auto v = present_value_ns(f, p, static_cast<PresentSeries>(s));
    cell(v.has_value(), v.value_or(0));
  }
  for (size_t o = 0; o < n; ++o) {
    for (size_t s = 0; s < kScreenSeriesCount; ++s) {
      const auto v = screen_value_ns(f, p, o, static_cast<ScreenSeries>(s));
      cell(v.has_value(), v.value_or(0));
    }
  }
}

void append_present_table(std::string& out, const LatencyRun& run) {
  if (!run.present) return;
  auto it = std::back_inserter(out);
  const PresentInfo& p = *run.present;
  fmt::format_to(it, "present path: {} mode, {}\n", p.present_mode, p.surface);
  for (const LatencyModeResult& m : run.modes) {
    const auto row = [&](const std::string& name, const Distribution& d) {
      if (d.empty()) {
        fmt::format_to(it, "  {:<40} {:>7} {:>7}   (no samples)\n", name, d.count, d.missing);
        return;
      }
      fmt::format_to(it, "  {:<40} {:>7} {:>7} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f}\n", name,
                     d.count, d.missing, d.mean, d.p50, d.p99, d.max);
    };
    fmt::format_to(it, "  {:<40} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9}\n",
                   run.modes.size() > 1 ? m.name + ", us" : std::string("us"), "count", "missing",
                   "mean", "p50", "p99", "max");
    for (size_t s = 0; s < kPresentSeriesCount; ++s)
      row(std::string(to_string(static_cast<PresentSeries>(s))), m.present.stages[s]);
    for (size_t o = 0; o < p.observers.size() && o < m.present.screen.size(); ++o) {
      if (!p.observers[o].available) continue;
      for (size_t s = 0; s < kScreenSeriesCount; ++s)
        row(fmt::format("{} [{}]", to_string(static_cast<ScreenSeries>(s)), p.observers[o].name),
            m.present.screen[o][s]);
    }
  }
  for (const ScreenObserverInfo& o : p.observers) {
    if (!o.available || o.poll_period_ns <= 0) continue;
    fmt::format_to(it,
                   "  screen observer {}: polled every {:.0f} us, {} polls ({} unreadable), {} "
                   "frames seen, error <= {:.0f} us (p50 {:.0f} us), {:.2f}% of a core\n",
                   o.name, static_cast<double>(o.poll_period_ns) / 1e3, o.polls, o.unreadable_polls,
                   o.frames_seen, static_cast<double>(o.error_bound_ns) / 1e3,
                   static_cast<double>(o.error_p50_ns) / 1e3,
                   o.wall_ns > 0
                       ? 100.0 * static_cast<double>(o.cpu_ns) / static_cast<double>(o.wall_ns)
                       : 0.0);
  }
  if (run.present_errors > 0)
    fmt::format_to(it, "  present failed on {} frames (first: {})\n", run.present_errors,
                   run.present_first_error);
}

}  // namespace latlab
