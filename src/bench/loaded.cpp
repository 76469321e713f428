// Loaded's workload: given, or calibrated to the target GPU time, with the
// automatic size search (the largest size of auto_load_sizes() at which the
// target is reachable).
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "latlab/bench/run_engine.hpp"

namespace latlab {
namespace {

std::string size_text(uint32_t w, uint32_t h) { return fmt::format("{}x{}", w, h); }

void say(const RunHooks& hooks, const std::string& line) {
  if (hooks.info) hooks.info(line);
}

// The calibration settings of the plan; steps go to hooks.info.
LoadCalibrationDesc calibration_desc(const RunPlan& plan, const RunHooks& hooks) {
  LoadCalibrationDesc cd;
  cd.target_ms = plan.load_target_ms;
  cd.tolerance = plan.load_tolerance;
  cd.form = plan.loaded_work.form;
  cd.interrupt = hooks.interrupt;
  cd.on_step = [&hooks](const LoadCalibrationStep& st) {
    say(hooks,
        fmt::format(
            "  load calibration #{}: {} complexity {} -> median {:.4f} ms "
            "({:+.2f}%), spread {}",
            st.index, to_string(st.kind), st.complexity, st.median_ms, st.error_fraction * 100.0,
            st.spread_fraction ? fmt::format("{:.2f}%", *st.spread_fraction * 100.0) : "-"));
  };
  return cd;
}

// Why the search chose this size.
std::string why_size(const RunPlan& plan, const LoadSizeChoice& size) {
  if (!plan.load_size_auto) return "given with --load-size";
  if (size.tried.empty()) return "the target is reachable at the largest size of the list";
  return fmt::format(
      "the largest size of the list at which the target is reachable in complexity steps finer "
      "than half the tolerance ({} larger: see tried)",
      size.tried.size() == 1 ? "one size" : fmt::format("{} sizes", size.tried.size()));
}

// A calibration at (w, h) that returned a report: Loaded runs at that size
// (unavailable when it missed the target or returned a bad complexity).
void take_calibration(RunPlan& plan, LoadedOutcome& loaded, LoadCalibrationReport cal, uint32_t w,
                      uint32_t h) {
  loaded.next_frame_id = std::max(loaded.next_frame_id, cal.next_frame_id);
  if (cal.complexity < kMinLoadComplexity || cal.complexity > kMaxLoadComplexity) {
    // Never handed to the run as bad input: the calibration clamps, so
    // this would be a calibration bug, reported as Loaded unavailable.
    loaded.unavailable = fmt::format("load calibration returned complexity {}, outside {}..{}",
                                     cal.complexity, kMinLoadComplexity, kMaxLoadComplexity);
    return;
  }
  plan.loaded_work.complexity = cal.complexity;
  plan.loaded_work.width = w;
  plan.loaded_work.height = h;
  loaded.size.used = size_text(w, h);
  loaded.size.why = why_size(plan, loaded.size);
  if (!cal.within_tolerance) {
    loaded.unavailable =
        "load calibration did not reach the target within tolerance: " + cal.outcome;
  }
  loaded.calibration = std::move(cal);
}

// Why the automatic size goes on past a calibration that returned a report,
// or "" to keep it: the target fell between two complexities a step larger
// than the tolerance apart, or the steps are coarser than half the tolerance
// (reached or not: the run's warm-up re-check could not correct a drift
// finer than one step). A smaller size needs more steps, each finer.
std::string too_coarse(const LoadCalibrationReport& cal) {
  if (cal.granularity_limited) return "granularity: " + cal.outcome;
  const double half = cal.tolerance / 2.0 * cal.target_ms;
  // Without a measured step, one step is at most the whole time / complexity.
  const double step = cal.step_ms.value_or(cal.median_ms / cal.complexity);
  if (step <= half) return "";
  return fmt::format(
      "{} at complexity {}, but one complexity step changes the GPU time by ~{:.3f} ms "
      "({:.2f}% of the target{}), more than half the tolerance: too coarse to correct a drift",
      cal.within_tolerance ? "reached" : "not reached (" + cal.outcome + ")", cal.complexity, step,
      step / cal.target_ms * 100.0, cal.step_ms ? "" : ", at most");
}

// Why a size need not be measured, or "": the lowest complexity's GPU time
// at a larger size (`lowest`: ms, pixels) scaled down by pixels is a lower
// bound here (a fixed part does not shrink with the pixels). More than twice
// the target (room for caches a smaller size fits in), the target is out of
// reach at this size.
std::string unreachable_by_scale(std::pair<double, double> lowest, uint32_t w, uint32_t h,
                                 const LoadCalibrationDesc& cd) {
  const double bound = lowest.first * static_cast<double>(w) * h / lowest.second;
  if (bound <= 2.0 * cd.target_ms) return "";
  return fmt::format(
      "not measured: complexity {} takes at least ~{:.3g} ms here ({:.4g} ms at a larger size, "
      "scaled by pixels), more than twice the target",
      cd.min_complexity, bound, lowest.first);
}

// A calibration that reached the target at a size whose steps are coarse.
struct Reached {
  LoadCalibrationReport cal;
  uint32_t w, h;
};

// No smaller size reached the target: Loaded runs at the coarse size, and
// the size's why says so (not "in steps finer than half the tolerance").
void take_coarse(RunPlan& plan, LoadedOutcome& loaded, Reached reached) {
  take_calibration(plan, loaded, std::move(reached.cal), reached.w, reached.h);
  loaded.size.why =
      "the largest size of the list at which the target was reached; its complexity steps are "
      "coarser than half the tolerance, and no smaller size reached it (see tried)";
}

// Calibrates Loaded's complexity to the target at the planned size, or with
// the automatic size at the first size of auto_load_sizes() where the
// target is reachable in steps finer than half the tolerance (when none is,
// the finest size that reached it; else the last answer).
void calibrate_loaded(RunPlan& plan, LatencyDevice& device, const RunHooks& hooks,
                      LoadedOutcome& loaded) {
  LoadCalibrationDesc cd = calibration_desc(plan, hooks);
  std::vector<std::pair<uint32_t, uint32_t>> sizes = {
      {plan.loaded_work.width, plan.loaded_work.height}};
  if (plan.load_size_auto) sizes = auto_load_sizes();
  loaded.size.asked = plan.load_size_auto ? "auto" : size_text(sizes[0].first, sizes[0].second);
  // A size that reached the target in coarse steps: kept in case no smaller one does better.
  std::optional<Reached> coarse;
  // The lowest complexity's GPU time at the last size measured, and its pixels.
  std::optional<std::pair<double, double>> lowest;
  const auto print_step = cd.on_step;
  cd.on_step = [&](const LoadCalibrationStep& st) {
    print_step(st);
    if (st.complexity == cd.min_complexity)
      lowest = {st.median_ms, static_cast<double>(cd.width) * cd.height};
  };
  for (size_t i = 0; i < sizes.size(); ++i) {
    const auto [w, h] = sizes[i];
    const bool last = i + 1 == sizes.size();
    cd.width = w;
    cd.height = h;
    cd.first_frame_id = loaded.next_frame_id;
    // Walking down, every size but the last moves on when unreachable: no
    // second point to name the top of a range nobody will use.
    cd.estimate_top_when_unreachable = !plan.load_size_auto || last;
    if (plan.load_size_auto && !last && lowest) {
      if (const std::string why = unreachable_by_scale(*lowest, w, h, cd); !why.empty()) {
        say(hooks, fmt::format("  load size auto: {}x{} {}", w, h, why));
        loaded.size.tried.emplace_back(size_text(w, h), why);
        continue;
      }
    }
    if (plan.load_size_auto) say(hooks, fmt::format("  load size auto: trying {}x{}", w, h));
    Result<LoadCalibrationReport> cal = calibrate_load(device, cd);
    // A failed calibration does not say how many frame ids it used; later
    // ids must stay above them.
    const uint64_t after_failed = loaded.next_frame_id + load_calibration_max_frames(cd);
    if (hooks.interrupt != nullptr && hooks.interrupt->load()) {
      // No other size, no run. The calibration's error says where it
      // stopped; one that finished as the signal came says so here.
      loaded.interrupted =
          cal ? "interrupted after load calibration at " + size_text(w, h) : cal.error().message;
      loaded.next_frame_id = cal ? cal->next_frame_id : after_failed;
      say(hooks, "  load calibration stopped: " + loaded.interrupted);
      return;
    }
    if (cal) {
      const std::string coarse_why = plan.load_size_auto && !last ? too_coarse(*cal) : "";
      if (coarse_why.empty()) {
        if (coarse && !cal->within_tolerance) {  // the finer size failed: the coarse one stands
          loaded.size.tried.emplace_back(size_text(w, h), cal->outcome);
          loaded.next_frame_id = cal->next_frame_id;
          take_coarse(plan, loaded, std::move(*coarse));
          return;
        }
        take_calibration(plan, loaded, std::move(cal.value()), w, h);
        return;
      }
      say(hooks, "  load size auto: " + size_text(w, h) + " " + coarse_why);
      loaded.size.tried.emplace_back(size_text(w, h), coarse_why);
      loaded.next_frame_id = cal->next_frame_id;
      if (cal->within_tolerance && !coarse) coarse = Reached{std::move(cal.value()), w, h};
      continue;
    }
    loaded.next_frame_id = after_failed;
    if (plan.load_size_auto) loaded.size.tried.emplace_back(size_text(w, h), cal.error().message);
    if (plan.load_size_auto && !last && target_below_reach(cal.error())) continue;
    if (coarse) {  // a smaller size failed: the coarse one stands
      take_coarse(plan, loaded, std::move(*coarse));
      return;
    }
    loaded.unavailable = "load calibration failed: " + cal.error().message;
    if (loaded.size.tried.size() > 1) {
      loaded.unavailable += fmt::format(" (--load-size auto tried {} sizes, {} the smallest)",
                                        loaded.size.tried.size(), size_text(w, h));
    }
    loaded.size.why = "no size reached the target";
    return;
  }
}

void say_loaded(const LoadedOutcome& loaded, const RunHooks& hooks) {
  if (!loaded.unavailable.empty()) {
    say(hooks, "  Loaded unavailable: " + loaded.unavailable);
    return;
  }
  const LoadCalibrationReport& c = *loaded.calibration;
  say(hooks, fmt::format("  load calibrated: complexity {} at {}, median {:.4f} ms (target {} ms), "
                         "timing noise {}",
                         c.complexity, loaded.size.used, c.median_ms, c.target_ms,
                         c.noise_fraction ? fmt::format("{:.2f}%", *c.noise_fraction * 100.0)
                                          : std::string("not measured")));
}

}  // namespace

const std::vector<std::pair<uint32_t, uint32_t>>& auto_load_sizes() {
  // 16:9, each step about half the pixels of the one before; 160x90 still
  // covers many GPU threads per pass.
  static const std::vector<std::pair<uint32_t, uint32_t>> sizes = {
      {1920, 1080}, {1280, 720}, {960, 540}, {640, 360}, {320, 180}, {160, 90}};
  return sizes;
}

bool target_below_reach(const Error& e) {
  // The wording of calibrate_load's "target below the range" error
  // (src/bench/load_calibration.cpp); tests/e2e/load_size_test.cpp checks
  // that an unreachable 1920x1080 falls back to a smaller size.
  return e.message.find("is below the lowest reachable GPU time") != std::string::npos;
}

LoadedOutcome prepare_loaded(RunPlan& plan, LatencyDevice& device, const RunHooks& hooks) {
  LoadedOutcome loaded;
  loaded.asked = plan.want_loaded;
  loaded.given_complexity = plan.want_loaded ? plan.load_complexity : 0;
  if (plan.want_loaded && plan.load_complexity > 0) {
    plan.loaded_work.complexity = plan.load_complexity;
    loaded.size.asked = plan.load_size_auto ? "auto" : plan.load_size_text;
    loaded.size.used = size_text(plan.loaded_work.width, plan.loaded_work.height);
    loaded.size.why =
        plan.load_size_auto
            ? "--load-complexity given: nothing calibrated, the largest size of the list"
            : "given with --load-size";
  } else if (plan.want_loaded) {
    calibrate_loaded(plan, device, hooks, loaded);
    if (loaded.interrupted.empty()) say_loaded(loaded, hooks);
  }
  loaded.runs = plan.want_loaded && loaded.unavailable.empty() && loaded.interrupted.empty();
  return loaded;
}

void set_latency_modes(RunPlan& plan, const LoadedOutcome& loaded) {
  LatencyRunDesc& desc = plan.desc;
  // A calibrated load is checked against its target after the run (off
  // target when its measured GPU time misses it); a given complexity has none.
  LatencyModeDesc loaded_mode{"loaded", plan.loaded_work, std::nullopt, std::nullopt};
  if (loaded.calibration) {
    loaded_mode.gpu_target =
        GpuTimeTarget{loaded.calibration->target_ms, loaded.calibration->tolerance};
    // Re-checked in its warm-up block under the run's own conditions, and
    // moved along the calibration's slope when that block missed the target.
    if (loaded.calibration->step_ms && *loaded.calibration->step_ms > 0)
      loaded_mode.warmup_adjust_ms_per_complexity = loaded.calibration->step_ms;
  }
  if (plan.want_baseline && loaded.runs) {
    desc.modes = {LatencyModeDesc{"baseline", desc.workload, std::nullopt, std::nullopt},
                  loaded_mode};
  } else if (loaded.runs) {
    desc.modes = {loaded_mode};
  }
  desc.first_frame_id = loaded.next_frame_id;
}

}  // namespace latlab
