#include "latlab/sim_query_pool.hpp"

#include <cassert>

namespace latlab {

std::unique_ptr<SimTimestampQueryPool> SimTimestampQueryPool::create(const QueryPoolDesc& desc,
                                                                     TickFormat ticks,
                                                                     bool can_time) {
  return std::unique_ptr<SimTimestampQueryPool>(new SimTimestampQueryPool(desc, ticks, can_time));
}

SimTimestampQueryPool::SimTimestampQueryPool(const QueryPoolDesc& desc, TickFormat ticks,
                                             bool can_time)
    : TimestampQueryPool(desc, ticks, can_time), slots_(max_queries()) {}

SimTimestampQueryPool::~SimTimestampQueryPool() { dispose(); }

void SimTimestampQueryPool::device_write(uint32_t query, uint64_t ticks) {
  assert(query < slots_.size());
  Slot& s = slots_[query];
  s.value = RawQuery{true, ticks, s.generation, false};
}

void SimTimestampQueryPool::device_write_late(uint32_t query, uint64_t ticks) {
  assert(query < slots_.size());
  Slot& s = slots_[query];
  s.value = RawQuery{true, ticks, s.generation == 0 ? 0 : s.generation - 1, false};
}

void SimTimestampQueryPool::device_mark_disjoint(uint32_t query) {
  assert(query < slots_.size());
  slots_[query].value.disjoint = true;
}

void SimTimestampQueryPool::read_queries(uint32_t first, uint32_t count, std::span<RawQuery> out) {
  for (uint32_t i = 0; i < count; ++i) out[i] = slots_[first + i].value;
}

void SimTimestampQueryPool::reset_queries(uint32_t first, uint32_t count, uint64_t generation) {
  for (uint32_t i = 0; i < count; ++i) {
    slots_[first + i] = Slot{RawQuery{}, generation};
  }
  resets_ += count;
}

void SimTimestampQueryPool::release_device_objects() { slots_.clear(); }

}  // namespace latlab
