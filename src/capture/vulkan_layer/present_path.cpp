// The capture layer's present path: frames closed at each present, the
// layer's present ids, swapchains and their present_complete (present wait,
// display timing, the compositor's wp_presentation feedback).
#include "capture/vulkan_layer/present_path.hpp"

#include <vulkan/vulkan.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "capture/capture_record.hpp"
#include "capture/present_waiter.hpp"
#include "capture/presentation_feedback.hpp"
#include "capture/record_sender.hpp"
#include "capture/vulkan_layer/layer_device.hpp"
#include "capture/wayland_surfaces.hpp"
#include "latlab/host_clock.hpp"

namespace latlab::capture::layer {
namespace {

// Display timing: presents per swapchain whose timing is still awaited.
constexpr size_t kTimingPending = 64;
// wp_presentation: how long vkDestroySwapchainKHR waits for the compositor's
// word on the presents still outstanding (a few refresh periods).
constexpr int64_t kFeedbackDrainNs = 100'000'000;

SwapchainState* swapchain_of(DeviceData* d, VkSwapchainKHR sc) {
  std::lock_guard lock(d->swap_mu);
  auto it = d->swapchains.find(sc);
  return it == d->swapchains.end() ? nullptr : it->second.get();
}

void post_completion(DeviceData* d, const Completion& c) {
  std::lock_guard lock(d->frame_mu);
  d->new_completions.push_back(c);
}

// Display timing: the actual present times the presentation engine has
// for `st`'s presents (each is returned once), as completions. Runs on the
// program's thread inside one of its calls on the swapchain, which the
// spec requires to be externally synchronised with this query.
void read_display_timing(DeviceData* d, SwapchainState& st, std::vector<Completion>& out) {
  if (st.timing.empty()) return;
  VkPastPresentationTimingGOOGLE past[16];
  for (int round = 0; round < 4; ++round) {
    auto n = static_cast<uint32_t>(std::size(past));
    const VkResult r = d->fn.GetPastPresentationTimingGOOGLE(d->device, st.swapchain, &n, past);
    if (r < 0) break;
    const int64_t now = host_now_ns();
    for (uint32_t i = 0; i < n; ++i) {
      auto it = std::find_if(st.timing.begin(), st.timing.end(),
                             [&](const auto& p) { return p.first == past[i].presentID; });
      if (it == st.timing.end()) continue;
      Completion c{it->second, kNoTime, NoComplete::failed};
      const auto t = static_cast<int64_t>(past[i].actualPresentTime);
      // The spec's clock on Linux is CLOCK_MONOTONIC; a time more than
      // 10 s away from now is on another one and is not used.
      if (t > 0 && (now - t < 10'000'000'000 && t - now < 10'000'000'000)) {
        c.ns = t;
        c.why = NoComplete::none;
      } else if (!d->timing_clock_warned.exchange(true)) {
        send_unavailable(d->source, "present_complete",
                         "VK_GOOGLE_display_timing's actualPresentTime is not on CLOCK_MONOTONIC "
                         "(more than 10 s from the host's now): such frames are failed");
      }
      out.push_back(c);
      st.timing.erase(it);
    }
    if (r != VK_INCOMPLETE) break;
  }
}

}  // namespace

void retire_swapchain(DeviceData* d, SwapchainState& st) {
  st.retired = true;
  if (st.waiter) st.waiter->stop(NoComplete::retired);
  std::vector<Completion> got;
  read_display_timing(d, st, got);
  for (const auto& [id, frame] : st.timing) got.push_back({frame, kNoTime, NoComplete::retired});
  st.timing.clear();
  for (const auto& c : got) post_completion(d, c);
}

void post_outcomes(DeviceData* d, const std::vector<DisplayOutcome>& got) {
  for (const DisplayOutcome& o : got) {
    DeviceData* to = d;
    if (o.owner != d->source) {
      std::shared_lock lock(g_mu);
      auto it = std::find_if(g_devices.begin(), g_devices.end(),
                             [&](const auto& kv) { return kv.second->source == o.owner; });
      to = it == g_devices.end() ? nullptr : it->second.get();
    }
    if (to == nullptr) continue;  // its device is gone
    std::lock_guard lock(to->frame_mu);
    to->new_outcomes.push_back(o);
  }
}

namespace {

// What the layer adds to one present for present_complete. Filled in place
// (`use` may point at `tagged`).
struct PresentTag {
  const VkPresentInfoKHR* use = nullptr;  // what goes down
  VkPresentInfoKHR tagged{};
  VkPresentIdKHR ids{VK_STRUCTURE_TYPE_PRESENT_ID_KHR, nullptr, 0, nullptr};
  VkPresentTimesInfoGOOGLE times{VK_STRUCTURE_TYPE_PRESENT_TIMES_INFO_GOOGLE, nullptr, 0, nullptr};
  uint64_t tag = 0;          // the present id / presentID (0: none)
  uint64_t feedback_id = 0;  // the wp_presentation request (0: none)
};

// Tags the first swapchain's present with an id the layer can wait for (or
// reads the program's own id), or, on a Wayland surface, asks the
// compositor for the feedback of the commit the present makes.
void tag_present(DeviceData* d, SwapchainState* st, const VkPresentInfoKHR* info, PresentTag& t) {
  t.use = info;
  if (st == nullptr) return;
  if (st->feedback) {
    const uint64_t id = d->next_feedback_id.fetch_add(1, std::memory_order_relaxed);
    if (st->feedback->request(st->wl_surface, d->source, id)) t.feedback_id = id;
    return;
  }
  if (st->retired || d->present_method == PresentMethod::none) return;
  const uint32_t n = info->swapchainCount;
  if (d->present_method == PresentMethod::present_wait && !d->layer_present_ids) {
    const auto* own = chain_find<VkPresentIdKHR>(info->pNext, VK_STRUCTURE_TYPE_PRESENT_ID_KHR);
    if (own != nullptr && own->pPresentIds != nullptr && own->swapchainCount > 0)
      t.tag = own->pPresentIds[0];
  } else if (d->present_method == PresentMethod::present_wait) {
    // thread_local only where used: in a dlopen'd library passing the
    // declaration costs a TLS lookup even when nothing is done with it.
    thread_local std::vector<uint64_t> id_list;
    id_list.assign(n, 0);  // 0: no id for the other swapchains
    t.tag = id_list[0] = st->next_id++;
    t.ids = {VK_STRUCTURE_TYPE_PRESENT_ID_KHR, info->pNext, n, id_list.data()};
    t.tagged = *info;
    t.tagged.pNext = &t.ids;
    t.use = &t.tagged;
  } else {
    // desiredPresentTime 0: "any time", as without the structure.
    thread_local std::vector<VkPresentTimeGOOGLE> time_list;
    time_list.assign(n, VkPresentTimeGOOGLE{0, 0});
    if (static_cast<uint32_t>(st->next_id) == 0) ++st->next_id;  // 0 is not an id
    t.tag = static_cast<uint32_t>(st->next_id++);
    time_list[0].presentID = static_cast<uint32_t>(t.tag);
    t.times = {VK_STRUCTURE_TYPE_PRESENT_TIMES_INFO_GOOGLE, info->pNext, n, time_list.data()};
    t.tagged = *info;
    t.tagged.pNext = &t.times;
    t.use = &t.tagged;
  }
}

// Sends present_complete's Unavailable record, once per device, at its
// first present that has no way to learn it.
void say_no_complete(DeviceData* d, const SwapchainState* st) {
  if (d->no_complete_said.exchange(true)) return;
  std::string why = d->no_present_method;
  if (st != nullptr && !st->no_feedback.empty())
    why = "on Wayland: " + st->no_feedback + "; the device: " + why;
  send_unavailable(d->source, "present_complete", why);
}

// How the frame's present_complete will come (e.awaiting), or why not.
// Under frame_mu: a waiter's completion reaches the collector after its frame.
void plan_completion(DeviceData* d, SwapchainState* st, const PresentTag& t, VkResult first,
                     FrameEntry& e) {
  FrameRecord& f = e.rec;
  if (st != nullptr && st->feedback) {
    f.complete_method = PresentMethod::wp_presentation;
    // A failed present made no commit: its request answers a later one and is dropped.
    f.no_complete = t.feedback_id == 0 ? NoComplete::dropped
                    : first < 0        ? NoComplete::failed
                                       : NoComplete::none;
    e.awaiting = f.no_complete == NoComplete::none;
    e.feedback_id = t.feedback_id;
    return;
  }
  if (d->present_method == PresentMethod::none || st == nullptr) {
    f.no_complete = NoComplete::unavailable;
    return;
  }
  f.complete_method = d->present_method;
  if (st->retired) {
    f.no_complete = NoComplete::retired;
  } else if (first < 0) {
    f.no_complete = NoComplete::failed;  // nothing was queued for presentation
  } else if (t.tag == 0) {
    f.no_complete = NoComplete::not_tagged;
  } else if (d->present_method == PresentMethod::present_wait) {
    const auto pushed = st->waiter->push(t.tag, f.frame);
    e.awaiting = pushed == PresentWaiter::Push::queued;
    f.no_complete = pushed == PresentWaiter::Push::full ? NoComplete::dropped
                    : e.awaiting                        ? NoComplete::none
                                                        : NoComplete::retired;
  } else {
    if (st->timing.size() == kTimingPending) st->timing.pop_front();  // it goes late
    st->timing.emplace_back(static_cast<uint32_t>(t.tag), f.frame);
    e.awaiting = true;
    f.no_complete = NoComplete::none;
  }
}

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL layer_QueuePresentKHR(VkQueue queue, const VkPresentInfoKHR* info) {
  const int64_t enter = host_now_ns();
  DeviceData* d = device_and_family(queue).first;
  if (!d->active) return d->fn.QueuePresentKHR(queue, info);
  SwapchainState* st = info->swapchainCount > 0 ? swapchain_of(d, info->pSwapchains[0]) : nullptr;
  PresentTag t;
  tag_present(d, st, info, t);
  // What the return needs is read before the call: the driver's present
  // (on a CPU device, a copy of the whole image) leaves the caches cold,
  // and every line touched after it costs a miss in the program's present.
  const bool read_timing =
      st != nullptr && !st->feedback && d->present_method == PresentMethod::display_timing;
  FrameEntry e;
  FrameRecord& f = e.rec;
  f.present_start = enter;
  f.swapchains = info->swapchainCount;
  f.swapchain = info->swapchainCount > 0 ? reinterpret_cast<uint64_t>(info->pSwapchains[0]) : 0;
  const int64_t call_start = host_now_ns();
  const VkResult r = d->fn.QueuePresentKHR(queue, t.use);
  const int64_t returned = host_now_ns();
  // The frame state's lines and the swapchain's, fetched together rather
  // than one miss after another.
  __builtin_prefetch(&d->frame_mu, 1);
  __builtin_prefetch(&d->new_frames, 1);
  __builtin_prefetch(&d->acquire_wait_ns, 1);
  if (st != nullptr) __builtin_prefetch(st);
  f.present_end = returned;
  f.present_result = r;
  const VkResult first =
      info->pResults != nullptr && info->swapchainCount > 0 ? info->pResults[0] : r;
  // Display timing's results for earlier presents (the compositor's are
  // dispatched by the collector: poll_feedback).
  std::vector<Completion>* timed = nullptr;
  if (read_timing) {
    // thread_local only here: in a dlopen'd library each use is a TLS lookup.
    thread_local std::vector<Completion> timed_list;
    timed_list.clear();
    read_display_timing(d, *st, timed_list);
    timed = &timed_list;
  }
  {
    std::lock_guard lock(d->frame_mu);
    f.frame = d->frame_index.fetch_add(1, std::memory_order_relaxed);
    f.frame_start = d->last_present_end;
    f.acquire_wait_ns = d->acquire_wait_ns.exchange(0, std::memory_order_relaxed);
    plan_completion(d, st, t, first, e);
    if (timed != nullptr)
      d->new_completions.insert(d->new_completions.end(), timed->begin(), timed->end());
    const int64_t now = host_now_ns();
    f.source_present_ns = (call_start - enter) + (now - returned);
    d->new_frames.push_back(e);
    d->last_present_end = now;
  }
  if (f.no_complete == NoComplete::unavailable) say_no_complete(d, st);
  return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_AcquireNextImageKHR(VkDevice device, VkSwapchainKHR sc,
                                                         uint64_t timeout, VkSemaphore sem,
                                                         VkFence fence, uint32_t* index) {
  DeviceData* d = device_of(dispatch_key(device));
  const int64_t t0 = host_now_ns();
  const VkResult r = d->fn.AcquireNextImageKHR(device, sc, timeout, sem, fence, index);
  d->acquire_wait_ns.fetch_add(host_now_ns() - t0, std::memory_order_relaxed);
  return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_AcquireNextImage2KHR(VkDevice device,
                                                          const VkAcquireNextImageInfoKHR* info,
                                                          uint32_t* index) {
  DeviceData* d = device_of(dispatch_key(device));
  const int64_t t0 = host_now_ns();
  const VkResult r = d->fn.AcquireNextImage2KHR(device, info, index);
  d->acquire_wait_ns.fetch_add(host_now_ns() - t0, std::memory_order_relaxed);
  return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_CreateSwapchainKHR(VkDevice device,
                                                        const VkSwapchainCreateInfoKHR* info,
                                                        const VkAllocationCallbacks* alloc,
                                                        VkSwapchainKHR* out) {
  DeviceData* d = device_of(dispatch_key(device));
  if (!d->active) return d->fn.CreateSwapchainKHR(device, info, alloc, out);
  // The old swapchain is retired by this call, even when it fails; no wait
  // may be made on a retired swapchain, so its waiter stops first.
  if (info->oldSwapchain != VK_NULL_HANDLE) {
    if (SwapchainState* old = swapchain_of(d, info->oldSwapchain)) retire_swapchain(d, *old);
  }
  const VkResult r = d->fn.CreateSwapchainKHR(device, info, alloc, out);
  if (r != VK_SUCCESS) return r;
  auto st = std::make_unique<SwapchainState>();
  st->swapchain = *out;
  if (auto w = wayland_surfaces().find(reinterpret_cast<uint64_t>(info->surface))) {
    st->wl_surface = w->surface;
    st->feedback = w->feedback;
    st->no_feedback = w->why;
  }
  if (d->present_method == PresentMethod::present_wait && !st->feedback) {
    const VkSwapchainKHR sc = *out;
    st->waiter = std::make_unique<PresentWaiter>(
        [d, sc](uint64_t id, uint64_t timeout_ns) {
          const VkResult w = d->fn.WaitForPresentKHR(d->device, sc, id, timeout_ns);
          return w == VK_SUCCESS || w == VK_SUBOPTIMAL_KHR ? WaitOutcome::done
                 : w == VK_TIMEOUT                         ? WaitOutcome::timeout
                                                           : WaitOutcome::failed;
        },
        [d](uint64_t frame, int64_t ns, NoComplete why) {
          post_completion(d, {frame, ns, why});
        });
  }
  {
    std::lock_guard lock(d->swap_mu);
    d->swapchains[*out] = std::move(st);
  }
  uint64_t window = 0;
  {
    std::lock_guard lock(g_surface_mu);
    auto it = g_x11_windows.find(reinterpret_cast<uint64_t>(info->surface));
    if (it != g_x11_windows.end()) window = it->second;
  }
  if (window != 0) {
    WindowRecord w;
    w.swapchain = reinterpret_cast<uint64_t>(*out);
    w.window = window;
    w.system = WindowSystem::x11;
    const char* display = std::getenv("DISPLAY");
    set_text(w.display, display != nullptr ? display : "");
    RecordSender::process().send(w, RecordType::window, d->source);
  }
  return r;
}

VKAPI_ATTR void VKAPI_CALL layer_DestroySwapchainKHR(VkDevice device, VkSwapchainKHR sc,
                                                     const VkAllocationCallbacks* alloc) {
  DeviceData* d = device_of(dispatch_key(device));
  std::unique_ptr<SwapchainState> st;
  {
    std::lock_guard lock(d->swap_mu);
    auto it = d->swapchains.find(sc);
    if (it != d->swapchains.end()) {
      st = std::move(it->second);
      d->swapchains.erase(it);
    }
  }
  // The spec wants the swapchain to outlive every wait on it.
  if (st) retire_swapchain(d, *st);
  // The compositor's word on the last presents, while the surface is sure
  // to be alive.
  if (st && st->feedback) {
    std::vector<DisplayOutcome> got;
    st->feedback->drain(d->source, kFeedbackDrainNs, got);
    post_outcomes(d, got);
  }
  d->fn.DestroySwapchainKHR(device, sc, alloc);
}

}  // namespace latlab::capture::layer
