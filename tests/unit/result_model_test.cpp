// The typed result and its JSON: for generated RunResults (seeded: modes
// present or not, empty distributions as null, Loaded and Performance
// available or not, several devices with failed and partial sections), the
// JSON reporter's document read back by the reader equals the model the
// store takes from the RunResult directly (result_model.hpp); and the same
// for real runs of the sim backend on virtual time.
#include "report/result_model.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "latlab/bench/run_result.hpp"
#include "report/result_json.hpp"
#include "report/result_reader.hpp"
#include "unit/sim_result_doc.hpp"

namespace latlab {
namespace {

// Seeded generator of result values.
class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  uint64_t below(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }
  bool coin() { return below(2) == 1; }
  double us() { return std::uniform_real_distribution<double>(0.0, 1e5)(rng_); }
  std::string text(const char* prefix) { return prefix + std::to_string(below(1000)); }

  // count 0 (statistics null in the JSON), 1 (no stddev) or more.
  Distribution distribution() {
    Distribution d;
    d.count = below(3) == 0 ? 0 : 1 + below(3) * below(500);
    d.missing = below(4) == 0 ? below(50) : 0;
    if (d.count == 0) return d;
    d.min = us();
    d.p50 = d.min + us();
    d.p90 = d.p50 + us();
    d.p95 = d.p90 + us();
    d.p99 = d.p95 + us();
    d.p999 = d.p99 + us();
    d.max = d.p999 + us();
    d.mean = (d.min + d.max) / 2;
    if (d.count > 1) d.stddev = us() / 3;
    return d;
  }

  SeriesDistributions series() {
    SeriesDistributions s{};
    for (Distribution& d : s) d = distribution();
    return s;
  }

