#include <algorithm>
#include <cassert>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <thread>

#include "latlab/host_clock.hpp"
#include "latlab/profiler.hpp"
#include "profiler/retained_frame.hpp"
#include "profiler/stat_table.hpp"
#include "profiler/frame_slope.hpp"
#include "profiler/heavy_fence.hpp"

namespace latlab {

using profiler_detail::RetainedFrame;

namespace detail {
thread_local constinit const GpuZone* t_innermost_zone = nullptr;
thread_local constinit const CpuZone* t_innermost_cpu_zone = nullptr;
thread_local constinit uint32_t t_thread_id = 0;
namespace {
std::atomic<uint32_t> g_thread_ids{0};
std::atomic<uint64_t> g_recorder_ids{0};
}  // namespace
uint32_t assign_thread_id() {
  // 1.. within the record tag's thread bits (wraps after 2^29 threads;
  // bit 29 is ZoneRecord::kSiteBit).
  t_thread_id = g_thread_ids.fetch_add(1, std::memory_order_relaxed) % kThreadIdMask + 1;
  return t_thread_id;
}
}  // namespace detail

namespace {

constexpr uint64_t kIndexMask = (1ull << 48) - 1;
constexpr uint64_t pack_cursor(uint32_t slot, uint64_t index) {
  return (static_cast<uint64_t>(slot) << 48) | (index & kIndexMask);
}

// The second point of a frame's mapping when all its ok ticks are equal.
constexpr uint64_t kSlopeProbeTicks = 1'000'000;


// A retained frame built in full, for a reader (a copy; allocates).
ProfilerFrame built(const RetainedFrame& f, const TickFormat& ticks) {
  ProfilerFrame out;
  std::vector<uint32_t> last_child;
  profiler_detail::expand_frame(f, ticks, out, last_child);
  return out;
}

}  // namespace

struct GpuProfiler::Impl {
  enum class SlotState : uint8_t { free, recording, pending };
  struct Slot {
    SlotState state = SlotState::free;
    uint64_t frame_id = 0;
    uint32_t records = 0;  // zone records handed out, some skipped (final once pending)
    uint32_t zones = 0;    // the records that hold a zone (known once ready)
    uint32_t dropped = 0;  // zones that found the frame full
    uint32_t cpu_zones = 0;    // CPU zone records handed out (final once pending)
    uint32_t cpu_dropped = 0;  // CPU zones that found the frame full
    bool retired = false;
    int64_t cpu_begin_ns = 0;
    int64_t cpu_end_ns = 0;
    uint32_t queries_to_reset = 0;  // free: its last frame's queries, reset when it is next opened
  };

  mutable std::mutex mu;
  std::unique_ptr<ZoneRecord[]> records;
  std::unique_ptr<detail::ZoneLane[]> lanes;
  std::unique_ptr<int64_t[]> cpu_times;
  std::unique_ptr<CpuZoneRecord[]> cpu_records;
  std::vector<Slot> slots;
  std::vector<uint32_t> pending;  // slot indices, oldest first (a small ring as a vector: size <= slots)
  uint64_t frame_id = 0;          // the frame being recorded
  uint32_t slot = kNoSlot;        // its slot
  uint32_t next_slot = 0;         // where the search for a free slot starts (round robin)
  int64_t frame_cpu_begin_ns = 0;

  std::vector<SlotReading> raw;           // 2 * max_zones
  std::vector<uint32_t> zone_index;       // max_zones: a record's zone in the collected frame
  std::vector<uint32_t> last_child;    // max_zones, scratch of expand_frame for the sink
  std::vector<RetainedFrame> retained; // ring
  ProfilerFrame sink_frame;            // what the sink is given (capacity kept)
  uint32_t retained_next = 0;
  uint32_t retained_count = 0;
  uint64_t collected_seq = 0;          // collected frames, for the stat window

