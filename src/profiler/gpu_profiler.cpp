#include <algorithm>
#include <cassert>
#include <cstring>

#include "latlab/host_clock.hpp"
#include "latlab/profiler.hpp"
#include "profiler/stat_table.hpp"

namespace latlab {

namespace detail {
thread_local constinit const GpuZone* t_innermost_zone = nullptr;
thread_local constinit uint32_t t_thread_id = 0;
namespace {
std::atomic<uint32_t> g_thread_ids{0};
}  // namespace
uint32_t assign_thread_id() {
  t_thread_id = g_thread_ids.fetch_add(1, std::memory_order_relaxed) + 1;
  return t_thread_id;
}
}  // namespace detail

namespace {

constexpr uint32_t kNoSlot = 0xFFFF;
constexpr uint64_t kIndexMask = (1ull << 48) - 1;
constexpr uint64_t pack_cursor(uint32_t slot, uint64_t index) {
  return (static_cast<uint64_t>(slot) << 48) | (index & kIndexMask);
}

// Signed tick distance from `ref` to `t` on a counter of `mask`'s width.
int64_t tick_offset(const TickFormat& f, uint64_t ref, uint64_t t) {
  const uint64_t fwd = f.elapsed_ticks(ref, t);
  if (fwd <= (f.mask() >> 1)) return static_cast<int64_t>(fwd);
  return -static_cast<int64_t>(f.elapsed_ticks(t, ref));
}

// Nearest integer, halves away from zero (llround without the libm call).
int64_t round_to_i64(double x) {
  return x >= 0 ? static_cast<int64_t>(x + 0.5) : -static_cast<int64_t>(-x + 0.5);
}

// TickFormat::ticks_to_ns without its 128-bit division when 64 bits do
// (always for zone durations): same rounding, same result.
int64_t fast_ticks_to_ns(const TickFormat& f, uint64_t ticks) {
  uint64_t product = 0;
  if (f.period_den == 1 && !__builtin_mul_overflow(ticks, f.period_num, &product)) {
    return static_cast<int64_t>(product);
  }
  if (!__builtin_mul_overflow(ticks, f.period_num, &product) && product <= ~0ull - f.period_den / 2) {
    return static_cast<int64_t>((product + f.period_den / 2) / f.period_den);
  }
  return f.ticks_to_ns(ticks);
}

}  // namespace

struct GpuProfiler::Impl {
  enum class SlotState : uint8_t { free, recording, pending };
  struct Slot {
    SlotState state = SlotState::free;
    uint64_t frame_id = 0;
    uint32_t zones = 0;    // pairs handed out (final once pending)
    uint32_t dropped = 0;  // zones that found the frame full
    bool retired = false;
    int64_t cpu_begin_ns = 0;
    int64_t cpu_end_ns = 0;
  };

  mutable std::mutex mu;
  std::unique_ptr<ZoneRecord[]> records;
  std::unique_ptr<int64_t[]> cpu_times;
  std::vector<Slot> slots;
  std::vector<uint32_t> pending;  // slot indices, oldest first (a small ring as a vector: size <= slots)
  uint64_t frame_id = 0;          // the frame being recorded
  uint32_t slot = kNoSlot;        // its slot
  int64_t frame_cpu_begin_ns = 0;

  std::vector<TimestampReadback> raw;           // 2 * max_zones
  std::vector<uint32_t> last_child;    // max_zones
  std::vector<ProfilerFrame> retained; // ring
  uint32_t retained_next = 0;
  uint32_t retained_count = 0;
  uint64_t collected_seq = 0;          // collected frames, for the stat window