 private:
  std::mt19937_64 rng_;
};

FrameWorkload workload(Gen& g) {
  FrameWorkload w;
  w.passes = 1 + static_cast<uint32_t>(g.below(4));
  w.complexity = 1 + static_cast<uint32_t>(g.below(4096));
  w.width = 16 + static_cast<uint32_t>(g.below(2000));
  w.height = 16 + static_cast<uint32_t>(g.below(1000));
  w.form = g.coin() ? WorkloadForm::fragment : WorkloadForm::compute;
  return w;
}

// A latency run with one or two modes, warm-up and measured blocks; a
// "loaded" mode only when Loaded runs (as the engine makes them).
LatencyRun latency_run(Gen& g, bool loaded_runs) {
  const bool two_modes = loaded_runs && g.coin();
  LatencyRun run;
  run.desc.schedule.seed = g.below(1'000'000);
  run.desc.blocks = 1 + static_cast<uint32_t>(g.below(4));
  run.desc.frames = run.desc.blocks * (1 + static_cast<uint32_t>(g.below(100)));
  run.desc.workload = workload(g);
  run.device.backend = g.coin() ? "sim" : "vulkan";
  run.device.name = g.text("device ");
  run.device.driver = g.text("driver ");
  run.partial = g.below(4) == 0;
  if (run.partial) run.partial_reason = g.text("interrupted at frame ");
  const uint32_t modes = two_modes ? 2 : 1;
  uint32_t order = 0;
  for (uint32_t mi = 0; mi < modes; ++mi) {
    LatencyModeResult m;
    m.name = mi == 0 && (two_modes || !loaded_runs || g.coin()) ? "baseline" : "loaded";
    m.workload = mi == 0 ? run.desc.workload : workload(g);
    m.total = g.series();
    m.measured_frames = g.below(10'000);
    run.modes.push_back(m);
    for (uint32_t b = 0; b <= run.desc.blocks; ++b) {
      BlockResult br;
      br.mode = mi;
      br.kind = b == 0 ? BlockKind::warmup : BlockKind::measured;
      br.index = b == 0 ? 0 : b - 1;
      br.order = order++;
      br.frames_run = g.below(1000);
      br.series = g.series();
      run.blocks.push_back(br);
    }
  }
  run.total = run.modes[0].total;
  if (g.coin()) run.unavailable.push_back({"calibrated_timestamps", g.text("no extension ")});
  return run;
}

LoadedOutcome loaded_outcome(Gen& g) {
  LoadedOutcome l;
  l.asked = g.coin();
  if (!l.asked) return l;
  l.size.asked = g.coin() ? "auto" : "640x360";
  l.size.used = g.coin() ? "640x360" : "";
  l.size.why = g.text("why ");
  if (g.coin()) l.size.tried.emplace_back("1920x1080", g.text("below reach "));
  switch (g.below(3)) {
    case 0: {
      LoadCalibrationReport c;
      c.complexity = 1 + static_cast<uint32_t>(g.below(4096));
      c.gpu_ms = g.distribution();
      l.calibration = c;
      break;
    }
    case 1:
      l.given_complexity = 1 + static_cast<uint32_t>(g.below(4096));
      break;
    default:
      break;
  }
  l.runs = g.coin();
  if (!l.runs) l.unavailable = g.text("load calibration failed: ");
  return l;
}

PerformanceOutcome performance_outcome(Gen& g) {
  PerformanceOutcome p;
  p.asked = g.coin();
  if (!p.asked) return p;
  if (g.coin()) {
    PerformanceReport r;
    r.frames = static_cast<uint32_t>(g.below(300));
    r.gpu_ms = g.distribution();
    r.fps = g.distribution();
    p.report = r;
    if (g.below(4) == 0) p.interrupted = r.partial_reason = g.text("interrupted ");
  } else {
    p.unavailable = g.text("performance mode failed: ");
  }
  return p;
}

RunMeta meta(Gen& g) {
  RunMeta m;
  m.mode = g.coin() ? "latency" : "baseline";
  m.backend = g.coin() ? "sim" : "vulkan";
  m.device = g.coin() ? "" : "0";
  m.command_line = g.text("latlab run --seed ");
  m.created_utc = "2026-01-31T12:00:00Z";
  m.machine.hostname = g.text("host");
  m.machine.os = g.coin() ? "" : "Debian GNU/Linux 12";  // "" is null in the JSON
  m.machine.kernel = "Linux 6.1";
  m.machine.arch = "x86_64";
  m.machine.cpu_model = g.coin() ? "" : "cpu";
  m.machine.logical_cpus = static_cast<uint32_t>(1 + g.below(256));
  return m;
}

// A one-device result: a latency run (with Loaded's and Performance's
// outcomes) or Performance alone.
RunResult one_device(Gen& g) {
  RunResult r;
  r.meta = meta(g);
  r.per_frame = false;
  if (g.below(5) == 0) {  // Performance alone
    r.device.backend = "sim";
    r.device.name = g.text("device ");
    r.device.driver = g.text("driver ");
    r.performance.asked = true;
    r.performance.report = PerformanceReport{};
    r.performance.report->gpu_ms = g.distribution();
    if (g.coin()) r.performance.report->partial_reason = g.text("interrupted ");
    return r;
  }
  r.loaded = loaded_outcome(g);
  r.latency = latency_run(g, r.loaded.asked && r.loaded.runs);
  r.device = r.latency->device;
  r.performance = performance_outcome(g);
  if (r.latency->partial) r.performance.interrupted.clear();
  return r;
}

// Several devices: sections that ran (ok or partial) or failed.
RunResult several_devices(Gen& g) {
  RunResult r;
  r.meta = meta(g);
  const uint32_t n = 2 + static_cast<uint32_t>(g.below(3));
  for (uint32_t i = 0; i < n; ++i) {
    DeviceSectionResult s;
    s.head.section = i;
    s.head.backend = "sim";
    s.head.selector = std::to_string(i);
    s.head.name = g.coin() ? "" : g.text("device ");
    if (g.coin()) {
      s.head.physical_device = static_cast<int>(g.below(3));
      s.head.uuid = g.coin() ? "" : "00000000-0000-0000-0000-000000000001";
    }
    if (i > 0 && g.below(3) == 0) {
      s.status = "failed";
      s.failure = g.text("cannot open: ");
    } else {
      RunResult one;
      one.meta = r.meta;
      one.loaded = loaded_outcome(g);
      one.latency = latency_run(g, one.loaded.asked && one.loaded.runs);
      one.device = one.latency->device;
      s.status = one.partial() ? "partial" : "ok";
      s.failure = one.partial_reason();
      s.result.push_back(std::move(one));
      if (!r.top_section) r.top_section = i;
    }
    r.sections.push_back(std::move(s));
  }
  return r;
}

void expect_round_trip(const RunResult& r, const std::string& what) {
  const nlohmann::ordered_json doc = run_result_to_json(r);
  Result<ReadResult> read = read_result_json(doc.dump(2) + "\n", what);
  ASSERT_TRUE(read) << what << ": " << read.error().message;
  const ReadResult model = result_model(r, doc);
  EXPECT_TRUE(read.value() == model) << what;
  // Field by field where they differ, so a failure says which part.
  EXPECT_EQ(read->kind, model.kind) << what;
  EXPECT_EQ(read->partial, model.partial) << what;
  EXPECT_EQ(read->partial_reason, model.partial_reason) << what;
  EXPECT_TRUE(read->machine == model.machine) << what;
  EXPECT_EQ(read->modes.size(), model.modes.size()) << what;
  for (size_t i = 0; i < std::min(read->modes.size(), model.modes.size()); ++i)
    EXPECT_TRUE(read->modes[i] == model.modes[i]) << what << " mode " << model.modes[i].name;
  EXPECT_EQ(read->device_sections.size(), model.device_sections.size()) << what;
  for (size_t i = 0; i < std::min(read->device_sections.size(), model.device_sections.size()); ++i)
    EXPECT_TRUE(read->device_sections[i] == model.device_sections[i]) << what << " section " << i;
}

TEST(ResultModel, GeneratedOneDeviceResultsReadBackAsTheirModel) {
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    Gen g(seed);
    expect_round_trip(one_device(g), "one device, seed " + std::to_string(seed));
    if (HasFatalFailure() || HasNonfatalFailure()) return;
  }
}

TEST(ResultModel, GeneratedSeveralDeviceResultsReadBackAsTheirModel) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Gen g(seed * 7919);
    expect_round_trip(several_devices(g), "several devices, seed " + std::to_string(seed));
    if (HasFatalFailure() || HasNonfatalFailure()) return;
  }
}