  GpuClockMapper mapper;
  std::function<void(const ProfilerFrame&)> sink;
  ProfilerCounters counters;
  std::unique_ptr<profiler_detail::StatTable> stat_table;
  std::unique_ptr<profiler_detail::StatTable> cpu_stat_table;  // CPU zones' rows, host time
};

Result<std::unique_ptr<GpuProfiler>> GpuProfiler::create(std::shared_ptr<TimestampSlots> slots,
                                                         GpuProfilerDesc desc) {
  if (auto prepared = prepare(slots.get(), desc); !prepared) return prepared.error();
  return std::unique_ptr<GpuProfiler>(new GpuProfiler(std::move(slots), std::move(desc)));
}

Result<void> GpuProfiler::prepare(TimestampSlots* slots, const GpuProfilerDesc& desc) {
  if (slots == nullptr) return make_error("GpuProfiler: no timestamp slots given");
  if (!slots->can_time()) {
    return make_error("GpuProfiler '" + desc.name + "': the device cannot write timestamps");
  }
  if (desc.max_zones_per_frame == 0 || desc.frames_in_flight == 0 || desc.stat_window_frames == 0 ||
      desc.max_zone_names == 0 || desc.retained_frames == 0) {
    return make_error("GpuProfiler '" + desc.name +
                      "': max_zones_per_frame, frames_in_flight, stat_window_frames, max_zone_names "
                      "and retained_frames must all be >= 1");
  }
  if (desc.frames_in_flight >= kNoSlot - 1) {
    return make_error("GpuProfiler '" + desc.name + "': frames_in_flight must be below 65534");
  }
  const uint64_t need = 2ull * desc.max_zones_per_frame * (desc.frames_in_flight + 1ull);
  if (need > slots->slot_count()) {
    return make_error("GpuProfiler '" + desc.name + "': the timestamp slots are " +
                      std::to_string(slots->slot_count()) + " queries, " + std::to_string(need) +
                      " are needed (2 x max_zones_per_frame " + std::to_string(desc.max_zones_per_frame) +
                      " x (frames_in_flight " + std::to_string(desc.frames_in_flight) +
                      " + 1)); create more slots or lower those settings");
  }
  // Every slot the profiler hands out starts its first use reset.
  slots->reset(0, static_cast<uint32_t>(need), true);
  return {};
}

GpuProfiler::GpuProfiler(std::shared_ptr<TimestampSlots> slots, GpuProfilerDesc desc)
    : detail::ZoneRecorder(slots.get(), desc.max_zones_per_frame, desc.max_cpu_zones_per_frame,
                           desc.cpu_zone_times),
      desc_(std::move(desc)),
      ticks_(slots->tick_format()),
      slots_(std::move(slots)),
      impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  const uint32_t ring = desc_.frames_in_flight + 1;
  const size_t max_zones = desc_.max_zones_per_frame;
  m.records = std::make_unique<ZoneRecord[]>(max_zones * ring);
  records_ = m.records.get();
  id_ = detail::g_recorder_ids.fetch_add(1, std::memory_order_relaxed) + 1;
  // Without membarrier the collector could not hold a lane's thread out of
  // it: every zone then takes its record from the shared cursor.
  if (profiler_detail::heavy_fence_available()) {
    m.lanes = std::make_unique<detail::ZoneLane[]>(detail::kZoneLanes + 1);
    lanes_ = m.lanes.get();
  }
  if (cpu_zone_times_) {
    m.cpu_times = std::make_unique<int64_t[]>(2 * max_zones * ring);
    cpu_times_ = m.cpu_times.get();
  }
  const size_t max_cpu = desc_.max_cpu_zones_per_frame;
  if (max_cpu > 0) {
    m.cpu_records = std::make_unique<CpuZoneRecord[]>(max_cpu * ring);
    cpu_records_ = m.cpu_records.get();
  }
  m.slots.resize(ring);
  m.pending.reserve(ring);
  m.raw.resize(2 * max_zones);
  m.zone_index.resize(max_zones);
  m.last_child.resize(max_zones + max_cpu);
  m.retained.resize(desc_.retained_frames);
  for (auto& f : m.retained) {
    f.zones.reserve(max_zones);
    f.cpu_zones.reserve(max_cpu);
    if (cpu_zone_times_) f.cpu_times.reserve(2 * max_zones);
  }
  m.sink_frame.zones.reserve(max_zones + max_cpu);
  m.stat_table = std::make_unique<profiler_detail::StatTable>(
      desc_.max_zone_names, desc_.stat_window_frames, desc_.max_zones_per_frame);
  m.cpu_stat_table = std::make_unique<profiler_detail::StatTable>(
      desc_.max_zone_names, desc_.stat_window_frames, desc_.max_cpu_zones_per_frame);
  // Frame 0 records into slot 0. Everything above is complete before the
  // cursor is set and before the profiler is returned to its owner.
  m.slot = 0;
  m.slots[0].state = Impl::SlotState::recording;
  m.frame_cpu_begin_ns = host_now_ns();
  m.counters.frames_opened = 1;
  open_slot_.store(0, std::memory_order_relaxed);
  cpu_cursor_.store(pack_cursor(0, 0), std::memory_order_release);
  cursor_.store(pack_cursor(0, 0), std::memory_order_release);
}

