// The latency run: a software signal followed through every stage of a frame.
//
// Two threads per block. The generator thread sleeps to absolute deadlines of
// the seeded schedule (clock_nanosleep TIMER_ABSTIME, no polling), records its
// wake and the signal, and publishes the frame. The consumer thread blocks on
// the channel, runs the deterministic CPU step, submits the frame's GPU work
// through LatencyDevice and waits for it; GPU ticks go onto the host clock
// through the TickMapper. Deadlines are never re-based: when the consumer
// falls behind, signals keep their scheduled deadlines and queue (no
// coordinated omission), and the delay shows in signal_to_consumer_wake.
// The consumer starts first and prepares its thread for the device
// (LatencyDevice::prepare_thread: a driver's first-call cost on a new thread,
// 27 ms for NVIDIA GL); the block's schedule starts after that, so no frame
// pays it (BlockResult::thread_preparation_ns).
//
// The run is a discarded warm-up then K measured blocks. With several modes
// (Baseline and Loaded: the same path with another workload), every mode has
// its own warm-up and K blocks, and measured blocks interleave: block 0 of
// each mode in the given order, then block 1 of each, ... (B L B L ...); the
// blocks of one index share the same deadlines. With
// `bare_comparison` each measured block is followed by a reference block (the
// device's independent ReferencePath: no CPU step, its own prerecorded
// submit and wait, the same observers) and a raw clock_nanosleep block on the
// same deadlines, so the cost of measuring and the timer's own lateness are
// visible in the same run.
//
// With `poll_completion` a third thread, the poller, is armed right after
// each submit and spins on the frame's completion (bounded by
// poll_limit_ns) while the consumer blocks in its wait: both observe the
// same frame (fence_latency and poll_latency), and the poller's CPU time
// per frame is the poll_cpu diagnostic. The spinner takes a core for the
// frame's GPU time; on a machine with few cores it competes with the
// blocking waiter and the generator (docs/BENCHMARKS.md measures it).
//
// Failure: a device error or an interrupt stops the run after the frame in
// progress; the run comes back with `partial` set and the reason, holding
// every frame that was scheduled. Only invalid settings give an Error.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "latlab/bench/frame_markers.hpp"
#include "latlab/bench/present_markers.hpp"
#include "latlab/bench/schedule.hpp"
#include "latlab/bench/signal_generator.hpp"
#include "latlab/bench/tick_mapper.hpp"
#include "latlab/core/latency_device.hpp"
#include "latlab/core/present_path.hpp"
#include "latlab/host_time.hpp"
#include "latlab/result.hpp"
#include "latlab/stats.hpp"