// The model sees what the JSON holds: a distribution whose statistics the
// result changes is no longer equal (the comparison is not vacuous).
TEST(ResultModel, AChangedStatisticIsSeen) {
  Gen g(3);
  RunResult r = one_device(g);
  while (!r.latency) r = one_device(g);
  const nlohmann::ordered_json doc = run_result_to_json(r);
  ReadResult model = result_model(r, doc);
  Result<ReadResult> read = read_result_json(doc.dump(2) + "\n", "changed");
  ASSERT_TRUE(read);
  ASSERT_FALSE(model.modes.empty());
  model.modes[0].total.series[0].second.count += 1;
  EXPECT_FALSE(read.value() == model);
}

// Real results: lockstep sim runs on virtual time (deterministic), as a
// Baseline run with Performance asked and unavailable.
TEST(ResultModel, SimRunsReadBackAsTheirModel) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    testing::SimRunSpec spec;
    spec.noise_seed = seed;
    spec.frames = 60;
    spec.blocks = 3;
    RunResult r;
    r.latency.emplace();
    ASSERT_FALSE(testing::sim_result_doc(spec, &*r.latency).empty());
    r.meta.backend = "sim";
    r.meta.command_line = "latlab run --backend sim (test)";
    r.meta.created_utc = utc_now_iso8601();
    r.meta.machine = collect_machine_info();
    r.device = r.latency->device;
    r.performance.asked = true;
    r.performance.unavailable = "not run: the test asks for none";
    expect_round_trip(r, "sim seed " + std::to_string(seed));
  }
}

// The JSON reporter of a latency run alone is the run's document with
// nothing added (latency_run_to_json, which tests and users call).
TEST(ResultModel, ALatencyOnlyResultIsTheRunDocument) {
  testing::SimRunSpec spec;
  spec.frames = 40;
  spec.blocks = 2;
  RunResult r;
  r.latency.emplace();
  ASSERT_FALSE(testing::sim_result_doc(spec, &*r.latency).empty());
  r.meta.backend = "sim";
  EXPECT_EQ(run_result_to_json(r).dump(2), latency_run_to_json(*r.latency, r.meta).dump(2));
}

}  // namespace
}  // namespace latlab