// Frames never collected would vanish from the stats and the trace without
// a word: say so, with how to keep them.
GpuProfiler::~GpuProfiler() {
  if (!impl_) return;
  Impl& m = *impl_;
  uint64_t frames = 0;
  uint64_t zones = 0;
  for (const uint32_t i : m.pending) {
    ++frames;
    zones += ended_zones(i, m.slots[i].records) + m.slots[i].cpu_zones;
  }
  if (m.slot != kNoSlot) {
    const auto records = static_cast<uint32_t>(std::min<uint64_t>(
        cursor_.load(std::memory_order_acquire) & kIndexMask, zones_per_frame_));
    const uint64_t open =
        ended_zones(m.slot, records) +
        std::min<uint64_t>(cpu_cursor_.load(std::memory_order_acquire) & kIndexMask,
                           cpu_zones_per_frame_);
    if (open > 0) {
      ++frames;
      zones += open;
    }
  }
  if (zones == 0) return;
  std::fprintf(stderr,
               "latlab: GPU profiler '%s' destroyed with %" PRIu64
               " frame(s) not collected (%" PRIu64
               " zones): they are missing from its stats and trace; call finish() once the device "
               "is done (after the last fence), before closing the trace\n",
               desc_.name.c_str(), frames, zones);
}

uint32_t GpuProfiler::finish() {
  const uint64_t before = counters().frames_collected;
  const bool open = (cursor_.load(std::memory_order_acquire) & kIndexMask) != 0 ||
                    (cpu_cursor_.load(std::memory_order_acquire) & kIndexMask) != 0;
  if (open) next_frame();
  Impl& m = *impl_;
  std::lock_guard lock(m.mu);
  for (const uint32_t i : m.pending) m.slots[i].retired = true;
  collect_locked();
  return static_cast<uint32_t>(m.counters.frames_collected - before);
}

// --- frames (under the mutex) ------------------------------------------------

namespace {

template <class Vec>
void count_growth(const Vec& v, size_t capacity_before, uint64_t& counter) {
  if (v.capacity() != capacity_before) ++counter;
}

}  // namespace

