// The result reader: the latency modes (docs/result-schema.md,
// "modes.<mode>"): each mode's workload, GPU time target, warm-up and
// measured blocks with their series, total and present stages.
#include <fmt/format.h>

#include "report/result_fields.hpp"
#include "report/result_sections.hpp"

namespace latlab::reading {
namespace {

// The index of the series named `name` among the first `n`, or n.
size_t series_index(const std::string& name, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (to_string(static_cast<Series>(i)) == name) return i;
  }
  return n;
}

}  // namespace

SeriesDistributions read_series(const Obj& j) {
  SeriesDistributions s{};
  const Obj stages = j.obj("stages");
  if (stages.raw().empty()) fail(stages.path(), "no stage");
  for (auto it = stages.raw().begin(); it != stages.raw().end(); ++it) {
    const Distribution d = distribution_value(it.value(), stages.key_path(it.key()));
    // A stage this version does not know (a newer file's) is read, not kept.
    const size_t i = series_index(it.key(), kStageCount);
    if (i < kStageCount) s[i] = d;
  }
  for (Series x : {Series::core_latency, Series::fence_latency, Series::timer_lateness,
                   Series::clock_map_error}) {
    s[static_cast<size_t>(x)] = j.distribution(to_string(x));
  }
  // The poll observer and its diagnostics: results written before it lack them.
  for (Series x : {Series::poll_latency, Series::gpu_end_to_poll_wake, Series::poll_cpu})
    j.opt(to_string(x), s[static_cast<size_t>(x)]);
  return s;
}

BlockResult read_path_block(const Obj& b) {
  BlockResult r;
  r.series = read_series(b);
  fields::read_fields(b, fields::kBlockFields, r);
  return r;
}

PresentDistributions read_mode_present(const Obj& p, const LatencyRun& run) {
  PresentDistributions out;
  const Obj stages = p.obj("stages");
  for (size_t s = 0; s < kPresentSeriesCount; ++s)
    out.stages[s] = stages.distribution(to_string(static_cast<PresentSeries>(s)));
  const size_t observers = run.present ? run.present->observers.size() : 0;
  out.screen.resize(observers);
  const Obj screen = p.obj("screen");
  for (size_t o = 0; o < observers; ++o) {
    const std::string& name = run.present->observers[o].name;
    if (!screen.has(name)) continue;  // listed, with why, in present.screen_observers
    const Obj series = screen.obj(name);
    for (size_t s = 0; s < kScreenSeriesCount; ++s)
      out.screen[o][s] = series.distribution(to_string(static_cast<ScreenSeries>(s)));
  }
  return out;
}

namespace {

// modes.<name> of a mode that ran: its result and blocks (mode index `mi`).
LatencyModeResult read_mode(const std::string& name, const Obj& m, uint32_t mi, LatencyRun& run) {
  LatencyModeResult out;
  out.name = name;
  out.workload = fields::read_object<FrameWorkload>(m.obj("workload"), fields::kWorkloadFields);
  if (m.has("gpu_target")) {
    if (const std::optional<Obj> g = m.obj_or_null("gpu_target")) {
      GpuTargetCheck& c = out.gpu_target.emplace();
      fields::read_fields(*g, fields::kGpuTargetFields, c);
      if (m.has("off_target") && !m.at("off_target").is_null())
        c.off_target = m.boolean("off_target");
    }
  }
  if (m.has("warmup")) {
    if (const std::optional<Obj> w = m.obj_or_null("warmup")) {
      run.blocks.push_back(read_path_block(*w));
      run.blocks.back().kind = BlockKind::warmup;
      run.blocks.back().mode = mi;
    }
  }
  const json& blocks = m.array("blocks");
  for (size_t i = 0; i < blocks.size(); ++i) {
    run.blocks.push_back(
        read_path_block(Obj(blocks[i], fmt::format("{}.blocks[{}]", m.path(), i))));
    run.blocks.back().mode = mi;
  }
  const Obj total = m.obj("total");
  out.total = read_series(total);
  out.measured_frames = total.u64("frames");
  if (total.has("missing_markers")) {
    out.total_missing = fields::read_object<MissingBreakdown>(total.obj("missing_markers"),
                                                              fields::kMissingMarkerFields);
  }
  total.opt("consumer_behind_frames", out.consumer_behind);
  if (m.has("present")) {
    if (const std::optional<Obj> p = m.obj_or_null("present"))
      out.present = read_mode_present(*p, run);
  }
  return out;
}

// A mode that could not run: only Loaded can be.
void read_unavailable_mode(const std::string& name, const Obj& m, LoadedOutcome& loaded) {
  if (name != "loaded") fail(m.path(), "only loaded can be unavailable (available: false)");
  loaded.asked = true;
  loaded.runs = false;
  loaded.unavailable = m.str_or_empty("reason");
  if (m.has("load_size"))
    loaded.size = fields::read_object<LoadSizeChoice>(m.obj("load_size"), fields::kLoadSizeFields);
}

}  // namespace

void read_modes(const Obj& doc, RunResult& r) {
  LatencyRun& run = *r.latency;
  const Obj modes = doc.obj("modes");
  for (auto it = modes.raw().begin(); it != modes.raw().end(); ++it) {
    if (it.key() == "performance") continue;  // read_outcomes
    const Obj m(it.value(), modes.key_path(it.key()));
    if (!m.boolean("available")) {
      read_unavailable_mode(it.key(), m, r.loaded);
      continue;
    }
    const auto mi = static_cast<uint32_t>(run.modes.size());
    run.modes.push_back(read_mode(it.key(), m, mi, run));
    if (it.key() == "loaded") r.loaded.asked = r.loaded.runs = true;
  }
  if (run.modes.empty()) fail(doc.key_path("modes"), "no latency mode");
  run.total = run.modes[0].total;
  run.total_missing = run.modes[0].total_missing;
  run.consumer_behind = run.modes[0].consumer_behind;
  for (const LatencyModeResult& m : run.modes) {
    run.desc.modes.push_back(LatencyModeDesc{m.name, m.workload, std::nullopt, std::nullopt});
    if (m.gpu_target) run.desc.modes.back().gpu_target = m.gpu_target->target;
  }
}

}  // namespace latlab::reading
