#include "report/result_model.hpp"

#include <string>
#include <utility>

#include "report/json_parts.hpp"

namespace latlab {
namespace {

// As the reader gives it back: statistics of an empty distribution are null
// in the JSON, so 0 in the model.
Distribution as_read(const Distribution& d) {
  if (!d.empty()) return d;
  Distribution e;
  e.count = d.count;
  e.missing = d.missing;
  return e;
}

// The series the document holds, in its order: the stages, then the
// observers and diagnostics the reader takes.
ReadSeries series_model(const SeriesDistributions& s) {
  ReadSeries out;
  for (size_t i = 0; i < kStageCount; ++i) {
    out.series.emplace_back(std::string(to_string(static_cast<Series>(i))), as_read(s[i]));
  }
  for (Series x : {Series::core_latency, Series::fence_latency, Series::timer_lateness,
                   Series::clock_map_error, Series::poll_latency, Series::gpu_end_to_poll_wake,
                   Series::poll_cpu}) {
    out.series.emplace_back(std::string(to_string(x)), as_read(s[static_cast<size_t>(x)]));
  }
  return out;
}

// run.modes, or (a run built by hand, without modes) one "baseline" mode
// from the run's totals, as the JSON reporter writes them.
std::vector<LatencyModeResult> modes_of(const LatencyRun& run) {
  if (!run.modes.empty()) return run.modes;
  LatencyModeResult m;
  m.name = "baseline";
  m.workload = run.desc.workload;
  m.measured_frames = run.measured_frames_run();
  m.total = run.total;
  return {m};
}

ReadMode mode_model(const LatencyRun& run, uint32_t mi, const LatencyModeResult& mr) {
  ReadMode m;
  m.name = mr.name;
  m.available = true;
  const FrameWorkload& w = mr.workload;
  m.workload = ReadWorkload{w.passes, w.complexity, w.width, w.height, form_name(w.form)};
  for (const BlockResult& b : run.blocks) {
    if (b.mode != mi || b.kind != BlockKind::measured) continue;
    m.blocks.push_back(ReadBlock{b.index, b.order, b.frames_run, series_model(b.series)});
  }
  m.total = series_model(mr.total);
  m.total_frames = mr.measured_frames;
  return m;
}

std::vector<ReadMode> modes_model(const RunResult& r) {
  std::vector<ReadMode> modes;
  const std::vector<LatencyModeResult> run_modes = modes_of(*r.latency);
  for (uint32_t mi = 0; mi < run_modes.size(); ++mi) {
    modes.push_back(mode_model(*r.latency, mi, run_modes[mi]));
  }
  if (r.loaded.asked && !r.loaded.runs) {
    ReadMode m;
    m.name = "loaded";
    m.reason = r.loaded.unavailable;
    modes.push_back(std::move(m));
  }
  return modes;
}

ReadDeviceSection section_model(const DeviceSectionResult& s) {
  ReadDeviceSection d;
  d.section = s.head.section;
  d.backend = s.head.backend;
  d.selector = s.head.selector;
  d.name = s.head.name;
  if (s.head.physical_device) d.physical_device = *s.head.physical_device;
  d.status = s.status;
  d.failure = s.failure;
  if (s.result.empty()) return d;
  const RunResult& one = s.result.front();
  d.has_result = true;
  d.device = ReadDevice{one.device.backend, one.device.name, one.device.driver};
  d.partial = one.partial();
  d.partial_reason = one.partial_reason();
  d.modes = modes_model(one);
  return d;
}

}  // namespace

ReadResult result_model(const RunResult& r, const nlohmann::ordered_json& doc) {
  if (!r.sections.empty()) {
    ReadResult m = result_model(r.sections.at(*r.top_section).result.at(0), doc);
    for (const DeviceSectionResult& s : r.sections) m.device_sections.push_back(section_model(s));
    m.top_level_section = r.top_section;
    return m;
  }
  ReadResult m;
  m.schema_version = kResultSchemaVersion;
  m.kind = r.latency ? "latency_run" : "performance_run";
  m.tool_version = r.meta.tool_version;
  m.created_utc = r.meta.created_utc;
  m.command_line = r.meta.command_line;
  m.partial = r.partial();
  m.partial_reason = r.partial_reason();
  m.machine = r.meta.machine;
  const DeviceInfo& di = r.latency ? r.latency->device : r.device;
  m.device = ReadDevice{di.backend, di.name, di.driver};
  m.settings_mode = r.meta.mode;
  m.settings_backend = r.meta.backend;
  if (r.latency) {
    m.seed = r.latency->desc.schedule.seed;
    m.frames = r.latency->desc.frames;
    m.blocks = r.latency->desc.blocks;
    m.modes = modes_model(r);
  }
  m.settings_json = doc.at("settings").dump();
  m.text = doc.dump(2) + "\n";
  return m;
}

}  // namespace latlab
