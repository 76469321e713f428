// The result reader: the latency modes (docs/result-schema.md,
// "modes.<mode>"): each mode's workload, GPU time target, warm-up and
// measured blocks with their series, total and present stages.
#include <fmt/format.h>

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

MissingBreakdown read_missing(const Obj& m) {
  MissingBreakdown out;
  m.opt("gpu_timestamps_not_ok", out.gpu_not_ok);
  m.opt("gpu_timestamps_unmapped", out.gpu_unmapped);
  m.opt("fence_not_ok", out.fence_not_ok);
  m.opt("poll_limit", out.poll_limit);
  m.opt("poll_not_ok", out.poll_not_ok);
  m.opt("device_error", out.device_error);
  if (!m.has("gpu_status_counts")) return out;
  const Obj by = m.obj("gpu_status_counts");
  for (size_t i = 0; i < kQueryStatusCount; ++i)
    by.opt(to_string(static_cast<QueryStatus>(i)), out.gpu_status_counts[i]);
  return out;
}

BlockResult read_path_block(const Obj& b) {
  BlockResult r;
  r.index = b.u32("index");
  r.order = b.u32("order");
  r.frames_run = b.u64("frames_run");
  r.series = read_series(b);
  b.opt("first_frame_id", r.first_device_frame);
  b.opt("frames_planned", r.frames_planned);
  b.opt("start_ns", r.start_ns);
  b.opt("end_ns", r.end_ns);
  if (b.has("missing_markers")) r.missing = read_missing(b.obj("missing_markers"));
  b.opt("consumer_behind_frames", r.consumer_behind);
  b.opt("generator_cpu_ns", r.generator_cpu_ns);
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

GpuTargetCheck read_gpu_target(const Obj& g, const Obj& mode) {
  GpuTargetCheck c;
  c.target.target_ms = g.number("target_ms");
  c.target.tolerance = g.number("tolerance");
  c.measured_ms = g.number_or_null("measured_ms");
  c.error_fraction = g.number_or_null("error_fraction");
  if (g.has("warmup_check")) {  // results written before the re-check have none
    if (const std::optional<Obj> w = g.obj_or_null("warmup_check")) {
      WarmupCheck& check = c.warmup_check.emplace();
      check.frames_used = w->u64("frames_used");
      check.median_ms = w->number_or_null("median_ms");
      check.complexity_before = w->u32("complexity_before");
      check.complexity_after = w->u32("complexity_after");
      check.outcome = w->str("outcome");
    }
  }
  if (mode.has("off_target") && !mode.at("off_target").is_null())
    c.off_target = mode.boolean("off_target");
  return c;
}

// modes.<name> of a mode that ran: its result and blocks (mode index `mi`).
LatencyModeResult read_mode(const std::string& name, const Obj& m, uint32_t mi, LatencyRun& run) {
  LatencyModeResult out;
  out.name = name;
  out.workload = read_workload(m.obj("workload"));
  if (m.has("gpu_target")) {
    if (const std::optional<Obj> g = m.obj_or_null("gpu_target"))
      out.gpu_target = read_gpu_target(*g, m);
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
  if (total.has("missing_markers")) out.total_missing = read_missing(total.obj("missing_markers"));
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
  if (m.has("load_size")) loaded.size = read_load_size(m.obj("load_size"));
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