uint64_t GpuProfiler::next_frame() {
  Impl& m = *impl_;
  std::lock_guard lock(m.mu);
  LATLAB_ZONE_STEP(before_exchange);
  const int64_t now = host_now_ns();
  collect_locked();
  // A frame without a zone stays open and starts now: set-up before the first
  // frame, or a loop that opens its next frame at the end, leaves no empty
  // frame in the stat window and the trace, and frames number alike whether a
  // program calls next_frame first or last in its loop. A zone that takes its
  // pair after these loads belongs to this frame, which is still the open one.
  if (m.slot != kNoSlot && (cursor_.load(std::memory_order_acquire) & kIndexMask) == 0 &&
      (cpu_cursor_.load(std::memory_order_acquire) & kIndexMask) == 0) {
    m.frame_cpu_begin_ns = now;
    return m.frame_id;
  }

  // Round robin: the free slot whose frame is the oldest (frames are
  // collected in order), the one the app has surely waited the fence of.
  uint32_t new_slot = kNoSlot;
  const auto slot_count = static_cast<uint32_t>(m.slots.size());
  for (uint32_t k = 0; k < slot_count; ++k) {
    const uint32_t i = (m.next_slot + k) % slot_count;
    if (m.slots[i].state == Impl::SlotState::free) {
      new_slot = i;
      m.next_slot = (i + 1) % slot_count;
      break;
    }
  }
  const uint64_t new_id = m.frame_id + 1;
  if (new_slot != kNoSlot) {
    Impl::Slot& s = m.slots[new_slot];
    // The reset of its last frame's queries is done here, not when that
    // frame was collected: collection may come (results available) before
    // the app waits the frame's fence, and the validation layer then takes
    // the fence wait for a later write (Vulkan-ValidationLayers #2521:
    // QueryNotReset). Now that at most frames_in_flight frames are on the
    // device, the app has waited it.
    if (s.queries_to_reset > 0) {
      slots_raw_->reset(new_slot * queries_per_frame_, s.queries_to_reset, true);
    }
    s = Impl::Slot{};
    s.state = Impl::SlotState::recording;
    s.frame_id = new_id;
  }
  // One exchange closes the old frame and opens the new one: a block, or a
  // record, belongs to exactly the frame whose cursor its CAS or fetch_add
  // moved. A frame without queries starts full: every zone in it is dropped.
  const uint64_t start = new_slot == kNoSlot ? zones_per_frame_ : 0;
  const uint64_t old = cursor_.exchange(pack_cursor(new_slot, start), std::memory_order_acq_rel);
  LATLAB_ZONE_STEP(exchanged);
  // Lanes see their blocks of the old frame closed (the thread skips what
  // it did not use at its next zone, or the collector does).
  open_slot_.store(new_slot, std::memory_order_release);
  if (m.slot != kNoSlot) skip_own_block(m.slot);
  const uint64_t handed = old & kIndexMask;
  if (m.slot == kNoSlot) {
    m.counters.zones_dropped += handed - zones_per_frame_;
  } else {
    Impl::Slot& s = m.slots[m.slot];
    const uint64_t used = std::min<uint64_t>(handed, zones_per_frame_);
    s.records = static_cast<uint32_t>(used);
    s.dropped = static_cast<uint32_t>(handed - used);
    s.cpu_begin_ns = m.frame_cpu_begin_ns;
    s.cpu_end_ns = now;
    s.state = Impl::SlotState::pending;
    m.pending.push_back(m.slot);
    m.counters.zones_dropped += s.dropped;
  }
  // CPU zones: the same slot, the same way (only ever moved by fetch_add).
  const uint64_t cpu_start = new_slot == kNoSlot ? cpu_zones_per_frame_ : 0;
  const uint64_t cpu_handed =
      cpu_cursor_.exchange(pack_cursor(new_slot, cpu_start), std::memory_order_acq_rel) &
      kIndexMask;
  const uint64_t cpu_used = std::min<uint64_t>(cpu_handed, cpu_zones_per_frame_);
  if (m.slot != kNoSlot) {
    m.slots[m.slot].cpu_zones = static_cast<uint32_t>(cpu_used);
    m.slots[m.slot].cpu_dropped = static_cast<uint32_t>(cpu_handed - cpu_used);
  }
  m.counters.cpu_zones_dropped += cpu_handed - cpu_used;
  m.frame_id = new_id;
  m.slot = new_slot;
  m.frame_cpu_begin_ns = now;
  ++m.counters.frames_opened;
  if (new_slot == kNoSlot) ++m.counters.frames_without_queries;
  collect_locked();  // the frame just closed may be complete already
  return new_id;
}

uint32_t GpuProfiler::collect() {
  std::lock_guard lock(impl_->mu);
  return collect_locked();
}

void GpuProfiler::retire_frame(uint64_t frame_id) {
  Impl& m = *impl_;
  std::lock_guard lock(m.mu);
  for (auto& s : m.slots) {
    if (s.state != Impl::SlotState::free && s.frame_id == frame_id) s.retired = true;
  }
}

void GpuProfiler::set_clock_mapper(GpuClockMapper mapper) {
  std::lock_guard lock(impl_->mu);
  impl_->mapper = std::move(mapper);
}

void GpuProfiler::set_frame_sink(std::function<void(const ProfilerFrame&)> sink) {
  std::lock_guard lock(impl_->mu);
  impl_->sink = std::move(sink);
}

