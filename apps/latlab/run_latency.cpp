// latlab run: the latency modes (Loaded's workload, the latency blocks).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "run_parts.hpp"

namespace latlab::cli {
namespace {

std::string size_text(uint32_t w, uint32_t h) { return fmt::format("{}x{}", w, h); }

// Frame ids one calibration can use at most (a failed one does not say how
// many it used; later ids must stay above them).
uint64_t calibration_frame_ids(const LoadCalibrationDesc& cd) {
  return load_calibration_max_frames(cd);
}

// Calibrates Loaded's complexity on `device` to --load-target-ms at the
// planned size, or with --load-size auto at the first size of
// auto_load_sizes() where the target is reachable.
void calibrate_loaded(const RunOptions& o, RunPlan& plan, LatencyDevice& device, std::FILE* info,
                      LoadedSetup& loaded, const std::atomic<bool>* interrupt) {
  LoadCalibrationDesc cd;
  cd.target_ms = o.load_target_ms;
  cd.tolerance = o.load_tolerance;
  cd.form = plan.loaded_work.form;
  cd.interrupt = interrupt;
  cd.on_step = [info](const LoadCalibrationStep& st) {
    fmt::print(info,
               "  load calibration #{}: {} complexity {} -> median {:.4f} ms ({:+.2f}%), spread "
               "{}\n",
               st.index, to_string(st.kind), st.complexity, st.median_ms, st.error_fraction * 100.0,
               st.spread_fraction ? fmt::format("{:.2f}%", *st.spread_fraction * 100.0) : "-");
    std::fflush(info);
  };
  std::vector<std::pair<uint32_t, uint32_t>> sizes = {
      {plan.loaded_work.width, plan.loaded_work.height}};
  if (plan.load_size_auto) sizes = auto_load_sizes();
  loaded.size.asked = plan.load_size_auto ? "auto" : size_text(sizes[0].first, sizes[0].second);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const auto [w, h] = sizes[i];
    const bool last = i + 1 == sizes.size();
    cd.width = w;
    cd.height = h;
    cd.first_frame_id = loaded.next_frame_id;
    if (plan.load_size_auto) fmt::print(info, "  load size auto: trying {}x{}\n", w, h);
    Result<LoadCalibrationReport> cal = calibrate_load(device, cd);
    if (interrupt != nullptr && interrupt->load()) {
      // Ctrl-C: no other size, no run. The calibration's error says where
      // it stopped; one that finished as the signal came says so here.
      loaded.interrupted =
          cal ? "interrupted after load calibration at " + size_text(w, h) : cal.error().message;
      loaded.next_frame_id =
          cal ? cal->next_frame_id : loaded.next_frame_id + calibration_frame_ids(cd);
      fmt::print(info, "  load calibration stopped: {}\n", loaded.interrupted);
      std::fflush(info);
      return;
    }
    if (!cal && plan.load_size_auto && !last && target_below_reach(cal.error())) {
      loaded.size.tried.emplace_back(size_text(w, h), cal.error().message);
      loaded.next_frame_id += calibration_frame_ids(cd);
      continue;
    }
    if (!cal) {
      loaded.next_frame_id += calibration_frame_ids(cd);
      if (plan.load_size_auto) loaded.size.tried.emplace_back(size_text(w, h), cal.error().message);
      loaded.unavailable = "load calibration failed: " + cal.error().message;
      if (loaded.size.tried.size() > 1) {
        loaded.unavailable += fmt::format(" (--load-size auto tried {} sizes, {} the smallest)",
                                          loaded.size.tried.size(), size_text(w, h));
      }
      loaded.size.why = "no size reached the target";
      break;
    }
    loaded.next_frame_id = cal->next_frame_id;
    if (cal->complexity < kMinLoadComplexity || cal->complexity > kMaxLoadComplexity) {
      // Never handed to the run as bad input: the calibration clamps, so
      // this would be a calibration bug, reported as Loaded unavailable.
      loaded.unavailable = fmt::format("load calibration returned complexity {}, outside {}..{}",
                                       cal->complexity, kMinLoadComplexity, kMaxLoadComplexity);
      break;
    }
    plan.loaded_work.complexity = cal->complexity;
    plan.loaded_work.width = w;
    plan.loaded_work.height = h;
    loaded.size.used = size_text(w, h);
    if (!plan.load_size_auto) {
      loaded.size.why = "given with --load-size";
    } else if (loaded.size.tried.empty()) {
      loaded.size.why = "the target is reachable at the largest size of the list";
    } else {
      loaded.size.why = fmt::format(
          "the largest size of the list at which the target is reachable (above it, {}: the "
          "target is below the GPU time of complexity 1)",
          loaded.size.tried.size() == 1 ? loaded.size.tried[0].first : "every larger size");
    }
    if (!cal->within_tolerance) {
      loaded.unavailable =
          "load calibration did not reach the target within tolerance: " + cal->outcome;
    }
    loaded.calibration = std::move(cal.value());
    break;
  }
  if (loaded.unavailable.empty()) {
    const LoadCalibrationReport& c = *loaded.calibration;
    fmt::print(info,
               "  load calibrated: complexity {} at {}, median {:.4f} ms (target {} ms), timing "
               "noise {}\n",
               c.complexity, loaded.size.used, c.median_ms, c.target_ms,
               c.noise_fraction ? fmt::format("{:.2f}%", *c.noise_fraction * 100.0)
                                : std::string("not measured"));
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
                           std::FILE* info, const std::atomic<bool>* interrupt) {
  LoadedSetup loaded;
  if (plan.want_loaded && o.load_complexity > 0) {
    plan.loaded_work.complexity = o.load_complexity;
    loaded.size.asked = plan.load_size_auto ? "auto" : o.load_size;
    loaded.size.used = fmt::format("{}x{}", plan.loaded_work.width, plan.loaded_work.height);
    loaded.size.why = plan.load_size_auto
                          ? "--load-complexity given: nothing calibrated, the largest size of the list"
                          : "given with --load-size";
  } else if (plan.want_loaded) {
    calibrate_loaded(o, plan, device, info, loaded, interrupt);
  }
  loaded.runs = plan.want_loaded && loaded.unavailable.empty() && loaded.interrupted.empty();
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
