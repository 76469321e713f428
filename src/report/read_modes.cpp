// The result reader: the latency modes (docs/result-schema.md,
// "modes.<mode>"), each by its field table (result_fields.hpp), and each
// mode's present stages.
#include "report/result_fields.hpp"
#include "report/result_sections.hpp"

namespace latlab::reading {

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

void read_modes(const Obj& doc, RunResult& r) {
  LatencyRun& run = *r.latency;
  const Obj modes = doc.obj("modes");
  for (auto it = modes.raw().begin(); it != modes.raw().end(); ++it) {
    if (it.key() == "performance") continue;  // read_outcomes
    const Obj m(it.value(), modes.key_path(it.key()));
    if (!m.boolean("available")) {
      if (it.key() != "loaded") fail(m.path(), "only loaded can be unavailable (available: false)");
      r.loaded.asked = true;
      fields::read_fields(m, fields::kLoadedUnavailableFields, r.loaded);
      continue;
    }
    fields::ModeDoc d{{}, {}, &run};
    fields::read_fields(m, fields::kModeFields, d);
    d.mode.name = it.key();
    for (BlockResult& b : d.blocks) {
      b.mode = static_cast<uint32_t>(run.modes.size());
      run.blocks.push_back(std::move(b));
    }
    run.modes.push_back(std::move(d.mode));
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
