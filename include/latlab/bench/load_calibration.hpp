// Load calibration for Loaded latency: choose the shader complexity (1..4096)
// of four fixed post-process passes so that one frame's GPU time hits a
// target (default 8.333333 ms, a 120 Hz budget). Bracket, refine, verify:
//
//  1. measure at min_complexity; if already too slow the target is unreachable;
//  2. jump to target/t(min) * min (proportional: never overshoots an affine
//     cost with a fixed part), then fit cost = a + b * complexity through the
//     two highest points and jump to its solution, growing at most
//     max_growth times per step until the target is bracketed;
//  3. inside the bracket, regula falsi on the integer complexity (Illinois
//     weighting against one-sided stalls), bisection if the bracket does not
//     halve in three steps;
//  4. verify the best candidate over verify_frames frames; if its median misses
//     the tolerance, feed it back and continue while evaluations remain; if it
//     is inside but clearly off centre, verify the predicted better neighbour
//     once (polish) and keep the closer.
//
// Each evaluation submits discard_frames + N frames one at a time
// (submit, wait) as `repeats` short measurements back to back, and takes the
// median GPU time of all its frames whose timestamps are ok (frames with any
// other status are counted as missing, never replaced). The spread of the
// repeats' medians is the device's timing noise at that point: a failure the
// noise explains is reported as noise, never as the complexity's granularity.
// GPU time = span_ns(gpu_begin_ticks, gpu_end_ticks) in the device's tick
// format.
//
// Honesty: a target outside the reachable range is an Error naming the range,
// never a silent clamp. Running out of evaluations or time returns the best
// verified complexity with within_tolerance = false.
//
// Budget: at most max_evaluations evaluations, so at most
// load_calibration_max_frames(desc) frames (992 with the defaults), and the
// wall-time budget max_wall_ns checked between evaluations.
//
// Interrupt: `interrupt`, once true, stops the calibration before its next
// frame (one frame, not one evaluation, at most runs on): an Error that says
// where ("interrupted during load calibration at WxH, evaluation #N ...").
//
// Thread safety: drives `device` from the calling thread only.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "latlab/core/latency_device.hpp"
#include "latlab/result.hpp"
#include "latlab/stats.hpp"

namespace latlab {

inline constexpr uint32_t kMinLoadComplexity = 1;
inline constexpr uint32_t kMaxLoadComplexity = 4096;
inline constexpr double kLoadedTargetMs = 8.333333;  // a 120 Hz frame's budget

struct LoadCalibrationStep;

struct LoadCalibrationDesc {
  double target_ms = kLoadedTargetMs;  // GPU time per frame to hit, ms (> 0)
  double tolerance = 0.02;             // accepted |median - target| / target (0 < tol <= 0.5)
  double refine_fraction = 0.25;       // refine until within tolerance * this, then verify
  uint32_t width = 1920;               // render target size, pixels
  uint32_t height = 1080;
  uint32_t passes = 4;  // post-process passes per frame (fixed: four)
  WorkloadForm form = WorkloadForm::compute;
  uint32_t min_complexity = kMinLoadComplexity;  // search range, within 1..4096
  uint32_t max_complexity = kMaxLoadComplexity;
  uint32_t discard_frames = 1;   // warm-up frames per evaluation, not measured (>= 0)
  uint32_t frames_per_eval = 4;  // measured frames per repeat of a search evaluation (>= 1)
  uint32_t verify_frames = 30;   // measured frames of a verification, split over the repeats (>= 1)
  // Short measurements per evaluation (>= 1); the spread of their medians is
  // the timing noise (1: no spread measured).
  uint32_t repeats = 3;
  // Search + verification evaluations in all (>= 2). The wall-time budget
  // is what binds on a noisy device: a verification uncertain by more than
  // the tolerance is repeated, pooled, while the frames it needs fit in it.
  uint32_t max_evaluations = 32;
  double max_growth = 256.0;  // largest complexity multiple per step before bracketing (> 1)
  int64_t max_wall_ns =
      10'000'000'000;  // wall-time budget on the host clock, ns (checked between evaluations)
  uint64_t first_frame_id = 0;  // frame ids used: first_frame_id, +1, ...
  // A target below the GPU time of min_complexity: measure one more point to
  // name the top of the reachable range in the error (false: the error names
  // the bottom only; the automatic size search, which moves on anyway).
  bool estimate_top_when_unreachable = true;
  // Called after every evaluation (progress output). Optional.
  std::function<void(const LoadCalibrationStep&)> on_step;
  // Optional: once true, the calibration stops before its next frame with an
  // Error naming the size and the evaluation (see the file comment).
  const std::atomic<bool>* interrupt = nullptr;
};

enum class StepKind : uint8_t {
  search,  // a few frames, to move the search
  verify,  // verify_frames frames, to accept (or reject) a complexity
};

struct LoadCalibrationStep {
  uint32_t index = 0;  // 0-based evaluation number
  StepKind kind = StepKind::search;
  uint32_t complexity = 0;
  double median_ms = 0;           // median GPU time of the ok frames, ms
  double min_ms = 0, max_ms = 0;  // of the ok frames
  uint32_t frames_submitted = 0;  // including discarded warm-up frames
  uint32_t frames_used = 0;       // measured frames with ok timestamps
  uint32_t frames_missing = 0;    // measured frames without a usable GPU time
  double error_fraction = 0;      // (median - target) / target
  // Median of each repeat's ok frames, ms, in measurement order (a repeat
  // without an ok frame has none).
  std::vector<double> repeat_medians_ms;
  // (max - min) / median of repeat_medians_ms: the timing noise at this
  // point. nullopt with fewer than two repeat medians.
  std::optional<double> spread_fraction;
  std::string why;  // why this complexity was measured
  bool operator==(const LoadCalibrationStep&) const = default;
};

struct LoadCalibrationReport {
  // Settings echoed.
  double target_ms = 0;
  double tolerance = 0;
  uint32_t width = 0, height = 0, passes = 0;
  WorkloadForm form = WorkloadForm::compute;