namespace latlab {

// The GPU time a mode's frames were set up to take (Loaded: the load
// calibration's target), checked after the run against what they measured.
struct GpuTimeTarget {
  double target_ms = 0;     // GPU time per frame, ms (> 0)
  double tolerance = 0.02;  // accepted |median - target| / target, in (0, 0.5]
  bool operator==(const GpuTimeTarget&) const = default;
};

// One mode of a run: a name ("baseline", "loaded") and the GPU work of its frames.
struct LatencyModeDesc {
  std::string name = "baseline";
  FrameWorkload workload;
  std::optional<GpuTimeTarget> gpu_target;  // optional: see LatencyModeResult::gpu_target
  // Optional, with gpu_target: the re-check under the run's own conditions.
  // After the mode's warm-up block, the median GPU time of its later half is
  // compared with the target; off by more than half the tolerance, the
  // complexity moves by (target - median) / this slope (ms per complexity
  // step, > 0) before the measured blocks. GpuTargetCheck::warmup_check
  // records what was seen and done. nullopt: no re-check.
  std::optional<double> warmup_adjust_ms_per_complexity;
  bool operator==(const LatencyModeDesc&) const = default;
};

struct LatencyRunDesc {
  ScheduleDesc schedule;   // seed and interval range (default 8-12 ms, seed 1)
  uint32_t frames = 2500;  // measured frames over all blocks (>= blocks). Default 2500.
  uint32_t blocks =
      5;  // measured blocks (>= 1); frames split evenly, earlier blocks take the remainder
  uint32_t warmup_frames =
      100;  // frames run and recorded before block 0, left out of every distribution
  uint32_t cpu_step_iterations =
      2000;                      // CPU simulation step cost (hash rounds; ~2 us on a desktop core)
  FrameWorkload workload;        // the GPU work of a frame (Baseline: one minimal pass)
  int64_t timer_slack_ns = 1;    // generator threads' timer slack; 0 = leave it unchanged
  bool bare_comparison = false;  // add a bare-loop and a raw-sleep block after each measured block
  int64_t block_lead_ns =
      20'000'000;  // first deadline: start + thread preparation + lead + interval_0
  // Modes run in interleaved blocks. Empty: one mode "baseline" running
  // `workload`. Otherwise `workload` is unused; `frames`, `blocks` and
  // `warmup_frames` apply to each mode. Not combined with bare_comparison.
  std::vector<LatencyModeDesc> modes;
  uint64_t first_frame_id = 0;  // device frame ids start here (after frames used before the run)
  // The poll observer: a third thread spins on each frame's completion
  // (LatencyDevice::poll_target / open_poller) while the consumer blocks in
  // its wait; it gives poll_latency beside fence_latency. Default on.
  bool poll_completion = true;
  // Bound of one frame's spin on the host clock; past it the frame's poll
  // value is missing (counted as poll_limit), never 0. Default 20 ms.
  int64_t poll_limit_ns = 20'000'000;
  // Before every warm-up and measured block, the block's workload runs back
  // to back, unrecorded, for this long (0 = never). For interleaved device
  // runs (latency_devices.hpp): a device idles through the other devices'
  // turns, and its GPU may lower its clocks meanwhile.
  int64_t turn_warmup_ns = 0;
  bool operator==(const LatencyRunDesc&) const = default;
};

// The modes a desc runs: `modes`, or {"baseline", workload} when empty.
std::vector<LatencyModeDesc> effective_modes(const LatencyRunDesc& desc);

// Measured frames planned for block `block` (0-based) of each mode: `frames`
// split evenly over `blocks`, earlier blocks taking the remainder; 0 past
// the last block.
uint64_t planned_block_frames(const LatencyRunDesc& desc, uint32_t block);

// Invalid settings, with what to change.
Result<void> validate(const LatencyRunDesc& desc);

enum class BlockKind : uint8_t {
  warmup,     // latency path, discarded
  measured,   // latency path, summarised
  bare_loop,  // the reference path (ReferencePath) on the same deadlines (--bare)
  raw_sleep,  // clock_nanosleep alone on the same deadlines
};
std::string_view to_string(BlockKind k);

// Test scaffolding (src/bench/lockstep.hpp): one thread, scripted host delays.
struct LockstepScript;

struct RunProgress {
  BlockKind kind = BlockKind::warmup;
  uint32_t block = 0;     // index within its kind
  std::string_view mode;  // the block's mode name
  uint32_t blocks = 0;    // measured blocks
  uint64_t block_frames_done = 0;
  uint64_t block_frames = 0;
};

struct LatencyRunEnv {
  LatencyDevice* device = nullptr;  // required; driven from the consumer thread
  TickMapper* mapper = nullptr;     // optional: null -> nothing mapped, mapped stages missing.
                                    // run_latency calls start() and stop().
  HostTime* time = nullptr;  // optional: null -> RealHostTime. Must be the device's clock too.
  const std::atomic<bool>* interrupt = nullptr;  // optional: once true, the run stops (partial)
  std::function<void(const RunProgress&)>
      on_progress;                           // optional: called on the calling thread, ~4 Hz
  const LockstepScript* lockstep = nullptr;  // optional, tests only: see LockstepScript
  // optional: each frame is presented right after its submit (before its
  // wait); present markers go to LatencyRun::present_frames. run_latency
  // starts and stops its screen observers.
  PresentPath* present = nullptr;
  // optional: called on the calling thread right before and right after each
  // planned block (`order`: its position in the run); before_block may block
  // until the block may start. run_latency_interleaved uses them to make
  // several devices' runs take turns.
  std::function<void(uint32_t order)> before_block;
  std::function<void(uint32_t order)> after_block;
};

struct BlockResult {
  uint32_t order = 0;  // position in the run (0 = first block run)
  BlockKind kind = BlockKind::measured;
  uint32_t index = 0;               // index within its kind (and mode)
  uint32_t mode = 0;                // index into LatencyRun::modes
  uint64_t first_device_frame = 0;  // frame id given to the device for the block's first
                                    // frame; ids rise by one per frame in run order across
                                    // blocks (raw_sleep blocks use none)
  uint64_t first_frame = 0;         // warmup/measured: index into LatencyRun::frames;
                                    // bare_loop: into bare_frames; raw_sleep: into raw_lateness_ns
  uint64_t frames_planned = 0;
  uint64_t frames_run = 0;  // frames scheduled (< planned only when the run stopped)
  int64_t start_ns = 0;     // host clock
  int64_t end_ns = 0;
  SeriesDistributions series{};  // warmup/measured/bare_loop: every series
  MissingBreakdown missing;      // warmup/measured/bare_loop
  uint64_t consumer_behind = 0;  // frames whose signal was already pending when the consumer looked
  Distribution bare_latency;     // bare_loop: fence wake - signal, us (= its fence_latency series)
  Distribution raw_lateness;     // raw_sleep: wake - deadline, us
  int64_t generator_cpu_ns = 0;  // CPU time of the block's sleeping thread (generator or raw loop)
  uint64_t turn_warmup_frames = 0;  // unrecorded frames run right before the block (turn_warmup_ns)
  int64_t turn_warmup_wall_ns = 0;
  // The block's consumer thread's LatencyDevice::prepare_thread(), ns of the
  // run's clock, before the block's schedule began (so inside no frame);
  // nullopt when the block prepared no thread (raw_sleep).
  std::optional<int64_t> thread_preparation_ns;
  bool operator==(const BlockResult&) const = default;
};

// A reference-path frame: a FrameRecord without CPU-step markers.
using BareFrame = FrameRecord;

// latlab's own work beside the frames, which may delay them without being
// any stage of theirs: today the clock model's refreshes (calibration pairs
// sampled on the calibrator's thread, through the device). Host clock ns.
struct BookkeepingSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  bool operator==(const BookkeepingSpan&) const = default;
};

