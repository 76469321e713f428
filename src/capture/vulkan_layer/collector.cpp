// The capture layer's collector thread: resolves submissions from the
// layer's timestamps, joins them and present_complete to their frames, and
// sends the records (submit, frame, cost, end).
#include "capture/vulkan_layer/collector.hpp"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "capture/capture_record.hpp"
#include "capture/frame_assembly.hpp"
#include "capture/presentation_feedback.hpp"
#include "capture/record_sender.hpp"
#include "capture/thread_cpu.hpp"
#include "capture/vulkan_layer/layer_device.hpp"
#include "capture/vulkan_layer/present_path.hpp"
#include "capture/vulkan_layer/result_buffer.hpp"
#include "capture/vulkan_layer/slot_timing.hpp"
#include "latlab/host_clock.hpp"

namespace latlab::capture::layer {
namespace {

// How often the collector reads the timestamps (from memory: the layer's
// end command buffers copy them there, result_buffer.hpp).
constexpr auto kCollectPeriod = std::chrono::milliseconds(10);
// How often the collector sends a CostRecord (and once at the end).
constexpr int64_t kCostPeriodNs = 1'000'000'000;
// How long a frame's record waits for its present_complete before it is
// sent without (NoComplete::late).
constexpr int64_t kCompleteTimeoutNs = 1'000'000'000;

// Resolves `p` from its copy (result_buffer.hpp) if both timestamps of its
// pair are there, and gives the slot back once the other pair's reset (in
// p's end command buffer) has executed too: its copy reads unavailable.
// final: the device is going away, the slot is not used again: the other
// pair is not checked.
bool try_resolve(DeviceData& d, PendingSubmit& p, bool final) {
  uint64_t* w = p.fam->words(p.slot);
  uint64_t* x = w + 4 * p.pair;
  uint64_t* y = w + 4 * (p.pair ^ 1U);
  if (load_acquire(x[1]) == 0 || load_acquire(x[3]) == 0) return false;
  if (!final && (load_acquire(y[1]) != 0 || load_acquire(y[3]) != 0)) return false;
  auto b = d.mapper ? d.mapper(load_acquire(x[0])) : std::nullopt;
  auto e = d.mapper ? d.mapper(load_acquire(x[2])) : std::nullopt;
  if (b && e) {
    p.rec.gpu_begin = b->host_ns;
    p.rec.gpu_end = e->host_ns;
  } else {
    p.rec.no_span = NoSpan::cannot_time;
  }
  p.fam->give_back(p.slot, true);
  return true;
}

// What the collector holds between passes.
struct CollectorState {
  std::deque<PendingSubmit> pending;
  std::deque<FrameEntry> frames;
  std::map<uint64_t, std::vector<SubmitRecord>> done;  // by frame
  std::map<uint64_t, Completion> completions;          // by frame
  std::map<uint64_t, DisplayOutcome> outcomes;         // wp_presentation, by feedback id
  uint64_t last_feedback_sent = 0;                     // the newest feedback id of a frame sent
  RecordBatch batch{RecordSender::process()};          // flushed at the end of each pass
  uint64_t bracketed = 0;  // submissions sent that carried the layer's command buffers
  LatlabThreadsCpu threads;
  int64_t last_cost = 0;  // host ns the last CostRecord was sent
};

// What the program spends on latlab beyond the calls the layer times.
void send_cost(DeviceData& d, CollectorState& c) {
  CostRecord r;
  r.threads_cpu_ns = c.threads.sample();
  r.threads = c.threads.threads();
  r.bracketed = c.bracketed;
  r.setup_ns = d.setup_ns.load(std::memory_order_relaxed);
  if (d.budget) {
    std::lock_guard lock(d.budget_mu);
    r.span_price_ns = d.budget->cost_ns();
    r.span_price_from = static_cast<uint32_t>(d.budget->price_from());
  }
  RecordSender::process().send(r, RecordType::cost, d.source);
  c.last_cost = host_now_ns();
}

// A frame's record is ready once its submissions are (the caller checks)
// and its present_complete is known, or no longer awaited.
bool fill_completion(FrameEntry& f, CollectorState& c, int64_t now, bool final) {
  if (!f.awaiting) return true;
  if (f.feedback_id != 0) {
    auto o = c.outcomes.find(f.feedback_id);
    if (o != c.outcomes.end()) {
      apply_outcome(o->second, f.rec);
      c.outcomes.erase(o);
      return true;
    }
  }
  auto it = c.completions.find(f.rec.frame);
  if (it != c.completions.end()) {
    f.rec.present_complete = it->second.ns;
    f.rec.no_complete = it->second.why;
    c.completions.erase(it);
    return true;
  }
  if (final || now - f.rec.present_end > kCompleteTimeoutNs) {
    f.rec.no_complete = NoComplete::late;
    return true;
  }
  return false;
}

// An outcome whose frame was sent already (late, or its present failed) has
// no use any more; feedback ids grow with the frames.
void drop_stale_outcomes(CollectorState& c) {
  while (!c.outcomes.empty() && c.outcomes.begin()->first <= c.last_feedback_sent)
    c.outcomes.erase(c.outcomes.begin());
}

void collect_once(DeviceData& d, CollectorState& c, bool final) {
  auto& pending = c.pending;
  auto& frames = c.frames;
  auto& done = c.done;
  {
    std::lock_guard lock(d.frame_mu);
    for (auto& s : d.new_submits) pending.push_back(s);
    for (auto& f : d.new_frames) frames.push_back(f);
    for (auto& x : d.new_completions) c.completions[x.frame] = x;
    for (auto& x : d.new_outcomes) c.outcomes[x.frame] = x;
    d.new_outcomes.clear();
    d.new_submits.clear();
    d.new_frames.clear();
    d.new_completions.clear();
  }
  for (auto& p : pending) {
    if (p.resolved) continue;
    if (p.slot == UINT32_MAX) {
      p.resolved = true;
    } else if (try_resolve(d, p, final)) {
      p.resolved = true;
    } else if (final) {
      p.rec.no_span = NoSpan::not_read;
      p.fam->give_back(p.slot, false);
      p.resolved = true;
    }
  }
  while (!pending.empty() && pending.front().resolved) {
    if (pending.front().slot != UINT32_MAX) ++c.bracketed;
    SubmitRecord rec = pending.front().rec;
    c.batch.add(rec, RecordType::submit, d.source);
    ++d.submits_sent;
    done[rec.frame].push_back(rec);
    pending.pop_front();
  }
  const int64_t now = host_now_ns();
  while (!frames.empty() &&
         (pending.empty() || pending.front().rec.frame > frames.front().rec.frame) &&
         fill_completion(frames.front(), c, now, final)) {
    FrameRecord f = frames.front().rec;
    c.last_feedback_sent = std::max(c.last_feedback_sent, frames.front().feedback_id);
    frames.pop_front();
    auto it = done.find(f.frame);
    if (it != done.end()) {
      fill_gpu_figures(f, it->second);
      done.erase(it);
    } else {
      fill_gpu_figures(f, {});
    }
    c.batch.add(f, RecordType::frame, d.source);
    ++d.frames_sent;
  }
  // A completion for a frame already sent (late) has no use any more.
  const uint64_t oldest = frames.empty() ? UINT64_MAX : frames.front().rec.frame;
  while (!c.completions.empty() && c.completions.begin()->first < oldest)
    c.completions.erase(c.completions.begin());
  drop_stale_outcomes(c);
  c.batch.flush();
}

// What the compositor said of the presents to the device's swapchains on
// Wayland surfaces: dispatched here, on the collector, not in the program's
// present (a dispatch costs microseconds per event). Under swap_mu: a
// feedback is polled only while a swapchain on its display exists
// (vkDestroySwapchainKHR takes the swapchain out under it first), so the
// program's display is connected.
void poll_feedback(DeviceData& d, std::vector<DisplayOutcome>& got) {
  got.clear();
  {
    std::lock_guard lock(d.swap_mu);
    for (const auto& [sc, st] : d.swapchains) {
      if (st->feedback) st->feedback->poll(got);
    }
  }
  if (!got.empty()) post_outcomes(&d, got);
}

}  // namespace

void collector_main(DeviceData* d) {
  // Named for `top -H` and profilers: the program's CPU that latlab takes.
  pthread_setname_np(pthread_self(), "latlab-collect");
  CollectorState c;
  std::vector<DisplayOutcome> outcomes;
  for (;;) {
    {
      std::unique_lock lock(d->frame_mu);
      d->wake.wait_for(lock, kCollectPeriod, [d] { return d->stop; });
      if (d->stop) break;
    }
    poll_feedback(*d, outcomes);
    collect_once(*d, c, false);
    if (host_now_ns() - c.last_cost > kCostPeriodNs) send_cost(*d, c);
    // Keep a quarter of a chunk free, so that the program's submit rarely
    // waits for a chunk to be made.
    for (auto& [f, ft] : d->families) {
      if (ft->can_time && ft->free_slots() < kChunkSlots / 4) grow_family(*d, *ft, kChunkSlots / 4);
    }
  }
  // The program destroys its device only once its work is done, but a
  // driver may still be writing the last timestamps (llvmpipe's rasteriser
  // threads finish after its queue): a few more passes, 2 ms apart, then
  // what is still not available is sent as not read.
  auto unresolved = [&c] {
    return std::any_of(c.pending.begin(), c.pending.end(),
                       [](const PendingSubmit& p) { return !p.resolved; });
  };
  collect_once(*d, c, false);
  for (int i = 0; i < 25 && unresolved(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    collect_once(*d, c, false);
  }
  collect_once(*d, c, true);
  // Submissions after the last present belong to no frame: sent above.
  send_cost(*d, c);
  EndRecord end;
  end.frames = d->frames_sent;
  end.submits = d->submits_sent;
  end.dropped = RecordSender::process().dropped();
  RecordSender::process().send(end, RecordType::end, d->source);
}

}  // namespace latlab::capture::layer
