#include "latlab/bench/latency_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <thread>

#include "bench/completion_poll.hpp"
#include "bench/final_mapping.hpp"
#include "bench/lockstep.hpp"
#include "bench/turn_warmup.hpp"
#include "bench/warmup_check.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {

std::string_view to_string(BlockKind k) {
  switch (k) {
    case BlockKind::warmup:
      return "warmup";
    case BlockKind::measured:
      return "measured";
    case BlockKind::bare_loop:
      return "bare_loop";
    case BlockKind::raw_sleep:
      return "raw_sleep";
  }
  return "unknown";
}

std::optional<int64_t> bookkeeping_overlap_ns(const FrameRecord& f,
                                              std::span<const BookkeepingSpan> spans) {
  if (!f.has(Marker::signal)) return std::nullopt;
  const int64_t begin = f.signal_ns;
  std::optional<int64_t> end;
  for (const Marker m :
       {Marker::submit_end, Marker::gpu_end_host, Marker::fence_wake, Marker::poll_wake}) {
    if (f.has(m)) end = std::max(end.value_or(f.host_ns(m)), f.host_ns(m));
  }
  if (!end || *end < begin) return std::nullopt;
  // From the last span beginning before the path ends, back to the first
  // that ends before it begins (spans do not overlap, so ends are sorted too).
  auto it = std::upper_bound(spans.begin(), spans.end(), *end,
                             [](int64_t t, const BookkeepingSpan& s) { return t < s.start_ns; });
  int64_t overlap = 0;
  while (it != spans.begin()) {
    --it;
    const int64_t lo = std::max(begin, it->start_ns);
    const int64_t hi = std::min(*end, it->end_ns);
    if (hi > lo) overlap += hi - lo;
    if (it->end_ns <= begin) break;
  }
  return overlap;
}

uint64_t LatencyRun::measured_frames_run() const {
  uint64_t n = 0;
  for (const BlockResult& b : blocks) {
    if (b.kind == BlockKind::measured) n += b.frames_run;
  }
  return n;
}

std::vector<LatencyModeDesc> effective_modes(const LatencyRunDesc& desc) {
  if (desc.modes.empty())
    return {LatencyModeDesc{"baseline", desc.workload, std::nullopt, std::nullopt}};
  return desc.modes;
}

GpuTargetCheck check_gpu_target(const GpuTimeTarget& target, const Distribution& gpu_execution_us) {
  GpuTargetCheck c;
  c.target = target;
  if (gpu_execution_us.empty()) return c;
  c.measured_ms = gpu_execution_us.p50 / 1000.0;
  c.error_fraction = (*c.measured_ms - target.target_ms) / target.target_ms;
  c.off_target = std::fabs(*c.error_fraction) > target.tolerance;
  return c;
}

uint64_t planned_block_frames(const LatencyRunDesc& desc, uint32_t block) {
  if (desc.blocks == 0 || block >= desc.blocks) return 0;
  return desc.frames / desc.blocks + (block < desc.frames % desc.blocks ? 1 : 0);
}

namespace {
Result<void> validate_workload(const FrameWorkload& w, const std::string& what) {
  if (w.passes < 1) return make_error(what + " needs at least one pass");
  if (w.complexity < kMinComplexity || w.complexity > kMaxComplexity) {
    return make_error(what + " complexity must be in " + std::to_string(kMinComplexity) + ".." +
                      std::to_string(kMaxComplexity));
  }
  return {};
}
}  // namespace

