#include <algorithm>

#include "latlab/profiler_sim.hpp"

namespace latlab {

std::shared_ptr<SimTimestampWriter> SimTimestampWriter::create(SimTimestampWriterDesc desc) {
  desc.query_count = std::max<uint32_t>(2, desc.query_count);
  desc.immediate_step_ticks = std::max<uint64_t>(1, desc.immediate_step_ticks);
  return std::shared_ptr<SimTimestampWriter>(new SimTimestampWriter(desc));
}

SimTimestampWriter::SimTimestampWriter(SimTimestampWriterDesc desc)
    : desc_(desc), slots_(desc.query_count), clock_(desc.immediate_start_ticks) {}

SimTimestampWriter::~SimTimestampWriter() = default;

void SimTimestampWriter::store(uint32_t query, uint64_t ticks) {
  if (query >= slots_.size()) return;
  Slot& s = slots_[query];
  s.ticks.store(ticks & desc_.ticks.mask(), std::memory_order_relaxed);
  const uint32_t before = s.flags.fetch_or(kAvailable, std::memory_order_release);
  if (before & kAvailable) double_writes_.fetch_add(1, std::memory_order_relaxed);
}

void SimTimestampWriter::write_timestamp(GpuCommandStream stream, uint32_t query, ZoneEdge edge) {
  if (desc_.immediate) {
    immediate_writes_.fetch_add(1, std::memory_order_relaxed);
    store(query, clock_.fetch_add(desc_.immediate_step_ticks, std::memory_order_relaxed));
    return;
  }
  if (stream == nullptr) return;
  static_cast<SimCommandStream*>(stream)->writes.push_back({query, edge});
}

void SimTimestampWriter::read_results(uint32_t first, std::span<TimestampReadback> out) {
  const size_t n = slots_.size();
  const size_t in_range = first >= n ? 0 : std::min(out.size(), n - first);
  const Slot* slot = slots_.data() + first;
  for (size_t i = 0; i < in_range; ++i) {
    const uint32_t flags = slot[i].flags.load(std::memory_order_acquire);
    out[i].ticks = slot[i].ticks.load(std::memory_order_relaxed);
    out[i].available = flags & kAvailable;
    out[i].disjoint = flags & kDisjoint;
  }
  for (size_t i = in_range; i < out.size(); ++i) out[i] = TimestampReadback{};
}

void SimTimestampWriter::reset_queries(uint32_t first, uint32_t count) {
  const size_t end = std::min<size_t>(slots_.size(), static_cast<size_t>(first) + count);
  for (size_t q = first; q < end; ++q) slots_[q].flags.store(0, std::memory_order_relaxed);
  resets_.fetch_add(end > first ? end - first : 0, std::memory_order_relaxed);
}

uint64_t SimTimestampWriter::execute(SimCommandStream& stream, uint64_t start_ticks,
                                     uint64_t step_ticks) {
  uint64_t t = start_ticks;
  for (const auto& w : stream.writes) {
    store(w.query, t);
    t += step_ticks;
  }
  stream.writes.clear();
  return t;
}

void SimTimestampWriter::complete(uint32_t query, uint64_t ticks) { store(query, ticks); }

void SimTimestampWriter::mark_disjoint(uint32_t query) {
  if (query < slots_.size()) slots_[query].flags.fetch_or(kDisjoint, std::memory_order_release);
}

}  // namespace latlab