// How a mode's measured frames met latlab's bookkeeping. A frame overlaps
// when some span intersects its path [signal, its last completion marker].
struct BookkeepingSummary {
  uint64_t frames_overlapped = 0;
  Distribution overlap;                  // us of span inside the path, overlapped frames
  Distribution core_latency_overlapped;  // core latency of the overlapped frames, us
  Distribution core_latency_clear;       // and of the others, us
  bool operator==(const BookkeepingSummary&) const = default;
};

// The time (ns) `spans` (sorted by start, none overlapping another) overlap
// frame `f`'s path [signal, latest of submit_end, gpu_end_host, fence_wake,
// poll_wake], 0 when none does; nullopt when the frame has no signal or no
// later marker.
std::optional<int64_t> bookkeeping_overlap_ns(const FrameRecord& f,
                                              std::span<const BookkeepingSpan> spans);
// A mode's measured GPU time against its target: the median gpu_execution of
// its measured frames. Outside the tolerance the mode did not run the load it
// was set up for (a busy CPU device measures other frames than calibration
// did): it is off target, and every reporter says so.
// The re-check of a mode's GPU time in its warm-up block
// (LatencyModeDesc::warmup_adjust_ms_per_complexity).
struct WarmupCheck {
  uint64_t frames_used = 0;  // warm-up frames (the later half) with a GPU time
  // Their median GPU time, ms; nullopt when none had one (then nothing moved).
  std::optional<double> median_ms;
  uint32_t complexity_before = 0;  // as calibrated
  uint32_t complexity_after = 0;   // the measured blocks' complexity (== before: not moved)
  std::string outcome;             // one line: what was seen and why it moved or not
  bool operator==(const WarmupCheck&) const = default;
};

struct GpuTargetCheck {
  GpuTimeTarget target;
  std::optional<double> measured_ms;        // nullopt when no measured frame had a GPU time
  std::optional<double> error_fraction;     // (measured_ms - target_ms) / target_ms
  std::optional<bool> off_target;           // |error_fraction| > tolerance; nullopt as measured_ms
  std::optional<WarmupCheck> warmup_check;  // set when the mode was re-checked in its warm-up
  bool operator==(const GpuTargetCheck&) const = default;
};