Result<void> validate(const LatencyRunDesc& d) {
  if (d.schedule.min_interval_ns <= 0) {
    return make_error("the shortest interval must be above 0 ms");
  }
  if (d.schedule.max_interval_ns < d.schedule.min_interval_ns) {
    return make_error("the interval range is reversed: give it as MIN-MAX with MIN <= MAX");
  }
  if (d.schedule.max_interval_ns > 10'000'000'000) {
    return make_error("intervals above 10 s are not supported");
  }
  if (d.blocks < 1) return make_error("at least one block is needed (--blocks >= 1)");
  if (d.frames < d.blocks) {
    return make_error("fewer frames than blocks: every block needs at least one frame");
  }
  for (const LatencyModeDesc& m : effective_modes(d)) {
    if (Result<void> w = validate_workload(m.workload, "the " + m.name + " workload"); !w) return w;
    if (m.name.empty()) return make_error("every mode needs a name");
    if (m.gpu_target &&
        (!(m.gpu_target->target_ms > 0) || !std::isfinite(m.gpu_target->target_ms) ||
         !(m.gpu_target->tolerance > 0) || m.gpu_target->tolerance > 0.5)) {
      return make_error("the " + m.name +
                        " GPU time target needs target_ms > 0 and a tolerance in (0, 0.5]");
    }
    if (m.warmup_adjust_ms_per_complexity &&
        (!m.gpu_target || !(*m.warmup_adjust_ms_per_complexity > 0) ||
         !std::isfinite(*m.warmup_adjust_ms_per_complexity))) {
      return make_error("the " + m.name +
                        " warm-up re-check needs a GPU time target and a slope > 0 ms per step");
    }
  }
  if (d.modes.size() > 1 && d.bare_comparison) {
    return make_error("the bare-loop comparison runs with one mode only (--mode baseline)");
  }
  if (d.timer_slack_ns < 0) return make_error("timer slack cannot be negative");
  if (d.poll_completion && d.poll_limit_ns <= 0)
    return make_error("the poll spin limit must be above 0 (--poll-limit-us)");
  if (d.block_lead_ns < 0) return make_error("block lead cannot be negative");
  if (d.turn_warmup_ns < 0 || d.turn_warmup_ns > 60'000'000'000)
    return make_error("the turn warm-up must be 0..60000 ms (--turn-warmup-ms)");
  return {};
}

namespace {

int64_t script_ns(const std::function<int64_t(uint64_t)>& f, uint64_t id) {
  return f ? std::max<int64_t>(0, f(id)) : 0;
}

// State shared by the threads of a run. The consumer is the only writer of
// `checksum` and `error`; both are read after the threads are joined.
struct Ctx {
  Ctx(const LatencyRunDesc& d, LatencyDevice& dev, TickMapper* m, HostTime& t,
      const LockstepScript* s, const std::atomic<bool>* i)
      : desc(d), device(dev), mapper(m), time(t), script(s), interrupt(i) {}
  const LatencyRunDesc& desc;
  LatencyDevice& device;
  TickMapper* mapper;
  HostTime& time;
  const LockstepScript* script;
  const std::atomic<bool>* interrupt;
  std::atomic<bool> failed{false};
  std::string error;
  uint64_t checksum = 0;
  const FrameWorkload* workload = nullptr;    // the current block's mode's work (set per block)
  std::atomic<uint64_t> done{0};              // frames the current block has finished (progress)
  PresentPath* present = nullptr;             // optional present path
  ReferencePath* reference = nullptr;         // --bare: the independent reference path
  PollThread* poll_thread = nullptr;          // the poll observer (threads)
  CompletionPoller* inline_poller = nullptr;  // the poll observer (lockstep)
  uint64_t present_errors = 0;                // consumer thread only
  std::string present_first_error;

  bool interrupted() const {
    return interrupt != nullptr && interrupt->load(std::memory_order_relaxed);
  }
  bool stop_requested() const { return interrupted() || failed.load(std::memory_order_acquire); }
  void fail(std::string message) {
    error = std::move(message);
    failed.store(true, std::memory_order_release);
  }
};

// Generator side of one frame: wait for the deadline, record wake and signal.
void generator_frame(Ctx& c, FrameRecord& r, uint64_t id, int64_t deadline) {
  if (c.script != nullptr) {
    c.time.sleep_until(deadline + script_ns(c.script->timer_lateness_ns, id));
  } else {
    c.time.sleep_until(deadline);
  }
  r.generator_wake_ns = c.time.now_ns();
  if (c.script != nullptr) {
    c.time.sleep_until(r.generator_wake_ns + script_ns(c.script->wake_to_signal_ns, id));
  }
  r.signal_ns = c.time.now_ns();
  r.deadline_ns = deadline;
  r.set(Marker::deadline);
  r.set(Marker::generator_wake);
  r.set(Marker::signal);
}

// Consumer side of one frame. False when the device failed (recorded in ctx).
// The present call right after the frame's submit; a failure leaves the
// frame's present markers missing and the run goes on.
void present_frame(Ctx& c, PresentRecord& p, uint64_t id) {
  const Result<PresentTimes> t = c.present->present(id);
  if (!t) {
    if (c.present_errors++ == 0)
      c.present_first_error = "frame " + std::to_string(id) + ": " + t.error().message;
    return;
  }
  p.present_start_ns = t->present_start_ns;
  p.present_end_ns = t->present_end_ns;
  p.present = PresentRecord::kStart | PresentRecord::kEnd;
  if (t->present_complete_ns) {
    p.present_complete_ns = *t->present_complete_ns;
    p.present = static_cast<uint8_t>(p.present | PresentRecord::kComplete);
  }
}

// What the poller saw, into the frame's markers.
void record_poll(FrameRecord& r, const PollOutcome& o) {
  r.poll_status = o.status;
  r.flags |= kFramePolled;
  r.poll_cpu_ns =
      static_cast<uint32_t>(std::clamp<int64_t>(o.cpu_ns, 0, std::numeric_limits<uint32_t>::max()));
  if (o.status == QueryStatus::ok) {
    r.poll_wake_ns = o.seen_ns;
    r.set(Marker::poll_wake);
  }
}

// Lockstep: the poll loop on this thread, before the blocking wait.
void poll_lockstep(Ctx& c, FrameRecord& r, const PollTarget& target) {
  if (c.inline_poller == nullptr || c.script == nullptr) return;
  record_poll(r, poll_inline(*c.inline_poller, target, c.time, c.desc.poll_limit_ns,
                             std::max<int64_t>(1, c.script->poll_step_ns)));
}

// What the wait observed, into the frame's markers. The GPU ticks are mapped
// onto the host clock after the run (final_mapping.hpp).
void record_completion(FrameRecord& r, const GpuFrameTiming& timing) {
  r.gpu_status = timing.gpu_status;
  r.fence_status = timing.fence_status;
  if (timing.fence_status == QueryStatus::ok) {
    r.fence_wake_ns = timing.fence_wake_ns;
    r.set(Marker::fence_wake);
  }
  if (timing.gpu_status != QueryStatus::ok) return;
  r.gpu_begin_ticks = timing.gpu_begin_ticks;
  r.gpu_end_ticks = timing.gpu_end_ticks;
  r.set(Marker::gpu_begin);
  r.set(Marker::gpu_end);
}

// The poll observer for one frame: armed right after the submit (threads)
// or run to completion before the blocking wait (lockstep). `target` is
// nullopt when the frame cannot be polled.
bool arm_poll(Ctx& c, const std::optional<PollTarget>& target) {
  if (!target) return false;
  if (c.poll_thread != nullptr) {
    c.poll_thread->arm(*target);
    return true;
  }
  return c.inline_poller != nullptr;
}

// Ends the frame's poll (`failed`: the blocking wait failed, stop the spin)
// and puts what it saw into the frame's markers.
void finish_poll(Ctx& c, FrameRecord& r, bool failed) {
  // Lockstep recorded its poll before the wait (poll_lockstep).
  if (c.poll_thread != nullptr) record_poll(r, c.poll_thread->finish(failed));
}

bool consumer_frame(Ctx& c, FrameRecord& r, PresentRecord* p, uint64_t id, bool was_pending) {
  if (c.script != nullptr) {
    c.time.sleep_until(r.signal_ns + script_ns(c.script->consumer_wake_delay_ns, id));
  }
  r.consumer_wake_ns = c.time.now_ns();
  r.set(Marker::consumer_wake);
  if (was_pending) r.flags |= kFrameConsumerBehind;

  r.cpu_start_ns = c.time.now_ns();
  if (c.script != nullptr) {
    c.time.sleep_until(r.cpu_start_ns + script_ns(c.script->cpu_cost_ns, id));
  } else {
    c.checksum ^= cpu_simulation_step(id, c.desc.cpu_step_iterations);
  }
  r.cpu_end_ns = c.time.now_ns();
  r.set(Marker::cpu_start);
  r.set(Marker::cpu_end);
  if (c.script != nullptr) {
    c.time.sleep_until(r.cpu_end_ns + script_ns(c.script->cpu_to_submit_ns, id));
  }

  r.submit_start_ns = c.time.now_ns();
  r.set(Marker::submit_start);
  const Result<void> submitted = c.device.submit_frame(id, *c.workload);
  const int64_t submit_end = c.time.now_ns();
  if (!submitted) {
    r.flags |= kFrameDeviceError;
    c.fail("submitting frame " + std::to_string(id) + " failed: " + submitted.error().message);
    return false;
  }
  r.submit_end_ns = submit_end;
  r.set(Marker::submit_end);
  const std::optional<PollTarget> target = c.poll_thread != nullptr || c.inline_poller != nullptr
                                               ? c.device.poll_target(id)
                                               : std::nullopt;
  const bool polling = arm_poll(c, target);
  if (p != nullptr) present_frame(c, *p, id);
  if (polling) poll_lockstep(c, r, *target);

  const Result<GpuFrameTiming> timing = c.device.wait_frame(id);
  if (polling) finish_poll(c, r, !timing);
  if (!timing) {
    r.flags |= kFrameDeviceError;
    c.fail("waiting for frame " + std::to_string(id) + " failed: " + timing.error().message);
    return false;
  }
  record_completion(r, *timing);
  return true;
}

// Consumer side of one reference frame (--bare): no CPU step, the reference
// path's own submit and wait, the same markers otherwise.
bool consumer_reference_frame(Ctx& c, ReferencePath& ref, FrameRecord& r, uint64_t id,
                              bool was_pending) {
  r.consumer_wake_ns = c.time.now_ns();
  r.set(Marker::consumer_wake);
  if (was_pending) r.flags |= kFrameConsumerBehind;
  r.submit_start_ns = c.time.now_ns();
  r.set(Marker::submit_start);
  const Result<void> submitted = ref.submit(id);
  const int64_t submit_end = c.time.now_ns();
  if (!submitted) {
    r.flags |= kFrameDeviceError;
    c.fail("submitting reference frame " + std::to_string(id) +
           " failed: " + submitted.error().message);
    return false;
  }
  r.submit_end_ns = submit_end;
  r.set(Marker::submit_end);
  const std::optional<PollTarget> target =
      c.poll_thread != nullptr || c.inline_poller != nullptr ? ref.poll_target(id) : std::nullopt;
  const bool polling = arm_poll(c, target);
  if (polling) poll_lockstep(c, r, *target);
  const Result<GpuFrameTiming> timing = ref.wait(id);
  if (polling) finish_poll(c, r, !timing);
  if (!timing) {
    r.flags |= kFrameDeviceError;
    c.fail("waiting for reference frame " + std::to_string(id) +
           " failed: " + timing.error().message);
    return false;
  }
  record_completion(r, *timing);
  return true;
}

// Lets the calling thread report progress about every 250 ms until the
// consumer calls finish() (a timed wait on a condition variable, no polling).
class ProgressWaiter {
 public:
  void finish() {
    {
      std::lock_guard lock(m_);
      done_ = true;
    }
    cv_.notify_all();
  }
  template <class F>
  void wait(F&& report) {
    std::unique_lock lock(m_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(250), [&] { return done_; })) {
      lock.unlock();
      report();
      lock.lock();
    }
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
};

struct BlockOutcome {
  uint64_t frames_run = 0;
  int64_t sleeper_cpu_ns = 0;  // CPU of the thread that slept to the deadlines
  int64_t sleeper_wall_ns = 0;
  TimerSlack slack;
  std::optional<int64_t> preparation_ns;  // the consumer's prepare_thread(); none for raw sleep
};

// The calling thread's LatencyDevice::prepare_thread(), timed on the run's
// clock into `out`; false (the run failed, saying why) when it failed.
bool prepare_consumer(Ctx& c, BlockOutcome& out) {
  const int64_t t0 = c.time.now_ns();
  const Result<void> prepared = c.device.prepare_thread();
  out.preparation_ns = c.time.now_ns() - t0;
  if (!prepared) {
    c.fail("preparing the consumer thread for the device failed: " + prepared.error().message);
    return false;
  }
  return true;
}

using ProgressFn = std::function<void(uint64_t done)>;

// run_frame_loop with scripted time: signal and consume on the caller's
// thread, one frame at a time.
template <class Signal, class Consume>
void run_lockstep(Ctx& c, uint64_t n, Schedule& sched, BlockOutcome& out, Signal& signal,
                  Consume& consume) {
  if (!prepare_consumer(c, out)) return;
  int64_t deadline = c.time.now_ns() + c.desc.block_lead_ns;
  uint64_t i = 0;
  for (; i < n && !c.stop_requested(); ++i) {
    deadline += sched.next_interval_ns();
    signal(i, deadline);
    if (!consume(i, false)) {
      ++i;
      break;
    }
  }
  out.frames_run = i;
}

// run_frame_loop's generator thread: signals each frame at its deadline
// from `first_base` and publishes it on `channel`, which it closes at the end.
template <class Signal>
void generate_frames(Ctx& c, uint64_t n, Schedule& sched, int64_t first_base, bool measure_sleeper,
                     SignalChannel& channel, BlockOutcome& out, Signal& signal) {
  out.slack = set_thread_timer_slack(c.desc.timer_slack_ns);
  const int64_t cpu0 = thread_cpu_time_ns();
  const int64_t wall0 = host_now_ns();
  int64_t deadline = first_base;
  uint64_t i = 0;
  for (; i < n && !c.stop_requested(); ++i) {
    deadline += sched.next_interval_ns();
    signal(i, deadline);
    channel.publish(i + 1);
  }
  channel.close();
  out.frames_run = i;
  if (measure_sleeper) {
    out.sleeper_cpu_ns = thread_cpu_time_ns() - cpu0;
    out.sleeper_wall_ns = host_now_ns() - wall0;
  }
}

// The frame loop both the latency path and the bare loop run: frame i's
// deadline from the schedule, `signal(i, deadline)` on the generator thread
// (it sleeps to the deadline), `consume(i, was_pending)` on the consumer
// thread once the signal is published; false from consume ends the block.
// frames_run counts the frames consumed.
// With scripted time both run in lockstep on the caller's thread.
// The consumer (the caller in lockstep) prepares its thread for the device
// first; the schedule starts after that, so no frame pays for it. A failed
// preparation runs no frame.
// `measure_sleeper`: record the generator thread's CPU and wall time.
template <class Signal, class Consume>
BlockOutcome run_frame_loop(Ctx& c, uint64_t n, Schedule sched, bool measure_sleeper,
                            const ProgressFn& progress, Signal signal, Consume consume) {
  BlockOutcome out;
  c.done.store(0, std::memory_order_relaxed);

  if (c.script != nullptr) {  // lockstep: one thread, scripted delays
    run_lockstep(c, n, sched, out, signal, consume);
    return out;
  }

  // The consumer starts first and prepares; the schedule's base is taken
  // once it is ready, and only then does the generator start.
  SignalChannel channel;
  ProgressWaiter waiter;
  std::promise<bool> ready_promise;
  std::future<bool> ready = ready_promise.get_future();
  uint64_t consumed = 0;
  std::thread consumer([&] {
    if (!prepare_consumer(c, out)) {
      ready_promise.set_value(false);
      waiter.finish();
      return;
    }
    ready_promise.set_value(true);
    uint64_t i = 0;
    // An interrupt stops the consumer too, between frames (nothing is in
    // flight there): the generator may be far ahead (an accelerated sim was
    // 1.27M frames ahead), and draining that backlog took minutes.
    while (!c.interrupted()) {
      const SignalChannel::Wait w = channel.wait_for(i);
      if (!w.available) break;
      const bool ok = consume(i, w.was_pending);
      c.done.store(++i, std::memory_order_relaxed);
      if (!ok) break;
    }
    consumed = i;
    waiter.finish();
  });
  if (!ready.get()) {
    consumer.join();
    return out;  // no frame ran (the reason is in the run's error)
  }
  const int64_t first_base = c.time.now_ns() + c.desc.block_lead_ns;
  std::thread generator(
      [&] { generate_frames(c, n, sched, first_base, measure_sleeper, channel, out, signal); });
  if (progress) {
    waiter.wait([&] { progress(c.done.load(std::memory_order_relaxed)); });
  }
  consumer.join();
  generator.join();
  // The block's frames are those consumed: signalled ones the consumer never
  // took have no device markers, and were not run.
  out.frames_run = std::min(out.frames_run, consumed);
  return out;
}

// Latency path (warm-up or measured), threaded or lockstep.
// `pres`: the frames' present records, empty without a present path.
BlockOutcome run_path_block(Ctx& c, std::span<FrameRecord> recs, std::span<PresentRecord> pres,
                            uint64_t first_id, Schedule sched, const ProgressFn& progress) {
  return run_frame_loop(
      c, recs.size(), sched, /*measure_sleeper=*/true, progress,
      [&](uint64_t i, int64_t deadline) { generator_frame(c, recs[i], first_id + i, deadline); },
      [&](uint64_t i, bool was_pending) {
        return consumer_frame(c, recs[i], pres.empty() ? nullptr : &pres[i], first_id + i,
                              was_pending);
      });
}

// The reference path (--bare) on the same schedule: the generator as in the
// measured path, the reference's own submit and wait on the consumer.
BlockOutcome run_reference_block(Ctx& c, std::span<FrameRecord> recs, uint64_t first_id,
                                 Schedule sched, const ProgressFn& progress) {
  return run_frame_loop(
      c, recs.size(), sched, /*measure_sleeper=*/false, progress,
      [&](uint64_t i, int64_t deadline) { generator_frame(c, recs[i], first_id + i, deadline); },
      [&](uint64_t i, bool was_pending) {
        return consumer_reference_frame(c, *c.reference, recs[i], first_id + i, was_pending);
      });
}

// clock_nanosleep alone on the same deadlines: the timer's own lateness.
BlockOutcome run_raw_sleep_block(Ctx& c, std::span<int64_t> lateness, Schedule sched) {
  BlockOutcome out;
  const int64_t first_base = c.time.now_ns() + c.desc.block_lead_ns;
  auto body = [&] {
    const int64_t cpu0 = thread_cpu_time_ns();
    const int64_t wall0 = host_now_ns();
    int64_t deadline = first_base;
    uint64_t i = 0;
    for (; i < lateness.size() && !c.interrupted(); ++i) {
      deadline += sched.next_interval_ns();
      c.time.sleep_until(deadline);
      lateness[i] = c.time.now_ns() - deadline;
    }
    out.frames_run = i;
    out.sleeper_cpu_ns = thread_cpu_time_ns() - cpu0;
    out.sleeper_wall_ns = host_now_ns() - wall0;
  };
  if (c.script != nullptr) {
    body();
  } else {
    std::thread t([&] {
      out.slack = set_thread_timer_slack(c.desc.timer_slack_ns);
      body();
    });
    t.join();
  }
  return out;
}

Distribution summarize_ns(std::span<const int64_t> ns) {
  std::vector<double> v;
  v.reserve(ns.size());
  for (int64_t x : ns) v.push_back(static_cast<double>(x) / 1000.0);
  return summarize_in_place(v, 0);
}

struct PlannedBlock {
  BlockKind kind;
  uint32_t index;
  uint32_t mode;
  uint64_t first;  // into frames / bare_frames / raw_lateness_ns
  uint64_t count;
  uint64_t schedule_start;  // interval index of the block's first frame
};

// The plan: warm-up, then per block measured [+ bare + raw sleep], the
// comparison blocks on the measured block's own deadlines.
// With several modes: each mode's warm-up, then block b of every mode in
// mode order (B L B L ...), block b of each mode on the same deadlines.
// Mode m's frames (warm-up, then measured) start at m * per_mode.
std::vector<PlannedBlock> plan_blocks(const LatencyRunDesc& desc, uint32_t mode_count,
                                      uint64_t per_mode, bool reference) {
  std::vector<PlannedBlock> plan;
  for (uint32_t m = 0; m < mode_count; ++m) {
    if (desc.warmup_frames > 0)
      plan.push_back({BlockKind::warmup, 0, m, m * per_mode, desc.warmup_frames, 0});
  }
  uint64_t first = desc.warmup_frames;
  uint64_t first_cmp = 0;
  for (uint32_t b = 0; b < desc.blocks; ++b) {
    const uint64_t n = planned_block_frames(desc, b);
    for (uint32_t m = 0; m < mode_count; ++m)
      plan.push_back({BlockKind::measured, b, m, m * per_mode + first, n, first});
    if (desc.bare_comparison) {
      if (reference) plan.push_back({BlockKind::bare_loop, b, 0, first_cmp, n, first});
      plan.push_back({BlockKind::raw_sleep, b, 0, first_cmp, n, first});
    }
    first += n;
    first_cmp += n;
  }
  return plan;
}

// Runs planned block `p` into its slice of the run's storage, device frame
// ids from `first_device_frame`.
BlockOutcome run_planned_block(Ctx& c, LatencyRun& run, const PlannedBlock& p,
                               uint64_t first_device_frame, Schedule& sched,
                               const ProgressFn& progress) {
  switch (p.kind) {
    case BlockKind::warmup:
    case BlockKind::measured:
      return run_path_block(c, std::span(run.frames).subspan(p.first, p.count),
                            run.present_frames.empty()
                                ? std::span<PresentRecord>()
                                : std::span(run.present_frames).subspan(p.first, p.count),
                            first_device_frame, sched, progress);
    case BlockKind::bare_loop:
      return run_reference_block(c, std::span(run.bare_frames).subspan(p.first, p.count),
                                 first_device_frame, sched, progress);
    case BlockKind::raw_sleep:
      return run_raw_sleep_block(c, std::span(run.raw_lateness_ns).subspan(p.first, p.count),
                                 sched);
  }
  return BlockOutcome{};
}

// Adds the block's generator CPU and wall time to the run's totals.
void add_sleeper_time(LatencyRun& run, BlockKind kind, const BlockOutcome& o) {
  if (kind == BlockKind::measured) {
    run.generator_cpu_ns += o.sleeper_cpu_ns;
    run.generator_wall_ns += o.sleeper_wall_ns;
  } else if (kind == BlockKind::raw_sleep) {
    run.raw_sleep_cpu_ns += o.sleeper_cpu_ns;
    run.raw_sleep_wall_ns += o.sleeper_wall_ns;
  }
}

// A block as the partial reason names it: "[mode ]kind block i".
std::string block_name(BlockKind kind, uint32_t index, const std::string& mode_name,
                       uint32_t mode_count) {
  return (mode_count > 1 ? mode_name + " " : std::string()) + std::string(to_string(kind)) +
         " block " + std::to_string(index);
}

// Marks the run partial at the first block that ran short, saying where and why.
void mark_short_block(LatencyRun& run, const Ctx& c, const BlockResult& br,
                      const std::string& mode_name, uint32_t mode_count) {
  if (br.frames_run >= br.frames_planned || run.partial) return;
  run.partial = true;
  const std::string where = block_name(br.kind, br.index, mode_name, mode_count) + " after " +
                            std::to_string(br.frames_run) + " of " +
                            std::to_string(br.frames_planned) + " frames";
  run.partial_reason =
      c.failed.load() ? c.error + " (in " + where + ")" : "interrupted in " + where;
}

// Per-block distributions; counts each mode's measured frames run.
std::vector<uint64_t> summarize_blocks(LatencyRun& run, uint32_t mode_count) {
  const TickFormat& ticks = run.device.ticks;
  std::vector<uint64_t> measured_count(mode_count, 0);
  for (BlockResult& b : run.blocks) {
    switch (b.kind) {
      case BlockKind::warmup:
      case BlockKind::measured: {
        const auto span =
            std::span<const FrameRecord>(run.frames).subspan(b.first_frame, b.frames_run);
        b.series = summarize_frames(span, ticks);
        b.missing = count_missing(span);
        for (const FrameRecord& f : span)
          b.consumer_behind += (f.flags & kFrameConsumerBehind) ? 1 : 0;
        if (b.kind == BlockKind::measured) measured_count[b.mode] += b.frames_run;
        break;
      }
      case BlockKind::bare_loop: {
        const auto span =
            std::span<const FrameRecord>(run.bare_frames).subspan(b.first_frame, b.frames_run);
        b.series = summarize_frames(span, ticks);
        b.missing = count_missing(span);
        b.bare_latency = b.series[static_cast<size_t>(Series::fence_latency)];
        for (const FrameRecord& f : span)
          b.consumer_behind += (f.flags & kFrameConsumerBehind) ? 1 : 0;
        break;
      }
      case BlockKind::raw_sleep:
        b.raw_lateness = summarize_ns(
            std::span<const int64_t>(run.raw_lateness_ns).subspan(b.first_frame, b.frames_run));
        break;
    }
  }
  return measured_count;
}

// How `frames` met the run's bookkeeping spans.
BookkeepingSummary summarize_bookkeeping(std::span<const FrameRecord> frames,
                                         std::span<const BookkeepingSpan> spans,
                                         const TickFormat& ticks) {
  BookkeepingSummary out;
  std::vector<double> overlap;
  std::vector<double> core_overlapped;
  std::vector<double> core_clear;
  uint64_t missing_overlapped = 0;
  uint64_t missing_clear = 0;
  for (const FrameRecord& f : frames) {
    const std::optional<int64_t> o = bookkeeping_overlap_ns(f, spans);
    const bool over = o && *o > 0;
    const std::optional<int64_t> core = series_value_ns(f, Series::core_latency, ticks);
    if (over) {
      ++out.frames_overlapped;
      overlap.push_back(static_cast<double>(*o) / 1000.0);
    }
    if (core) {
      (over ? core_overlapped : core_clear).push_back(static_cast<double>(*core) / 1000.0);
    } else {
      ++(over ? missing_overlapped : missing_clear);
    }
  }
  out.overlap = summarize_in_place(overlap, 0);
  out.core_latency_overlapped = summarize_in_place(core_overlapped, missing_overlapped);
  out.core_latency_clear = summarize_in_place(core_clear, missing_clear);
  return out;
}

// Per-mode distributions over the measured frames run. A mode's measured
// blocks are contiguous in `frames` and the run stops at the first short
// block, so each mode's frames run form one range.
void summarize_modes(LatencyRun& run, const std::vector<LatencyModeDesc>& modes, uint64_t per_mode,
                     const std::vector<uint64_t>& measured_count,
                     const std::vector<std::optional<WarmupCheck>>& warmup_checks) {
  const TickFormat& ticks = run.device.ticks;
  for (uint32_t m = 0; m < modes.size(); ++m) {
    LatencyModeResult mr;
    mr.name = modes[m].name;
    mr.workload = modes[m].workload;
    mr.measured_frames = measured_count[m];
    const auto measured = std::span<const FrameRecord>(run.frames)
                              .subspan(m * per_mode + run.desc.warmup_frames, measured_count[m]);
    mr.total = summarize_frames(measured, ticks);
    mr.total_missing = count_missing(measured);
    if (run.present) {
      mr.present =
          summarize_present(measured,
                            std::span<const PresentRecord>(run.present_frames)
                                .subspan(m * per_mode + run.desc.warmup_frames, measured_count[m]),
                            run.present->observers.size());
    }
    for (const BlockResult& b : run.blocks) {
      if (b.kind == BlockKind::measured && b.mode == m) mr.consumer_behind += b.consumer_behind;
    }
    mr.bookkeeping = summarize_bookkeeping(measured, run.bookkeeping, ticks);
    if (modes[m].gpu_target) {
      mr.gpu_target = check_gpu_target(*modes[m].gpu_target,
                                       mr.total[static_cast<size_t>(Series::gpu_execution)]);
      mr.gpu_target->warmup_check = warmup_checks[m];
    }
    run.modes.push_back(std::move(mr));
  }
  run.total = run.modes[0].total;
  run.total_missing = run.modes[0].total_missing;
  run.consumer_behind = run.modes[0].consumer_behind;
}

// The reference and raw-sleep distributions over the run (--bare), and the
// measured path without its deliberate parts, frame by frame: measured frame
// k of block b and reference frame k of block b share a deadline, so
// core latency - cpu_processing - (gpu_execution - the reference frame's
// gpu_execution) pairs them (no median is subtracted).
void summarize_bare_comparison(LatencyRun& run) {
  uint64_t bare_n = 0;
  uint64_t raw_n = 0;
  for (const BlockResult& b : run.blocks) {
    if (b.kind == BlockKind::bare_loop) bare_n += b.frames_run;
    if (b.kind == BlockKind::raw_sleep) raw_n += b.frames_run;
  }
  const TickFormat& ticks = run.device.ticks;
  const auto ref = std::span<const FrameRecord>(run.bare_frames).first(bare_n);
  run.reference_total = summarize_frames(ref, ticks);
  run.reference_missing = count_missing(ref);
  run.bare_total = run.reference_total[static_cast<size_t>(Series::fence_latency)];
  run.raw_total = summarize_ns(std::span<const int64_t>(run.raw_lateness_ns).first(raw_n));

  std::vector<double> lean;
  lean.reserve(bare_n);
  uint64_t missing = 0;
  for (const BlockResult& m : run.blocks) {
    if (m.kind != BlockKind::measured) continue;
    const BlockResult* r = nullptr;
    for (const BlockResult& b : run.blocks) {
      if (b.kind == BlockKind::bare_loop && b.index == m.index) r = &b;
    }
    for (uint64_t k = 0; k < m.frames_run; ++k) {
      if (r == nullptr || k >= r->frames_run) {
        ++missing;
        continue;
      }
      const FrameRecord& fm = run.frames[m.first_frame + k];
      const FrameRecord& fr = run.bare_frames[r->first_frame + k];
      const auto core = series_value_ns(fm, Series::core_latency, ticks);
      const auto cpu = series_value_ns(fm, Series::cpu_processing, ticks);
      const auto gm = series_value_ns(fm, Series::gpu_execution, ticks);
      const auto gr = series_value_ns(fr, Series::gpu_execution, ticks);
      if (!core || !cpu || !gm || !gr) {
        ++missing;
        continue;
      }
      lean.push_back(static_cast<double>(*core - *cpu - (*gm - *gr)) / 1000.0);
    }
  }
  run.core_latency_without_deliberate = summarize_in_place(lean, missing);
}

// Runs the plan's blocks in order until one runs short or a stop is
// requested; returns the next device frame id. A mode with a warm-up
// re-check is re-checked (and its complexity moved) right after its warm-up
// block, into warmup_checks[mode].
uint64_t run_blocks(Ctx& c, LatencyRun& run, const std::vector<PlannedBlock>& plan,
                    std::vector<LatencyModeDesc>& modes,
                    std::vector<std::optional<WarmupCheck>>& warmup_checks,
                    const LatencyRunEnv& env, HostTime& time) {
  const LatencyRunDesc& desc = run.desc;
  const auto mode_count = static_cast<uint32_t>(modes.size());
  bool slack_recorded = false;
  // Device frame ids rise in run order (a backend may rely on it, e.g. to
  // retire query slots): interleaved blocks take the next ids in turn.
  uint64_t next_device_frame = desc.first_frame_id;
  for (size_t order = 0; order < plan.size(); ++order) {
    const PlannedBlock& p = plan[order];
    if (c.stop_requested()) {
      if (!run.partial && !c.failed.load() && c.interrupted()) {
        run.partial = true;
        run.partial_reason = "interrupted between blocks, before " +
                             block_name(p.kind, p.index, modes[p.mode].name, mode_count);
      }
      break;
    }
    BlockResult br;
    br.order = static_cast<uint32_t>(order);
    br.kind = p.kind;
    br.index = p.index;
    br.mode = p.mode;
    c.workload = &modes[p.mode].workload;
    br.first_frame = p.first;
    br.frames_planned = p.count;
    Schedule sched(desc.schedule);
    sched.skip(p.schedule_start);
    ProgressFn progress;
    if (env.on_progress) {
      progress = [&](uint64_t done) {
        env.on_progress(
            RunProgress{p.kind, p.index, modes[p.mode].name, desc.blocks, done, p.count});
      };
    }
    if (env.before_block) env.before_block(static_cast<uint32_t>(order));
    if (p.kind == BlockKind::warmup || p.kind == BlockKind::measured) {
      const TurnWarmup w = run_turn_warmup(c.device, time, *c.workload, next_device_frame,
                                           desc.turn_warmup_ns, env.interrupt);
      next_device_frame += w.frames;
      br.turn_warmup_frames = w.frames;
      br.turn_warmup_wall_ns = w.wall_ns;
      if (!w.error.empty()) c.fail(w.error);
      if (w.interrupted && !run.partial) {  // the block then runs no frame
        run.partial = true;
        run.partial_reason = "interrupted in the turn warm-up of " +
                             block_name(p.kind, p.index, modes[p.mode].name, mode_count) +
                             " after " + std::to_string(w.frames) + " frames (" +
                             std::to_string(w.wall_ns / 1'000'000) + " ms)";
      }
    }
    br.first_device_frame = next_device_frame;
    br.start_ns = time.now_ns();
    const BlockOutcome o = run_planned_block(c, run, p, next_device_frame, sched, progress);
    br.end_ns = time.now_ns();
    // A pair after the block's last frames, for the final mapping (a failure
    // is counted in the clock model's report).
    if (c.mapper != nullptr && p.kind != BlockKind::raw_sleep) (void)c.mapper->take_pair();
    if (env.after_block) env.after_block(static_cast<uint32_t>(order));
    br.frames_run = o.frames_run;
    if (p.kind != BlockKind::raw_sleep) next_device_frame += o.frames_run;
    br.generator_cpu_ns = o.sleeper_cpu_ns;
    br.thread_preparation_ns = o.preparation_ns;
    if (!slack_recorded && p.kind != BlockKind::raw_sleep && env.lockstep == nullptr) {
      run.timer_slack = o.slack;
      slack_recorded = true;
    }
    add_sleeper_time(run, p.kind, o);
    if (env.on_progress)
      env.on_progress(
          RunProgress{p.kind, p.index, modes[p.mode].name, desc.blocks, o.frames_run, p.count});
    mark_short_block(run, c, br, modes[p.mode].name, mode_count);
    LatencyModeDesc& mode = modes[p.mode];
    if (p.kind == BlockKind::warmup && mode.gpu_target && mode.warmup_adjust_ms_per_complexity &&
        br.frames_run > 0) {
      warmup_checks[p.mode] = recheck_in_warmup(
          mode, std::span<const FrameRecord>(run.frames).subspan(p.first, br.frames_run),
          run.device.ticks);
    }
    run.blocks.push_back(std::move(br));
  }
  return next_device_frame;
}

// Stops the screen observers and puts what each saw into the present records
// (by device frame id); the path's description and errors into the run.
void collect_present(LatencyRun& run, const Ctx& c, PresentPath& present) {
  present.stop_observers();
  run.present = present.info();
  run.present_errors = c.present_errors;
  run.present_first_error = c.present_first_error;
  const size_t observers = std::min(run.present->observers.size(), kMaxScreenObservers);
  for (const BlockResult& b : run.blocks) {
    if (b.kind != BlockKind::warmup && b.kind != BlockKind::measured) continue;
    for (uint64_t i = 0; i < b.frames_run; ++i) {
      PresentRecord& p = run.present_frames[b.first_frame + i];
      for (size_t o = 0; o < observers; ++o) {
        if (const std::optional<int64_t> t = present.screen_ns(o, b.first_device_frame + i))
          p.set_screen(o, *t);
      }
    }
  }
}

// --bare: the device's independent reference path, or why it has none
// (then only the raw-sleep blocks run beside the measured ones).
std::unique_ptr<ReferencePath> open_reference(const LatencyRunDesc& desc, LatencyDevice& device,
                                              LatencyRun& run) {
  if (!desc.bare_comparison) return nullptr;
  Result<std::unique_ptr<ReferencePath>> opened = device.open_reference();
  if (!opened) {
    run.unavailable.push_back({"reference_path", opened.error().message});
    return nullptr;
  }
  run.reference_what = opened.value()->what();
  return std::move(opened.value());
}

// The poll observer: its own thread for the whole run (threads), or the
// device's poller on this thread (lockstep); or why there is none.
struct PollObserver {
  std::unique_ptr<PollThread> thread;
  std::unique_ptr<CompletionPoller> inline_poller;
};

PollObserver open_poll_observer(const LatencyRunDesc& desc, const LatencyRunEnv& env,
                                HostTime& time, LatencyRun& run) {
  PollObserver poll;
  if (!desc.poll_completion) {
    run.unavailable.push_back(
        {"poll_latency",
         "the poll observer is off (LatencyRunDesc::poll_completion: latlab run --poll off, or "
         "--poll auto with fewer than 4 usable CPUs)"});
    return poll;
  }
  std::string why;
  if (env.lockstep != nullptr) {
    Result<std::unique_ptr<CompletionPoller>> opened = env.device->open_poller();
    if (opened) {
      poll.inline_poller = std::move(opened.value());
    } else {
      why = opened.error().message;
    }
  } else {
    poll.thread = std::make_unique<PollThread>(*env.device, time, desc.poll_limit_ns);
    why = poll.thread->error();
    if (!why.empty()) poll.thread.reset();
  }
  if (why.empty()) {
    run.polled = true;
  } else {
    run.unavailable.push_back({"poll_latency", why});
  }
  return poll;
}

// The clock model's report, and every frame mapped with its final fit.
void finish_clock_model(LatencyRun& run, TickMapper* mapper) {
  if (mapper == nullptr) {
    run.clock_model.reason = "no clock model was given to the run";
    return;
  }
  mapper->stop();
  run.clock_model = mapper->report();
  map_frames_final(run, *mapper);
  // Refresh windows are host-clock times: comparable with the frames' only
  // on the real time source.
  if (run.time_source == "real") {
    for (const RefreshWindow& w : run.clock_model.refresh_windows)
      run.bookkeeping.push_back({w.start_ns, w.end_ns});
  }
}

}  // namespace

Result<LatencyRun> run_latency(const LatencyRunDesc& desc, const LatencyRunEnv& env) {
  if (Result<void> v = validate(desc); !v) return v.error();
  if (env.device == nullptr) return make_error("no device to run on");
  // Scripted time may not move while frames run back to back.
  if (env.lockstep != nullptr && desc.turn_warmup_ns > 0)
    return make_error("the turn warm-up runs on real time only (not with a lockstep script)");

  RealHostTime real_time;
  HostTime& time = env.time != nullptr ? *env.time : real_time;

  LatencyRun run;
  run.desc = desc;
  run.device = env.device->info();
  run.time_source = time.name();
  run.execution = env.lockstep != nullptr ? "lockstep" : "threads";
  run.unavailable = run.device.missing;
  // Mutable: a warm-up re-check may move a mode's complexity.
  std::vector<LatencyModeDesc> modes = effective_modes(desc);
  std::vector<std::optional<WarmupCheck>> warmup_checks(modes.size());
  const auto mode_count = static_cast<uint32_t>(modes.size());

  // Every frame's storage up front: the run itself allocates nothing per frame.
  const uint64_t per_mode = uint64_t{desc.warmup_frames} + desc.frames;
  run.frames.assign(per_mode * mode_count, FrameRecord{});
  if (desc.bare_comparison) {
    run.bare_frames.assign(desc.frames, FrameRecord{});
    run.raw_lateness_ns.assign(desc.frames, 0);
  }
  std::unique_ptr<ReferencePath> reference = open_reference(desc, *env.device, run);
  const std::vector<PlannedBlock> plan =
      plan_blocks(desc, mode_count, per_mode, reference != nullptr);

  Ctx c(desc, *env.device, env.mapper, time, env.lockstep, env.interrupt);
  c.reference = reference.get();

  PollObserver poll = open_poll_observer(desc, env, time, run);
  c.poll_thread = poll.thread.get();
  c.inline_poller = poll.inline_poller.get();

  c.present = env.present;
  if (env.present != nullptr) {
    run.present_frames.assign(run.frames.size(), PresentRecord{});
    env.present->start_observers();
  }

  if (env.mapper == nullptr) {
    run.unavailable.push_back({"clock_model", "no clock model was given to the run"});
  } else if (Result<void> started = env.mapper->start(); !started) {
    run.unavailable.push_back({"clock_model", started.error().message});
  }

  run.started_ns = time.now_ns();
  const uint64_t next_device_frame = run_blocks(c, run, plan, modes, warmup_checks, env, time);
  if (!run.partial && c.failed.load()) {  // a failure on the block's last frame
    run.partial = true;
    run.partial_reason = c.error;
  }
  if (!run.partial && c.interrupted() && run.blocks.size() < plan.size()) {
    run.partial = true;
    run.partial_reason = "interrupted between blocks";
  }
  run.finished_ns = time.now_ns();
  run.next_frame_id = next_device_frame;

  finish_clock_model(run, env.mapper);
  run.cpu_checksum = c.checksum;
  if (env.present != nullptr) collect_present(run, c, *env.present);

  // Distributions, per block and over the run.
  const std::vector<uint64_t> measured_count = summarize_blocks(run, mode_count);
  summarize_modes(run, modes, per_mode, measured_count, warmup_checks);
  if (desc.bare_comparison) summarize_bare_comparison(run);
  return run;
}

}  // namespace latlab