uint32_t GpuProfiler::collect_locked() {
  Impl& m = *impl_;
  uint32_t n = 0;
  while (!m.pending.empty() && try_collect_slot(m.pending.front())) {
    m.pending.erase(m.pending.begin());  // at most frames_in_flight + 1 entries: no allocation
    ++n;
  }
  return n;
}

// Collects one frame slot: readiness, the host mapping, per-zone statuses
// and the stat tables, then recycling. The hot path measured by
// BM_ProfilerCollectFrame2048 and latlab_profiler_instructions: each step's
// loop keeps its frame state in locals.
bool GpuProfiler::try_collect_slot(uint32_t slot_index) {
  if (!slot_ready(slot_index)) return false;
  Impl& m = *impl_;
  Impl::Slot& s = m.slots[slot_index];
  // Into the oldest retained buffer (capacity kept; the size changes only
  // when the zone count does).
  RetainedFrame& f = m.retained[m.retained_next];
  f.mapping = host_mapping(s.records);
  const size_t cap_before = f.zones.capacity();
  f.zones.resize(s.zones);
  count_growth(f.zones, cap_before, m.counters.heap_allocations);
  f.frame_id = s.frame_id;
  f.zones_dropped = s.dropped;
  f.retired = s.retired;
  f.durations_only = slots_raw_->durations_only();
  f.cpu_begin_ns = s.cpu_begin_ns;
  f.cpu_end_ns = s.cpu_end_ns;
  // Reserved: no allocation; filled by tabulate_gpu_zones.
  if (cpu_times_ != nullptr) f.cpu_times.resize(2 * static_cast<size_t>(s.zones));
  tabulate_gpu_zones(slot_index, f);
  tabulate_cpu_zones(slot_index, f);
  ++m.counters.frames_collected;
  if (s.retired) ++m.counters.frames_retired;
  ++m.collected_seq;
  m.stat_table->end_frame(m.collected_seq, s.dropped);
  m.cpu_stat_table->end_frame(m.collected_seq, s.cpu_dropped);
  m.retained_next = (m.retained_next + 1) % static_cast<uint32_t>(m.retained.size());
  m.retained_count = std::min<uint32_t>(m.retained_count + 1, static_cast<uint32_t>(m.retained.size()));
  if (m.sink) {
    const size_t sink_cap = m.sink_frame.zones.capacity();
    profiler_detail::expand_frame(f, ticks_, m.sink_frame, m.last_child);
    count_growth(m.sink_frame.zones, sink_cap, m.counters.heap_allocations);
    m.sink(m.sink_frame);
  }
  recycle_slot(slot_index);
  return true;
}

// Whether the slot's frame can be collected: every zone (GPU and CPU) closed
// on the host and both timestamps of every zone written, unless the frame is
// retired (then they never will be), and every record that no zone used
// skipped. Reads the queries into impl_->raw; writes nothing else but the
// slot's zone count and, through take_unused_blocks, skipped records.
bool GpuProfiler::slot_ready(uint32_t slot_index) {
  bool unfinished = false;
  if (!gpu_zones_done(slot_index, unfinished)) return false;
  if (unfinished) {
    // Records neither ended nor skipped: a zone still open, or a block whose
    // thread has not come back since the frame closed. Skip the blocks'
    // unused records for their threads, then look again.
    if (!take_unused_blocks(slot_index)) return false;
    if (!gpu_zones_done(slot_index, unfinished) || unfinished) return false;
  }
  const Impl::Slot& s = impl_->slots[slot_index];
  const CpuZoneRecord* cpu_recs =
      cpu_records_ + static_cast<size_t>(slot_index) * cpu_zones_per_frame_;
  const uint32_t nc = s.cpu_zones;
  for (uint32_t i = 0; i < nc; ++i) {
    if ((cpu_recs[i].tag.load(std::memory_order_acquire) & ZoneRecord::kEndedBit) == 0)
      return false;
  }
  return true;
}

