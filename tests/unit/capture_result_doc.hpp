// A capture result (kind "capture") as `latlab capture` makes it, for the
// reader, store, report and comparison tests: `frames` frames of a program
// whose between-presents time is about `frame_us` and GPU busy time about
// `gpu_us` (a few % of seeded noise), with the figures of docs/capture.md.
#pragma once

#include <cstdint>
#include <string>

#include "latlab/bench/latency_report.hpp"
#include "latlab/bench/run_result.hpp"
#include "unit/sim_result_doc.hpp"

namespace latlab::testing {

struct CaptureSpec {
  uint64_t seed = 1;
  double frame_us = 16'667;
  double gpu_us = 900;
  uint64_t frames = 120;
  std::string program = "vkcube";
};

// A distribution of `count` frames around `us` (noise from `seed`, `stream`).
inline Distribution figure_around(double us, uint64_t count, uint64_t seed, uint64_t stream) {
  const double k = 1.0 + static_cast<double>(noise_ns(seed, stream, 0, 4000)) / 100'000.0;
  Distribution d;
  d.count = count;
  d.min = 0.9 * us * k;
  d.p50 = us * k;
  d.p90 = 1.05 * us * k;
  d.p95 = 1.08 * us * k;
  d.p99 = 1.2 * us * k;
  d.p999 = 1.3 * us * k;
  d.max = 1.4 * us * k;
  d.mean = 1.01 * us * k;
  d.stddev = 0.05 * us;
  return d;
}

// A figure no frame had: `n` missing.
inline Distribution no_values(uint64_t n) {
  Distribution d;
  d.missing = n;
  return d;
}

inline RunResult capture_result(const CaptureSpec& spec) {
  RunResult r;
  r.meta.command_line = "latlab capture " + spec.program + " --c " + std::to_string(spec.frames);
  r.meta.created_utc = "2026-02-01T08:00:0" + std::to_string(spec.seed % 10) + "Z";
  r.meta.machine = collect_machine_info();
  CaptureResult& c = r.capture.emplace();
  c.program = {{spec.program, "--c", std::to_string(spec.frames)},
               4000 + static_cast<int64_t>(spec.seed),
               0,
               std::nullopt,
               false};
  c.stop.stopped_by = "program_exit";
  c.sources.push_back({4000 + static_cast<int64_t>(spec.seed), "vulkan", "llvmpipe",
                       "vkGetCalibratedTimestampsEXT", "VkDevice 0x1",
                       spec.seed % 2 == 0 ? "VK_KHR_present_wait" : "", true});
  c.frames = spec.frames;
  c.submits = spec.frames + 1;
  c.submit_spans = {{"measured", spec.frames + 1}, {"no_work", 0}, {"failed", 0}};
  c.present_complete = {{"measured", 0}, {"unavailable", spec.frames}};
  const uint64_t n = spec.frames;
  c.figures = {{"between_presents", figure_around(spec.frame_us, n - 1, spec.seed, 1)},
               {"in_present_api", figure_around(40, n, spec.seed, 2)},
               {"cpu_busy", figure_around(spec.frame_us - 60, n, spec.seed, 3)},
               {"gpu_busy", figure_around(spec.gpu_us, n, spec.seed, 4)},
               {"until_displayed", no_values(n)}};
  c.submit_figures = {{"gpu_span", figure_around(spec.gpu_us, n + 1, spec.seed, 5)},
                      {"layer_cpu", figure_around(3, n + 1, spec.seed, 6)}};
  c.layer_cpu_per_submit = c.submit_figures[1].second;
  c.layer_cpu_per_present = figure_around(2, n, spec.seed, 7);
  c.unavailable.push_back({"present_complete", "no VK_KHR_present_wait", c.program.pid});
  CaptureScreenObserver screen;
  screen.name = "x11_damage";
  screen.observes = "DamageNotify for the program's window";
  screen.available = spec.seed % 3 != 0;
  if (screen.available) {
    screen.display = ":99";
    screen.windows = {0x400001 + spec.seed};
    screen.frames_watched = spec.frames;
    screen.frames_matched = spec.frames - 1;
    screen.events = spec.frames + 1;
    screen.events_unmatched = 2;
    screen.figures = {{"until_screen_updated", figure_around(900, n - 1, spec.seed, 8)}};
  } else {
    screen.reason = "no window known";
    screen.figures = {{"until_screen_updated", no_values(0)}};
  }
  c.screen_observers.push_back(screen);
  return r;
}

}  // namespace latlab::testing