  GpuClockMapper mapper;
  std::function<void(const ProfilerFrame&)> sink;
  ProfilerCounters counters;
  std::unique_ptr<profiler_detail::StatTable> stat_table;
};

Result<std::unique_ptr<GpuProfiler>> GpuProfiler::create(std::shared_ptr<GpuTimestampWriter> writer,
                                                         GpuProfilerDesc desc) {
  if (!writer) return make_error("GpuProfiler: no timestamp writer given");
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
  if (need > writer->query_count()) {
    return make_error("GpuProfiler '" + desc.name + "': the timestamp writer has " +
                      std::to_string(writer->query_count()) + " queries, " + std::to_string(need) +
                      " are needed (2 x max_zones_per_frame " + std::to_string(desc.max_zones_per_frame) +
                      " x (frames_in_flight " + std::to_string(desc.frames_in_flight) +
                      " + 1)); create the writer larger or lower those settings");
  }
  return std::unique_ptr<GpuProfiler>(new GpuProfiler(std::move(writer), std::move(desc)));
}

GpuProfiler::GpuProfiler(std::shared_ptr<GpuTimestampWriter> writer, GpuProfilerDesc desc)
    : desc_(std::move(desc)),
      ticks_(writer->tick_format()),
      writer_(std::move(writer)),
      writer_raw_(writer_.get()),
      queries_per_frame_(2 * desc_.max_zones_per_frame),
      zones_per_frame_(desc_.max_zones_per_frame),
      cpu_zone_times_(desc_.cpu_zone_times),
      impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  const uint32_t ring = desc_.frames_in_flight + 1;
  const size_t max_zones = desc_.max_zones_per_frame;
  m.records = std::make_unique<ZoneRecord[]>(max_zones * ring);
  records_ = m.records.get();
  if (cpu_zone_times_) {
    m.cpu_times = std::make_unique<int64_t[]>(2 * max_zones * ring);
    cpu_times_ = m.cpu_times.get();
  }
  m.slots.resize(ring);
  m.pending.reserve(ring);
  m.raw.resize(2 * max_zones);
  m.last_child.resize(max_zones);
  m.retained.resize(desc_.retained_frames);
  for (auto& f : m.retained) f.zones.reserve(max_zones);
  m.stat_table = std::make_unique<profiler_detail::StatTable>(desc_.max_zone_names,
                                                              desc_.stat_window_frames);
  // Frame 0 records into slot 0. Everything above is complete before the
  // cursor is set and before the profiler is returned to its owner.
  m.slot = 0;
  m.slots[0].state = Impl::SlotState::recording;
  m.frame_cpu_begin_ns = host_now_ns();
  m.counters.frames_opened = 1;
  cursor_.store(pack_cursor(0, 0), std::memory_order_release);
}

GpuProfiler::~GpuProfiler() = default;

// --- recording (lock-free) ---------------------------------------------------

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
  const int64_t now = host_now_ns();
  collect_locked();

  uint32_t new_slot = kNoSlot;
  for (uint32_t i = 0; i < m.slots.size(); ++i) {
    if (m.slots[i].state == Impl::SlotState::free) {
      new_slot = i;
      break;
    }
  }
  const uint64_t new_id = m.frame_id + 1;
  if (new_slot != kNoSlot) {
    Impl::Slot& s = m.slots[new_slot];
    s = Impl::Slot{};
    s.state = Impl::SlotState::recording;
    s.frame_id = new_id;
  }
  // One exchange closes the old frame and opens the new one: a zone belongs
  // to exactly the frame whose cursor its fetch_add saw.
  const uint64_t old = cursor_.exchange(pack_cursor(new_slot, 0), std::memory_order_acq_rel);
  const uint64_t handed = old & kIndexMask;
  if (m.slot == kNoSlot) {
    m.counters.zones_dropped += handed / 2;
  } else {
    Impl::Slot& s = m.slots[m.slot];
    const uint64_t used = std::min<uint64_t>(handed, queries_per_frame_);
    s.zones = static_cast<uint32_t>(used / 2);
    s.dropped = static_cast<uint32_t>((handed - used) / 2);
    s.cpu_begin_ns = m.frame_cpu_begin_ns;
    s.cpu_end_ns = now;
    s.state = Impl::SlotState::pending;
    m.pending.push_back(m.slot);
    m.counters.zones_dropped += s.dropped;
  }
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

