// CUDA backend: CudaTimestampSlots (stamp kernels into mapped memory with
// generation tags) and the timestamp query pool on them.
#include <cuda_runtime.h>

#include "backends/cuda/cuda_internal.hpp"
#include "backends/cuda/cuda_kernels.hpp"
#include "backends/cuda/cuda_runtime_util.hpp"
#include "latlab/cuda.hpp"

namespace latlab {
namespace cd = cuda_detail;

namespace cuda_detail {

DecodedStamp decode_stamp(uint64_t tag, uint64_t ticks, uint64_t expected_generation) {
  DecodedStamp q;
  if (tag == 0) return q;  // not written since the reset
  q.available = true;
  q.ticks = ticks;
  if (tag == stamp_tag(expected_generation, ticks)) {
    q.generation = expected_generation;
    return q;
  }
  const uint64_t writer = tag ^ stamp_mix(ticks);
  q.generation = writer != 0 && writer != expected_generation ? writer : kUnknownGeneration;
  return q;
}

}  // namespace cuda_detail

CudaTimestampSlots::CudaTimestampSlots(uint32_t count, int device, bool timing_events,
                                       bool record_events)
    : count_(count),
      device_(device),
      timing_events_(timing_events && record_events),
      record_events_(record_events),
      slot_generation_(count, 0),
      events_(record_events ? count : 0, nullptr),
      event_generation_(count, 0) {}

Result<std::shared_ptr<CudaTimestampSlots>> CudaTimestampSlots::create(
    const CudaTimestampSlotsDesc& desc) {
  if (desc.count < 2) {
    return make_error("CUDA slots: count = " + std::to_string(desc.count) + " must be >= 2");
  }
  auto device = cd::resolve_device(desc.device);
  if (!device) return device.error();
  cd::DeviceScope scope(*device);
  if (auto ok = cd::ready_device(scope, *device); !ok) return ok.error();

  std::shared_ptr<CudaTimestampSlots> slots(
      new CudaTimestampSlots(desc.count, *device, desc.cross_check_events, desc.record_events));
  auto block = cd::alloc_mapped(sizeof(cd::StampSlot) * desc.count);
  if (!block) return block.error();
  slots->host_slots_ = block->host;
  slots->device_slots_ = block->device;
  const unsigned flags = desc.cross_check_events ? cudaEventDefault : cudaEventDisableTiming;
  for (auto& ev : slots->events_) {
    const cudaError_t e = cudaEventCreateWithFlags(&ev, flags);
    if (e != cudaSuccess)
      return cd::cuda_fail("cudaEventCreateWithFlags", e);  // the destructor frees the rest
  }
  return slots;
}

CudaTimestampSlots::~CudaTimestampSlots() {
  cd::DeviceScope scope(device_);
  // A stamp kernel still queued would write into freed memory: wait for each
  // slot's latest record first (its event follows its stamp in the stream).
  for (size_t i = 0; i < events_.size(); ++i) {
    if (events_[i] && event_generation_[i] != 0) (void)cudaEventSynchronize(events_[i]);
  }
  for (auto& ev : events_) {
    if (ev) (void)cudaEventDestroy(ev);
  }
  if (host_slots_) (void)cudaFreeHost(host_slots_);
}

// Safe from several threads at once for distinct slots (and their streams):
// it reads the slot's generation, which only reset() changes, and reset is
// ordered before the writes of the slots it resets (the pool hands a pair out
// after resetting it; the profiler publishes a recycled frame with release,
// and zones take it with acquire); it writes only this slot's own event and
// event_generation_ element (distinct memory per slot) and the atomic error
// count; cudaLaunchKernel and cudaEventRecord are thread-safe in the CUDA
// runtime. No lock: a zone's two writes must stay cheap.
Result<void> CudaTimestampSlots::write_timestamp(CudaStream stream, uint32_t slot) {
  if (slot >= count_) {
    return make_error("CUDA slots: slot " + std::to_string(slot) + " is out of range (count " +
                      std::to_string(count_) + ")");
  }
  const uint64_t generation = slot_generation_[slot];
  if (generation == 0) {
    return make_error("CUDA slots: slot " + std::to_string(slot) +
                      " was never allocated (reset); use allocate_queries_for_context's offset");
  }
  auto* stamp = static_cast<cd::StampSlot*>(device_slots_) + slot;
  cudaError_t e = cd::launch_stamp(stream, stamp, generation);
  if (e != cudaSuccess) return cd::cuda_fail("launching the timestamp kernel", e);
  if (!record_events_) return {};
  e = cudaEventRecord(events_[slot], stream);
  if (e != cudaSuccess) return cd::cuda_fail("cudaEventRecord", e);
  event_generation_[slot] = generation;
  return {};
}

void CudaTimestampSlots::write(GpuCommandStream stream, uint32_t slot, TimestampEdge /*edge*/) {
  if (!write_timestamp(static_cast<CudaStream>(stream), slot)) {
    write_errors_.fetch_add(1, std::memory_order_relaxed);
  }
}

CudaTimestampSlots::EventSpan CudaTimestampSlots::event_elapsed(uint32_t begin_slot) const {
  EventSpan span;
  if (!timing_events_ || begin_slot + 1 >= count_ || begin_slot % 2 != 0) {
    return span;  // missing
  }
  const uint64_t g = event_generation_[begin_slot];
  if (g == 0 || event_generation_[begin_slot + 1] != g) return span;
  for (uint32_t q : {begin_slot, begin_slot + 1}) {
    const cudaError_t e = cudaEventQuery(events_[q]);
    if (e == cudaErrorNotReady) {
      span.status = QueryStatus::not_ready;
      return span;
    }
    if (e != cudaSuccess) {
      span.status = QueryStatus::invalid;
      return span;
    }
  }
  float ms = 0.0f;
  const cudaError_t e = cudaEventElapsedTime(&ms, events_[begin_slot], events_[begin_slot + 1]);
  if (e == cudaErrorNotReady) {
    span.status = QueryStatus::not_ready;
  } else if (e != cudaSuccess) {
    span.status = QueryStatus::invalid;
  } else {
    span.status = QueryStatus::ok;
    span.ms = static_cast<double>(ms);
  }
  return span;
}

void CudaTimestampSlots::read(uint32_t first, std::span<SlotReading> out) {
  auto* slots = static_cast<cd::StampSlot*>(host_slots_);
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t q = first + i;
    if (!slots || q >= count_) {
      out[i] = SlotReading{};
      continue;
    }
    cd::StampSlot& s = slots[q];
    const uint64_t tag = cd::load_acquire(s.tag);  // then the value: it was written before the tag
    const uint64_t ticks = cd::load_relaxed(s.ticks);
    const cd::DecodedStamp d = cd::decode_stamp(tag, ticks, slot_generation_[q]);
    out[i].ticks = d.ticks;
    out[i].available = d.available ? 1u : 0u;
    out[i].flags = d.available && d.generation != slot_generation_[q] ? SlotReading::kLate : 0u;
  }
}

void CudaTimestampSlots::reset(uint32_t first, uint32_t count, bool /*previous_use_done*/) {
  // The generation tag catches a late stamp, so the host may reset at once.
  auto* slots = static_cast<cd::StampSlot*>(host_slots_);
  const uint64_t generation = next_generation_++;
  for (uint32_t q = first; q < first + count && q < count_; ++q) {
    slot_generation_[q] = generation;
    if (!slots) continue;
    cd::store_relaxed(slots[q].tag, 0);
    cd::store_relaxed(slots[q].ticks, 0);
  }
}

Result<std::unique_ptr<TimestampQueryPool>> create_cuda_query_pool(const CudaQueryPoolDesc& desc) {
  if (desc.pool.max_queries < 2 || desc.pool.max_queries % 2 != 0) {
    return make_error("CUDA pool: max_queries = " + std::to_string(desc.pool.max_queries) +
                      " must be even and >= 2");
  }
  auto slots = CudaTimestampSlots::create({.count = desc.pool.max_queries,
                                           .device = desc.device,
                                           .cross_check_events = desc.cross_check_events});
  if (!slots) return slots.error();
  return TimestampQueryPool::create(std::move(slots.value()), desc.pool);
}

}  // namespace latlab