// Checks `gpu_execution_us` (a mode's gpu_execution distribution, us) against `target`.
GpuTargetCheck check_gpu_target(const GpuTimeTarget& target, const Distribution& gpu_execution_us);

// Distributions of one mode over its measured frames.
struct LatencyModeResult {
  std::string name;
  FrameWorkload workload;
  uint64_t measured_frames = 0;  // frames run in the mode's measured blocks
  SeriesDistributions total{};
  MissingBreakdown total_missing;
  uint64_t consumer_behind = 0;
  PresentDistributions present;  // with a present path: the present stages and screen observers
  BookkeepingSummary bookkeeping;
  std::optional<GpuTargetCheck> gpu_target;  // set when the mode's desc has a gpu_target
  bool operator==(const LatencyModeResult&) const = default;
};

struct LatencyRun {
  LatencyRunDesc desc;
  DeviceInfo device;
  std::string time_source;  // HostTime::name()
  std::string execution;    // "threads" or "lockstep"
  TimerSlack timer_slack;   // as set on the first generator thread
  ClockModelReport clock_model;
  std::vector<MissingCapability> unavailable;  // device's missing list + what the run found
  // latlab's own work beside the frames, sorted by start: the clock model's
  // refresh windows. Empty unless the frames ran on the real host clock.
  std::vector<BookkeepingSpan> bookkeeping;

  // Per mode (in mode order): its warm-up frames, then its measured blocks in
  // order. A record's device frame id is its block's first_device_frame + the
  // offset in the block.
  std::vector<FrameRecord> frames;
  std::vector<BlockResult> blocks;       // in run order
  std::vector<LatencyModeResult> modes;  // in desc order (at least one)
  SeriesDistributions total{};           // over every measured frame of modes[0]
  MissingBreakdown total_missing;        // modes[0]
  uint64_t consumer_behind = 0;          // over measured frames of modes[0]
  uint64_t next_frame_id = 0;            // first device frame id the run did not use

  // With a present path (LatencyRunEnv::present): one record per `frames`
  // entry (same index), the path as it ran, and present calls that failed
  // (their frames' present markers are missing; the run went on).
  std::vector<PresentRecord> present_frames;
  std::optional<PresentInfo> present;
  uint64_t present_errors = 0;
  std::string present_first_error;

  // bare comparison (empty unless desc.bare_comparison). Without a reference
  // path (LatencyDevice::open_reference failed: its reason is in
  // `unavailable`) no bare_loop block runs and the reference sides are empty.
  std::vector<FrameRecord> bare_frames;  // reference frames, by bare_loop block
  std::vector<int64_t> raw_lateness_ns;
  std::string reference_what;             // ReferencePath::what(), "" without one
  SeriesDistributions reference_total{};  // every series over the reference frames
  MissingBreakdown reference_missing;
  Distribution bare_total;  // reference fence latency (fence wake - signal), us
  Distribution raw_total;   // clock_nanosleep lateness, us
  // Measured core latency minus its deliberate parts, paired frame by frame
  // with the reference frame on the same deadline: core_latency -
  // cpu_processing - (gpu_execution - reference gpu_execution), us. A pair
  // lacking any of them is missing.
  Distribution core_latency_without_deliberate;

  bool polled = false;           // the poll observer ran (desc.poll_completion and a poller opened)
  int64_t generator_cpu_ns = 0;  // generator threads, measured blocks
  int64_t generator_wall_ns = 0;
  int64_t raw_sleep_cpu_ns = 0;  // raw-sleep threads
  int64_t raw_sleep_wall_ns = 0;
  uint64_t cpu_checksum = 0;  // XOR of every CPU step's hash (deterministic per settings)

  int64_t started_ns = 0;  // host clock
  int64_t finished_ns = 0;
  bool partial = false;
  std::string partial_reason;

  uint64_t measured_frames_run() const;  // every mode
  bool operator==(const LatencyRun&) const = default;
};

// Runs the benchmark. Error only for invalid settings or a missing device.
Result<LatencyRun> run_latency(const LatencyRunDesc& desc, const LatencyRunEnv& env);

}  // namespace latlab