bool GpuProfiler::try_collect_slot(uint32_t slot_index) {
  Impl& m = *impl_;
  Impl::Slot& s = m.slots[slot_index];
  const uint32_t n = s.zones;
  ZoneRecord* recs = records_ + static_cast<size_t>(slot_index) * zones_per_frame_;
  const uint32_t base = slot_index * queries_per_frame_;
  std::span<TimestampReadback> raw(m.raw.data(), 2 * static_cast<size_t>(n));
  if (n > 0) writer_raw_->read_results(base, raw);

  // Pass 1 over the pairs: readiness, each zone's status (kept in the
  // begin's `disjoint` word: 0 ok, 1 invalid, 2 disjoint), the frame's tick
  // range for the host mapping. Every zone must also be closed on the host:
  // its record is complete only then (acquire pairs with end_zone's release).
  const TickFormat& tf = ticks_;
  const uint64_t mask = tf.mask();
  const uint64_t half = mask >> 1;
  constexpr uint32_t kOk = 0, kInvalid = 1, kDisjoint = 2;
  bool have_ref = false;
  uint64_t ref = 0;
  int64_t off_min = 0, off_max = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (recs[i].state.load(std::memory_order_acquire) != ZoneRecord::kEnded) return false;
    TimestampReadback& b = raw[2 * i];
    const TimestampReadback& e = raw[2 * i + 1];
    if (b.available == 0 || e.available == 0) {
      if (!s.retired) return false;  // carried over to the next collection
      b.disjoint = kInvalid;          // retired: it will never be written
      continue;
    }
    const uint64_t bt = b.ticks & mask;
    const uint64_t el = ((e.ticks & mask) - bt) & mask;
    if ((b.disjoint | e.disjoint) != 0) {
      b.disjoint = kDisjoint;
    } else if (el > half) {
      b.disjoint = kInvalid;  // end before begin
    } else {
      b.disjoint = kOk;
      if (!have_ref) {
        have_ref = true;
        ref = bt;
      }
      const int64_t ob = tick_offset(tf, ref, bt);
      off_min = std::min(off_min, ob);
      off_max = std::max(off_max, ob + static_cast<int64_t>(el));
    }
  }

  // Host timeline: map the frame's first and last tick, interpolate between
  // (exact for a linear clock model, which is what ClockFit is).
  bool mapped = false;
  int64_t h0 = 0;
  double per_tick = 0.0;  // host ns per tick over this frame
  int64_t map_error = 0;
  if (have_ref && m.mapper) {
    const uint64_t t_min = (ref + static_cast<uint64_t>(off_min)) & mask;
    const uint64_t t_max = (ref + static_cast<uint64_t>(off_max)) & mask;
    const std::optional<MappedTime> h_min = m.mapper(t_min);
    const std::optional<MappedTime> h_max = off_max == off_min ? h_min : m.mapper(t_max);
    if (h_min && h_max) {
      mapped = true;
      map_error = std::max(h_min->error_ns, h_max->error_ns);
      h0 = h_min->host_ns;
      // A frame spans milliseconds: a double keeps this well below 1 ns.
      if (off_max > off_min) {
        per_tick = static_cast<double>(h_max->host_ns - h_min->host_ns) /
                   static_cast<double>(off_max - off_min);
      }
    }
  }

  // Pass 2: the frame, into the oldest retained buffer (capacity kept; the
  // size changes only when the zone count does), and the stat table.
  ProfilerFrame& f = m.retained[m.retained_next];
  const size_t cap_before = f.zones.capacity();
  if (f.zones.size() != n) f.zones.resize(n);
  count_growth(f.zones, cap_before, m.counters.heap_allocations);
  f.frame_id = s.frame_id;
  f.first_root = kNoZone;
  f.zones_dropped = s.dropped;
  f.retired = s.retired;
  f.cpu_begin_ns = s.cpu_begin_ns;
  f.cpu_end_ns = s.cpu_end_ns;
  f.host_mapped = mapped;
  f.map_error_ns = map_error;

  const int64_t* cpu = cpu_times_ != nullptr ? cpu_times_ + 2 * static_cast<size_t>(slot_index) * zones_per_frame_
                                             : nullptr;
  profiler_detail::StatTable& stats = *m.stat_table;
  const bool unit_ticks = tf.period_num == 1 && tf.period_den == 1;  // 1 ns ticks (lavapipe)
  const bool forward = per_tick >= 0.0;
  uint32_t last_root = kNoZone;
  uint64_t ok = 0, invalid = 0, disjoint = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const ZoneRecord& r = recs[i];
    const TimestampReadback& b = raw[2 * i];
    const TimestampReadback& e = raw[2 * i + 1];
    ProfilerZone& z = f.zones[i];
    z.name = r.name;
    z.parent = r.parent;
    z.first_child = kNoZone;
    z.next_sibling = kNoZone;
    z.depth = 0;
    z.thread = r.thread & ~ZoneRecord::kOrphanBit;
    z.orphan = (r.thread & ZoneRecord::kOrphanBit) != 0;
    z.cpu_recorded = cpu != nullptr;
    z.cpu_begin_ns = cpu != nullptr ? cpu[2 * i] : 0;
    z.cpu_end_ns = cpu != nullptr ? cpu[2 * i + 1] : 0;
    z.host_mapped = false;
    z.gpu_begin_host_ns = 0;
    z.gpu_end_host_ns = 0;
    z.duration_ns = 0;
    if (b.disjoint == kInvalid && (b.available == 0 || e.available == 0)) {
      z.status = QueryStatus::invalid;
      z.begin_ticks = z.end_ticks = 0;
      ++invalid;
    } else {
      z.begin_ticks = b.ticks & mask;
      z.end_ticks = e.ticks & mask;
      if (b.disjoint == kOk) {
        const uint64_t el = (z.end_ticks - z.begin_ticks) & mask;
        z.status = QueryStatus::ok;
        z.duration_ns = unit_ticks ? static_cast<int64_t>(el) : fast_ticks_to_ns(tf, el);
        ++ok;
        if (mapped) {
          // Offsets from the frame's first tick are >= 0; with a forward
          // clock (per_tick >= 0) rounding is a plain +0.5.
          const auto ob = static_cast<double>(tick_offset(tf, ref, z.begin_ticks) - off_min);
          const double hb = ob * per_tick;
          const double he = (ob + static_cast<double>(el)) * per_tick;
          z.host_mapped = true;
          z.gpu_begin_host_ns = h0 + (forward ? static_cast<int64_t>(hb + 0.5) : round_to_i64(hb));
          z.gpu_end_host_ns = h0 + (forward ? static_cast<int64_t>(he + 0.5) : round_to_i64(he));
        }
      } else if (b.disjoint == kDisjoint) {
        z.status = QueryStatus::disjoint;
        ++disjoint;
      } else {
        z.status = QueryStatus::invalid;
        ++invalid;
      }
    }
    // Tree links, children in recording order (a parent precedes its children).
    if (z.parent != kNoZone && z.parent < i) {
      ProfilerZone& p = f.zones[z.parent];
      z.depth = p.depth + 1;
      if (p.first_child == kNoZone) p.first_child = i;
      else f.zones[m.last_child[z.parent]].next_sibling = i;
      m.last_child[z.parent] = i;
    } else {
      z.parent = kNoZone;
      if (last_root == kNoZone) f.first_root = i;
      else f.zones[last_root].next_sibling = i;
      last_root = i;
    }
    stats.add_zone(z, m.counters);
  }
  m.counters.zones_ok += ok;
  m.counters.zones_invalid += invalid;
  m.counters.zones_disjoint += disjoint;
  m.counters.zones_collected += n;
  ++m.counters.frames_collected;
  if (s.retired) ++m.counters.frames_retired;
  ++m.collected_seq;
  stats.end_frame(m.collected_seq);
  m.retained_next = (m.retained_next + 1) % static_cast<uint32_t>(m.retained.size());
  m.retained_count = std::min<uint32_t>(m.retained_count + 1, static_cast<uint32_t>(m.retained.size()));
  if (m.sink) m.sink(f);

  // Recycle: the device is done with these queries (read available, or the
  // frame retired); the records are read. Reset both before the slot is free.
  if (n > 0) writer_raw_->reset_queries(base, 2 * n);
  for (uint32_t i = 0; i < n; ++i) recs[i].state.store(ZoneRecord::kEmpty, std::memory_order_relaxed);
  s.state = Impl::SlotState::free;
  return true;
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
    const ProfilerFrame& f = m.retained[k];
    if (f.frame_id == frame_id) return f;
  }
  return std::nullopt;
}

std::optional<ProfilerFrame> GpuProfiler::latest_frame() const {
  const Impl& m = *impl_;
  std::lock_guard lock(m.mu);
  if (m.retained_count == 0) return std::nullopt;
  const auto size = static_cast<uint32_t>(m.retained.size());
  return m.retained[(m.retained_next + size - 1) % size];
}

std::vector<ZoneStat> GpuProfiler::stats() const {
  const Impl& m = *impl_;
  std::lock_guard lock(m.mu);
  return m.stat_table->stats(m.collected_seq);
}

ProfilerCounters GpuProfiler::counters() const {
  std::lock_guard lock(impl_->mu);
  return impl_->counters;
}

}  // namespace latlab