// The GPU zones of the slot's frame: false while the device has not written
// every ended zone's timestamps (unless retired); `unfinished` when a record
// is neither ended nor skipped. Counts the ended records into the slot's
// `zones`.
bool GpuProfiler::gpu_zones_done(uint32_t slot_index, bool& unfinished) {
  Impl& m = *impl_;
  Impl::Slot& s = m.slots[slot_index];
  const uint32_t n = s.records;
  const ZoneRecord* recs = records_ + static_cast<size_t>(slot_index) * zones_per_frame_;
  const uint32_t base = slot_index * queries_per_frame_;
  std::span<SlotReading> raw(m.raw.data(), 2 * static_cast<size_t>(n));
  if (n > 0) {
    // Cheap early out for a frame still on the device (most attempts: each
    // next_frame tries the frame it just closed): the last ended zone's end
    // timestamp not written, before reading every query. Records after it
    // are open zones, or reserved and not used.
    uint32_t last = n;
    while (last > 0 && (recs[last - 1].tag.load(std::memory_order_relaxed) &
                        ZoneRecord::kEndedBit) == 0) {
      --last;
    }
    if (last > 0 && !s.retired) {
      slots_raw_->read(base + 2 * last - 1, raw.subspan(2 * last - 1, 1));
      if (raw[2 * last - 1].available == 0) return false;
    }
    slots_raw_->read(base, raw);
  }
  // A record is complete only once closed: acquire pairs with end_zone's release.
  bool all_written = true;
  uint32_t zones = 0;
  unfinished = false;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t tag = recs[i].tag.load(std::memory_order_acquire);
    if ((tag & ZoneRecord::kEndedBit) != 0) {
      ++zones;
      all_written &= (raw[2 * i].available & raw[2 * i + 1].available) != 0;
    } else if (tag == 0) {
      unfinished = true;
    }
  }
  if (!all_written && !s.retired) return false;  // carried over to the next collection
  s.zones = zones;
  return true;
}

// Zones (ended records) among a slot's first `records` records.
uint32_t GpuProfiler::ended_zones(uint32_t slot_index, uint32_t records) const {
  const ZoneRecord* recs = records_ + static_cast<size_t>(slot_index) * zones_per_frame_;
  uint32_t n = 0;
  for (uint32_t i = 0; i < records; ++i) {
    n += (recs[i].tag.load(std::memory_order_acquire) & ZoneRecord::kEndedBit) != 0;
  }
  return n;
}

// The frame's host timeline: a line through the mappings of two of its
// ticks, the first ok zone's begin and the later of the first and the last
// ok zone's ends (the first is often the root around the whole frame).
// Exact for a linear clock model, which is what ClockFit is; no scan of the
// frame needed. Unmapped without a mapper, an ok zone or two mappings.
profiler_detail::FrameMapping GpuProfiler::host_mapping(uint32_t n) const {
  const Impl& m = *impl_;
  profiler_detail::FrameMapping map;
  if (!m.mapper || n == 0 || slots_raw_->durations_only()) return map;
  const TickFormat tf = ticks_;
  const uint64_t mask = tf.mask();
  const auto offset = [&tf](uint64_t from, uint64_t to) { return tf.signed_delta(from, to); };
  const auto zone_ok = [&](uint32_t i) {
    return completed_pair_status(m.raw[2 * i], m.raw[2 * i + 1], tf) == QueryStatus::ok;
  };
  uint32_t first = 0, last = n - 1;
  while (first < n && !zone_ok(first)) ++first;
  while (last > first && !zone_ok(last)) --last;
  if (first == n) return map;
  uint64_t t0 = m.raw[2 * first].ticks & mask;
  uint64_t t1 = m.raw[2 * last + 1].ticks & mask;
  const uint64_t first_end = m.raw[2 * first + 1].ticks & mask;
  if (offset(t1, first_end) > 0) t1 = first_end;
  // Zones from several command streams may run in any order.
  if (offset(t0, t1) < 0) std::swap(t0, t1);
  // Every ok zone at one tick: any second point gives the line's slope.
  if (t1 == t0) t1 = (t0 + kSlopeProbeTicks) & mask;
  const std::optional<MappedTime> m0 = m.mapper(t0);
  const std::optional<MappedTime> m1 = m.mapper(t1);
  if (!m0 || !m1) return map;
  if (auto sl = profiler_detail::fixed_slope(m1->host_ns - m0->host_ns, offset(t0, t1))) {
    map.mapped = true;
    map.anchor = t0;
    map.h0 = m0->host_ns;
    map.slope = *sl;
    map.error_ns = std::max(m0->error_ns, m1->error_ns);
  }
  return map;
}