  // Outcome.
  uint32_t complexity = 0;        // the chosen complexity
  bool verified = false;          // `gpu_ms` comes from a verification run
  bool within_tolerance = false;  // verified and |median - target| <= tolerance * target
  double median_ms = 0;           // median GPU time at `complexity` (verification's when verified)
  double error_fraction = 0;      // (median_ms - target_ms) / target_ms
  double p5_ms = 0;               // 5th percentile of the verification frames
  Distribution gpu_ms;  // verification frames at `complexity` (count, missing, p50..max), ms
  std::string outcome;  // one line: how the search ended
  // The device's timing noise: median of the steps' spread_fraction
  // (nullopt when no step measured a spread, e.g. repeats = 1).
  std::optional<double> noise_fraction;
  // The outcome is limited by that noise: it exceeds the tolerance and the
  // calibration missed it (or met it with a verification less precise than
  // the tolerance); the outcome says so.
  bool noise_limited = false;

  // How precisely `median_ms` is known: twice its relative standard error
  // (the frames' MAD and the repeats' spread, pooled over its
  // verifications); nullopt without a verification. Accepted only when it
  // is within the tolerance.
  std::optional<double> uncertainty_fraction;
  // GPU time of one complexity step at `complexity`, ms: the slope to the
  // measured point farthest away in complexity (the longest baseline, which
  // noise moves least); nullopt with a single point or no growth.
  std::optional<double> step_ms;
  // The target lies between two neighbouring complexities whose step is
  // larger than the tolerance: this size cannot reach it (a smaller size
  // needs more, finer steps; the automatic size search goes on there).
  bool granularity_limited = false;

  // Affine fit cost = fixed + per_complexity * complexity from the last two
  // points used to step; both nullopt when never fitted (never a made-up 0).
  std::optional<double> fit_fixed_ms;
  std::optional<double> fit_ms_per_complexity;

  std::vector<LoadCalibrationStep> steps;  // every evaluation, in order
  uint32_t evaluations = 0;
  uint64_t frames_submitted = 0;
  uint64_t frames_missing = 0;
  int64_t wall_ns = 0;         // host-clock time the calibration took
  uint64_t next_frame_id = 0;  // first frame id not used
  bool operator==(const LoadCalibrationReport&) const = default;
};

// Calibrates; see the file comment. Errors: invalid desc, a device that
// cannot time GPU work, device failures (with the frame), an evaluation in
// which fewer than half of the measured frames had usable timestamps, a
// target outside the reachable range (message gives the range), and an
// interrupt (desc.interrupt; message gives the size and evaluation).
Result<LoadCalibrationReport> calibrate_load(LatencyDevice& device,
                                             const LoadCalibrationDesc& desc = {});

// Frames one calibration with `desc` submits at most (warm-up included):
// max_evaluations * (discard_frames + max(repeats * frames_per_eval, verify_frames)).
uint64_t load_calibration_max_frames(const LoadCalibrationDesc& desc);

const char* to_string(StepKind kind);

}  // namespace latlab
