// latlab run: the latency modes (Loaded's workload, the latency blocks).
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <utility>

#include "run_parts.hpp"

namespace latlab::cli {
namespace {

// Calibrates Loaded's complexity on `device` to --load-target-ms.
void calibrate_loaded(const RunOptions& o, RunPlan& plan, LatencyDevice& device, std::FILE* info,
                      LoadedSetup& loaded) {
  LoadCalibrationDesc cd;
  cd.target_ms = o.load_target_ms;
  cd.tolerance = o.load_tolerance;
  cd.width = plan.loaded_work.width;
  cd.height = plan.loaded_work.height;
  cd.form = plan.loaded_work.form;
  cd.first_frame_id = loaded.next_frame_id;
  cd.on_step = [info](const LoadCalibrationStep& st) {
    fmt::print(info, "  load calibration #{}: {} complexity {} -> median {:.4f} ms ({:+.2f}%)\n",
               st.index, to_string(st.kind), st.complexity, st.median_ms,
               st.error_fraction * 100.0);
    std::fflush(info);
  };
  Result<LoadCalibrationReport> cal = calibrate_load(device, cd);
  if (!cal) {
    loaded.unavailable = "load calibration failed: " + cal.error().message;
  } else {
    loaded.next_frame_id = cal->next_frame_id;
    plan.loaded_work.complexity = cal->complexity;
    if (!cal->within_tolerance) {
      loaded.unavailable =
          "load calibration did not reach the target within tolerance: " + cal->outcome;
    }
    loaded.calibration = std::move(cal.value());
  }
  if (loaded.unavailable.empty()) {
    const LoadCalibrationReport& c = *loaded.calibration;
    fmt::print(info, "  load calibrated: complexity {}, median {:.4f} ms (target {} ms)\n",
               c.complexity, c.median_ms, c.target_ms);
  } else {
    fmt::print(info, "  Loaded unavailable: {}\n", loaded.unavailable);
  }
  std::fflush(info);
}

void print_progress(const RunProgress& p) {
  if (p.kind == BlockKind::warmup) {
    std::printf("\r\033[K  warm-up %llu/%llu", static_cast<unsigned long long>(p.block_frames_done),
                static_cast<unsigned long long>(p.block_frames));
  } else {
    std::printf("\r\033[K  %s %s block %u/%u: %llu/%llu frames", std::string(p.mode).c_str(),
                std::string(to_string(p.kind)).c_str(), p.block + 1, p.blocks,
                static_cast<unsigned long long>(p.block_frames_done),
                static_cast<unsigned long long>(p.block_frames));
  }
  std::fflush(stdout);
}

}  // namespace

LoadedSetup prepare_loaded(const RunOptions& o, RunPlan& plan, LatencyDevice& device,
                           std::FILE* info) {
  LoadedSetup loaded;
  if (plan.want_loaded && o.load_complexity > 0) {
    plan.loaded_work.complexity = o.load_complexity;
  } else if (plan.want_loaded) {
    calibrate_loaded(o, plan, device, info, loaded);
  }
  loaded.runs = plan.want_loaded && loaded.unavailable.empty();
  return loaded;
}

Result<LatencyRun> run_latency_blocks(const LatencyRunDesc& desc, LatencyRunEnv env, bool progress,
                                      RunMeta& meta) {
  if (progress) env.on_progress = print_progress;
  meta.memory_before = read_process_memory();
  Result<LatencyRun> result = run_latency(desc, env);
  meta.memory_after = read_process_memory();
  if (progress) {
    std::printf("\r\033[K");
    std::fflush(stdout);
  }
  return result;
}

}  // namespace latlab::cli