// Per zone its status and what the device gave, and the stat table; the
// tree and host times are built only when someone looks (expand_frame).
// This loop is most of a collection's CPU time. Skipped records leave gaps:
// zone k of the frame is then the k-th ended record, and a parent (an
// earlier record) is found through zone_index; a frame without gaps (one
// thread, or every block used up) takes the plain loop.
void GpuProfiler::tabulate_gpu_zones(uint32_t slot_index, RetainedFrame& f) {
  Impl& m = *impl_;
  const Impl::Slot& s = m.slots[slot_index];
  const uint32_t n = s.records;
  const ZoneRecord* recs = records_ + static_cast<size_t>(slot_index) * zones_per_frame_;
  const int64_t* cpu =
      cpu_times_ != nullptr ? cpu_times_ + 2 * static_cast<size_t>(slot_index) * zones_per_frame_
                            : nullptr;
  const TickFormat tf = ticks_;  // a local copy: its mask stays in a register across the loop
  const uint64_t mask = tf.mask();
  const SlotReading* raw = m.raw.data();
  profiler_detail::StatTable& stats = *m.stat_table;
  profiler_detail::CompactZone* out = f.zones.data();
  int64_t* cpu_out = f.cpu_times.data();
  uint64_t ok = 0, invalid = 0, disjoint = 0, overlapped = 0;
  // Record i as zone k, its parent zone `parent`.
  const auto add = [&](uint32_t i, uint32_t k, uint32_t tag, uint32_t parent)
                       __attribute__((always_inline)) {
    const ZoneRecord& r = recs[i];
    const SlotReading& b = raw[2 * i];
    const SlotReading& e = raw[2 * i + 1];
    // Never written (retired): no ticks; disjoint or end before begin: the
    // ticks are kept.
    const bool written = (b.available & e.available) != 0;
    const uint64_t bt = written ? b.ticks & mask : 0;
    const uint64_t et = written ? e.ticks & mask : 0;
    uint64_t el = 0;
    const QueryStatus status = completed_pair_status(b, e, tf, &el);
    const bool zone_is_ok = status == QueryStatus::ok;
    ok += zone_is_ok;
    invalid += status == QueryStatus::invalid;
    disjoint += status == QueryStatus::disjoint;
    overlapped += status == QueryStatus::overlapped;
    const bool has_site = (tag & ZoneRecord::kSiteBit) != 0;
    const char* name =
        has_site ? static_cast<const ZoneSite*>(r.what)->name : static_cast<const char*>(r.what);
    stats.add_zone(k, name, zone_is_ok, zone_is_ok ? tf.ticks_to_ns(el) : 0, m.counters);
    out[k] = {r.what,
              bt,
              et,
              parent,
              tag & ZoneRecord::kThreadMask,
              status,
              (tag & ZoneRecord::kOrphanBit) != 0,
              has_site};
  };
  // Tags acquired by slot_ready.
  if (s.zones == n) {
    for (uint32_t i = 0; i < n; ++i) {
      add(i, i, recs[i].tag.load(std::memory_order_relaxed), recs[i].parent);
    }
    if (cpu != nullptr) std::copy(cpu, cpu + 2 * static_cast<size_t>(n), cpu_out);
  } else {
    uint32_t* index = m.zone_index.data();
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t tag = recs[i].tag.load(std::memory_order_relaxed);
      if ((tag & ZoneRecord::kEndedBit) == 0) continue;  // skipped
      const uint32_t parent = recs[i].parent;
      add(i, k, tag, parent < i ? index[parent] : kNoZone);
      if (cpu != nullptr) {
        cpu_out[2 * k] = cpu[2 * i];
        cpu_out[2 * k + 1] = cpu[2 * i + 1];
      }
      index[i] = k++;
    }
  }
  m.counters.zones_ok += ok;
  m.counters.zones_invalid += invalid;
  m.counters.zones_disjoint += disjoint;
  m.counters.zones_overlapped += overlapped;
  m.counters.zones_collected += s.zones;
}

