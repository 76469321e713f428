// The capture layer's submit path: brackets the program's batches with a
// slot's begin and end command buffers (where the span budget lets it) and
// hands the submission to the collector.
#include "capture/vulkan_layer/submit_path.hpp"

#include <vulkan/vulkan.h>

#include <cstdint>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "capture/capture_record.hpp"
#include "capture/span_budget.hpp"
#include "capture/vulkan_layer/layer_device.hpp"
#include "capture/vulkan_layer/slot_timing.hpp"
#include "latlab/host_clock.hpp"

namespace latlab::capture::layer {
namespace {

// Whether the budget lets this submission be timed, as of the layer's
// entry (`enter`: one clock read fewer on the program's path).
bool within_budget(DeviceData& d, int64_t enter) {
  return !d.budget || take_shared(*d.budget, d.budget_mu, d.frame_index, enter).timed;
}

// Queues the submission for the collector. Its cpu_end and source_cpu_ns
// are set last, under the lock: everything but the unlock is counted.
void push_submit(DeviceData* d, PendingSubmit& p, int64_t enter, int64_t call_start,
                 int64_t call_end) {
  std::lock_guard lock(d->frame_mu);
  p.rec.frame = d->frame_index.load(std::memory_order_relaxed);
  d->new_submits.push_back(p);
  const int64_t now = host_now_ns();
  SubmitRecord& rec = d->new_submits.back().rec;
  rec.cpu_end = now;
  rec.source_cpu_ns = (call_start - enter) + (now - call_end);
}

// A batch the layer leaves as the program made it: protected work or
// per-command-buffer device masks, which its own command buffers would break.
bool bracketable(const VkSubmitInfo& s) {
  for (auto* c = static_cast<const VkBaseInStructure*>(s.pNext); c != nullptr; c = c->pNext) {
    if (c->sType == VK_STRUCTURE_TYPE_DEVICE_GROUP_SUBMIT_INFO) return false;
    if (c->sType == VK_STRUCTURE_TYPE_PROTECTED_SUBMIT_INFO &&
        reinterpret_cast<const VkProtectedSubmitInfo*>(c)->protectedSubmit == VK_TRUE)
      return false;
  }
  return true;
}
bool bracketable(const VkSubmitInfo2& s) { return (s.flags & VK_SUBMIT_PROTECTED_BIT) == 0; }
uint32_t work_of(const VkSubmitInfo& s) { return s.commandBufferCount; }
uint32_t work_of(const VkSubmitInfo2& s) { return s.commandBufferInfoCount; }

// The program's batches with the layer's begin command buffer before the
// first batch with work and its end command buffer after the last one.
struct Bracketed {
  std::vector<VkSubmitInfo> infos;
  std::vector<VkSubmitInfo2> infos2;
  std::vector<VkCommandBuffer> cbs;
  std::vector<VkCommandBufferSubmitInfo> cbs2;
};

void bracket(const VkSubmitInfo* in, uint32_t count, uint32_t first, uint32_t last,
             VkCommandBuffer b, VkCommandBuffer e, Bracketed& out) {
  out.infos.assign(in, in + count);
  out.cbs.clear();
  out.cbs.reserve(in[first].commandBufferCount + in[last].commandBufferCount + 2);
  auto rebuild = [&](uint32_t i) {
    const size_t at = out.cbs.size();
    if (i == first) out.cbs.push_back(b);
    out.cbs.insert(out.cbs.end(), in[i].pCommandBuffers,
                   in[i].pCommandBuffers + in[i].commandBufferCount);
    if (i == last) out.cbs.push_back(e);
    out.infos[i].pCommandBuffers = out.cbs.data() + at;
    out.infos[i].commandBufferCount = static_cast<uint32_t>(out.cbs.size() - at);
  };
  rebuild(first);
  if (last != first) rebuild(last);
}

void bracket(const VkSubmitInfo2* in, uint32_t count, uint32_t first, uint32_t last,
             VkCommandBuffer b, VkCommandBuffer e, Bracketed& out) {
  out.infos2.assign(in, in + count);
  out.cbs2.clear();
  out.cbs2.reserve(in[first].commandBufferInfoCount + in[last].commandBufferInfoCount + 2);
  auto ours = [](VkCommandBuffer cb) {
    return VkCommandBufferSubmitInfo{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, nullptr, cb, 0};
  };
  auto rebuild = [&](uint32_t i) {
    const size_t at = out.cbs2.size();
    if (i == first) out.cbs2.push_back(ours(b));
    out.cbs2.insert(out.cbs2.end(), in[i].pCommandBufferInfos,
                    in[i].pCommandBufferInfos + in[i].commandBufferInfoCount);
    if (i == last) out.cbs2.push_back(ours(e));
    out.infos2[i].pCommandBufferInfos = out.cbs2.data() + at;
    out.infos2[i].commandBufferInfoCount = static_cast<uint32_t>(out.cbs2.size() - at);
  };
  rebuild(first);
  if (last != first) rebuild(last);
}

template <class Info, class Call>
VkResult timed_submit(int64_t enter, DeviceData* d, FamilyTiming* fam, uint32_t count,
                      const Info* submits, Call&& call) {
  if (d == nullptr || !d->active) return call(count, submits);
  PendingSubmit p;
  SlotUse slot_use;
  p.rec.cpu_start = enter;
  p.rec.batches = count;
  uint32_t first = UINT32_MAX;
  uint32_t last = 0;
  for (uint32_t i = 0; i < count; ++i) {
    if (work_of(submits[i]) == 0) continue;
    p.rec.command_buffers += work_of(submits[i]);
    if (first == UINT32_MAX) first = i;
    last = i;
  }
  if (fam != nullptr) p.rec.queue_family = fam->family;
  if (first == UINT32_MAX) {
    p.rec.no_span = NoSpan::no_work;
  } else if (!bracketable(submits[first]) || !bracketable(submits[last])) {
    p.rec.no_span = NoSpan::not_bracketable;
  } else if (fam == nullptr || !fam->can_time) {
    p.rec.no_span = NoSpan::cannot_time;
  } else if (!within_budget(*d, enter)) {
    p.rec.no_span = NoSpan::budget;
  } else {
    slot_use = fam->take();
    // More in flight than ever before: a chunk more, made here (rarely:
    // the collector grows the family ahead of need).
    if (slot_use.slot == UINT32_MAX && grow_family(*d, *fam, 1)) slot_use = fam->take();
    if ((p.slot = slot_use.slot) == UINT32_MAX) p.rec.no_span = NoSpan::ring_full;
  }
  thread_local Bracketed scratch;
  const Info* use = submits;
  if (p.slot != UINT32_MAX) {
    p.fam = fam;
    p.pair = slot_use.pair;
    bracket(submits, count, first, last, slot_use.begin, slot_use.end, scratch);
    if constexpr (std::is_same_v<Info, VkSubmitInfo>) {
      use = scratch.infos.data();
    } else {
      use = scratch.infos2.data();
    }
  }
  const int64_t call_start = host_now_ns();
  const VkResult r = call(count, use);
  const int64_t call_end = host_now_ns();
  p.rec.result = r;
  if (r != VK_SUCCESS && p.slot != UINT32_MAX) {
    // A failed submit leaves its command buffers unsubmitted: the slot's
    // next use is this one again.
    fam->give_back(p.slot, false);
    p.slot = UINT32_MAX;
    p.rec.no_span = NoSpan::failed;
  }
  push_submit(d, p, enter, call_start, call_end);
  return r;
}

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL layer_QueueSubmit(VkQueue queue, uint32_t count,
                                                 const VkSubmitInfo* submits, VkFence fence) {
  const int64_t enter = host_now_ns();
  const auto found = device_and_family(queue);
  DeviceData* d = found.first;
  FamilyTiming* fam = found.second;
  return timed_submit(enter, d, fam, count, submits, [&](uint32_t n, const VkSubmitInfo* s) {
    return d->fn.QueueSubmit(queue, n, s, fence);
  });
}

VKAPI_ATTR VkResult VKAPI_CALL layer_QueueSubmit2(VkQueue queue, uint32_t count,
                                                  const VkSubmitInfo2* submits, VkFence fence) {
  const int64_t enter = host_now_ns();
  const auto found = device_and_family(queue);
  DeviceData* d = found.first;
  FamilyTiming* fam = found.second;
  return timed_submit(enter, d, fam, count, submits, [&](uint32_t n, const VkSubmitInfo2* s) {
    return d->fn.QueueSubmit2(queue, n, s, fence);
  });
}

VKAPI_ATTR VkResult VKAPI_CALL layer_QueueSubmit2KHR(VkQueue queue, uint32_t count,
                                                     const VkSubmitInfo2* submits, VkFence fence) {
  const int64_t enter = host_now_ns();
  const auto found = device_and_family(queue);
  DeviceData* d = found.first;
  FamilyTiming* fam = found.second;
  return timed_submit(enter, d, fam, count, submits, [&](uint32_t n, const VkSubmitInfo2* s) {
    return d->fn.QueueSubmit2KHR(queue, n, s, fence);
  });
}

}  // namespace latlab::capture::layer
