// The score's input from the engine's typed result: each measured block's
// per-frame Core Latency, exactly as summarize_frames() takes it (ns / 1000);
// the score of a result, for display.
#include <fmt/format.h>

#include "report/score_report.hpp"

namespace latlab {
namespace {

constexpr const char* kBothModes =
    "the score needs Core Latency of Baseline and of Loaded (--mode latency or all)";

// Mode `mi`'s measured blocks; nullopt when the run holds no frame records
// for them (a run built from distributions alone).
std::optional<ScoreMode> score_mode(const LatencyRun& run, uint32_t mi) {
  ScoreMode out;
  for (const BlockResult& b : run.blocks) {
    if (b.kind != BlockKind::measured || b.mode != mi) continue;
    if (b.first_frame + b.frames_run > run.frames.size()) return std::nullopt;
    std::vector<double> us;
    for (uint64_t i = 0; i < b.frames_run; ++i) {
      const FrameRecord& f = run.frames[b.first_frame + i];
      const std::optional<int64_t> ns = series_value_ns(f, Series::core_latency, run.device.ticks);
      if (ns) us.push_back(static_cast<double>(*ns) / 1000.0);
    }
    out.frames += b.frames_run;
    out.missing += b.frames_run - us.size();
    out.blocks.push_back(std::move(us));
  }
  return out;
}

// The mode's GPU time target check, as the score needs it.
void add_target(ScoreMode& m, const LatencyModeResult& mr) {
  if (!mr.gpu_target) return;
  const GpuTargetCheck& c = *mr.gpu_target;
  m.off_target = c.off_target;
  if (c.measured_ms) {
    m.target_note =
        fmt::format("gpu_execution p50 {:.3f} ms against its {:.3f} ms target +-{:.3g}%",
                    *c.measured_ms, c.target.target_ms, c.target.tolerance * 100.0);
  }
}

}  // namespace

LatencyScore latency_score_of(const LatencyRun& run, const RunResult* r) {
  ScoreInput in;
  if (run.partial) in.partial_reason = run.partial_reason;
  in.baseline_absent = fmt::format("the run has no Baseline mode: {}", kBothModes);
  in.loaded_absent = fmt::format("the run has no Loaded mode: {}", kBothModes);
  if (r != nullptr && r->loaded.asked && !r->loaded.runs)
    in.loaded_absent = "Loaded did not run: " + r->loaded.unavailable;
  for (uint32_t mi = 0; mi < run.modes.size(); ++mi) {
    const LatencyModeResult& mr = run.modes[mi];
    std::optional<ScoreMode>& slot = mr.name == "loaded" ? in.loaded : in.baseline;
    if (mr.name != "loaded" && mr.name != "baseline") continue;
    slot = score_mode(run, mi);
    if (!slot) {
      (mr.name == "loaded" ? in.loaded_absent : in.baseline_absent) =
          "the run holds no frame records of " + mr.name;
      continue;
    }
    add_target(*slot, mr);
  }
  return compute_latency_score(in);
}

void attach_latency_scores(RunResult& r) {
  if (r.latency) r.score = latency_score_of(*r.latency, &r);
  for (DeviceSectionResult& s : r.sections) {
    for (RunResult& one : s.result) attach_latency_scores(one);
  }
}

LatencyScore score_for_display(const RunResult& r) {
  if (r.score) return *r.score;
  LatencyScore none;
  if (r.capture) {
    none.unavailable_reason = "a capture has no latency score (it has no Baseline or Loaded)";
  } else if (!r.latency) {
    none.unavailable_reason = "a Performance-only run has no latency score";
  } else {
    none.unavailable_reason = "the result holds no score";
  }
  return none;
}

}  // namespace latlab