// CPU zones: host times as recorded, into their own stat table.
void GpuProfiler::tabulate_cpu_zones(uint32_t slot_index, RetainedFrame& f) {
  Impl& m = *impl_;
  const Impl::Slot& s = m.slots[slot_index];
  const CpuZoneRecord* cpu_recs =
      cpu_records_ + static_cast<size_t>(slot_index) * cpu_zones_per_frame_;
  profiler_detail::StatTable& cpu_stats = *m.cpu_stat_table;
  const uint32_t nc = s.cpu_zones;
  f.cpu_zones.resize(nc);  // reserved: no allocation
  f.cpu_zones_dropped = s.cpu_dropped;
  for (uint32_t i = 0; i < nc; ++i) {
    const CpuZoneRecord& r = cpu_recs[i];
    const uint32_t tag = r.tag.load(std::memory_order_relaxed);  // acquired by slot_ready
    profiler_detail::CompactCpuZone& c = f.cpu_zones[i];
    c = {r.what,
         r.begin_ns,
         r.end_ns,
         r.parent,
         tag & ZoneRecord::kThreadMask,
         (tag & ZoneRecord::kOrphanBit) != 0,
         (tag & ZoneRecord::kSiteBit) != 0};
    cpu_stats.add_zone(i, c.name(), true, r.end_ns - r.begin_ns, m.counters);
  }
  m.counters.cpu_zones_collected += nc;
}

// The device is done with the slot's queries (read available, or the frame
// retired) and its records are read: the records are reset now, the queries
// when the slot is next opened (next_frame).
void GpuProfiler::recycle_slot(uint32_t slot_index) {
  Impl::Slot& s = impl_->slots[slot_index];
  ZoneRecord* recs = records_ + static_cast<size_t>(slot_index) * zones_per_frame_;
  CpuZoneRecord* cpu_recs = cpu_records_ + static_cast<size_t>(slot_index) * cpu_zones_per_frame_;
  // Counts in locals: the stores below could alias the slot's fields.
  const uint32_t n = s.records, nc = s.cpu_zones;
  for (uint32_t i = 0; i < n; ++i) recs[i].tag.store(0, std::memory_order_relaxed);
  for (uint32_t i = 0; i < nc; ++i) cpu_recs[i].tag.store(0, std::memory_order_relaxed);
  s.state = Impl::SlotState::free;
  s.queries_to_reset = 2 * n;
}

// --- readers -----------------------------------------------------------------

uint64_t GpuProfiler::current_frame_id() const {
  std::lock_guard lock(impl_->mu);
  return impl_->frame_id;
}

std::optional<ProfilerFrame> GpuProfiler::frame(uint64_t frame_id) const {
  const Impl& m = *impl_;
  std::lock_guard lock(m.mu);
  for (uint32_t k = 0; k < m.retained_count; ++k) {
    if (m.retained[k].frame_id == frame_id) return built(m.retained[k], ticks_);
  }
  return std::nullopt;
}

std::optional<ProfilerFrame> GpuProfiler::latest_frame() const {
  const Impl& m = *impl_;
  std::lock_guard lock(m.mu);
  if (m.retained_count == 0) return std::nullopt;
  const auto size = static_cast<uint32_t>(m.retained.size());
  return built(m.retained[(m.retained_next + size - 1) % size], ticks_);
}

std::vector<ZoneStat> GpuProfiler::stats() const {
  const Impl& m = *impl_;
  std::lock_guard lock(m.mu);
  std::vector<ZoneStat> out = m.stat_table->stats(m.collected_seq);
  std::vector<ZoneStat> cpu = m.cpu_stat_table->stats(m.collected_seq);
  for (ZoneStat& st : cpu) {
    st.cpu = true;
    out.push_back(std::move(st));
  }
  return out;
}

ProfilerCounters GpuProfiler::counters() const {
  std::lock_guard lock(impl_->mu);
  return impl_->counters;
}

}  // namespace latlab
