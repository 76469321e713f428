#include "latlab/bench/sim_timestamp_slots.hpp"

#include <algorithm>

namespace latlab {

std::shared_ptr<SimTimestampSlots> SimTimestampSlots::create(SimTimestampSlotsDesc desc) {
  desc.count = std::max<uint32_t>(2, desc.count);
  desc.immediate_step_ticks = std::max<uint64_t>(1, desc.immediate_step_ticks);
  return std::shared_ptr<SimTimestampSlots>(new SimTimestampSlots(desc));
}

SimTimestampSlots::SimTimestampSlots(SimTimestampSlotsDesc desc)
    : desc_(desc), slots_(desc.count), clock_(desc.immediate_start_ticks) {}

SimTimestampSlots::~SimTimestampSlots() = default;

void SimTimestampSlots::store(uint32_t slot, uint64_t ticks, bool late) {
  if (slot >= slots_.size()) return;
  Slot& s = slots_[slot];
  s.ticks.store(ticks & desc_.ticks.mask(), std::memory_order_relaxed);
  const uint32_t before =
      s.flags.fetch_or(late ? kAvailable | kLate : kAvailable, std::memory_order_release);
  if ((before & kAvailable) != 0 && !late) double_writes_.fetch_add(1, std::memory_order_relaxed);
}

// The common cases (the benchmarks' null stream, an append with room) stay
// a leaf without a stack frame: the rest is out of line, so that a zone's
// cost measured on the sim is the profiler's, not register saves here.
void SimTimestampSlots::write(GpuCommandStream stream, uint32_t slot, TimestampEdge edge) {
  if (desc_.immediate) [[unlikely]]
    return write_immediate(slot);
  if (stream == nullptr) return;
  std::vector<SimCommandStream::Write>& writes = static_cast<SimCommandStream*>(stream)->writes;
  if (writes.size() == writes.capacity()) [[unlikely]]
    return append_growing(writes, slot, edge);
  writes.push_back({slot, edge});
}

void SimTimestampSlots::write_immediate(uint32_t slot) {
  immediate_writes_.fetch_add(1, std::memory_order_relaxed);
  store(slot, clock_.fetch_add(desc_.immediate_step_ticks, std::memory_order_relaxed), false);
}

void SimTimestampSlots::append_growing(std::vector<SimCommandStream::Write>& writes, uint32_t slot,
                                       TimestampEdge edge) {
  writes.push_back({slot, edge});
}

void SimTimestampSlots::read(uint32_t first, std::span<SlotReading> out) {
  const size_t n = slots_.size();
  const size_t in_range = first >= n ? 0 : std::min(out.size(), n - first);
  const Slot* slot = slots_.data() + first;
  for (size_t i = 0; i < in_range; ++i) {
    const uint32_t flags = slot[i].flags.load(std::memory_order_acquire);
    out[i].ticks = slot[i].ticks.load(std::memory_order_relaxed);
    out[i].available = flags & kAvailable;
    // The slot's flag bits above kAvailable are SlotReading's flags.
    static_assert(kDisjoint >> 1 == SlotReading::kDisjoint && kLate >> 1 == SlotReading::kLate);
    out[i].flags = (flags >> 1) & (SlotReading::kDisjoint | SlotReading::kLate);
  }
  for (size_t i = in_range; i < out.size(); ++i) out[i] = SlotReading{};
}

void SimTimestampSlots::reset(uint32_t first, uint32_t count, bool /*previous_use_done*/) {
  const size_t end = std::min<size_t>(slots_.size(), static_cast<size_t>(first) + count);
  for (size_t q = first; q < end; ++q) slots_[q].flags.store(0, std::memory_order_relaxed);
  resets_.fetch_add(end > first ? end - first : 0, std::memory_order_relaxed);
}

uint64_t SimTimestampSlots::execute(SimCommandStream& stream, uint64_t start_ticks,
                                    uint64_t step_ticks) {
  uint64_t t = start_ticks;
  for (const auto& w : stream.writes) {
    store(w.slot, t, false);
    t += step_ticks;
  }
  stream.writes.clear();
  return t;
}

void SimTimestampSlots::complete(uint32_t slot, uint64_t ticks) { store(slot, ticks, false); }

void SimTimestampSlots::complete_late(uint32_t slot, uint64_t ticks) { store(slot, ticks, true); }

void SimTimestampSlots::mark_disjoint(uint32_t slot) {
  if (slot < slots_.size()) slots_[slot].flags.fetch_or(kDisjoint, std::memory_order_release);
}

}  // namespace latlab
