// The inline steps of a zone (ZoneRecorder's hot path) and what the zone
// macros expand to. Included at the end of profiler.hpp, after GpuZone and
// CpuZone; not an API: read profiler.hpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

#include "latlab/detail/profiler_recording.hpp"
#include "latlab/profiler.hpp"  // GpuZone, CpuZone, GpuProfiler (which includes this file last)

namespace latlab::detail {

// The cursor before this zone's pair. A locked add is about half of a zone
// on the H200's Xeon, so the owner (the one thread that records and closes
// frames) moves it with a plain load and store, which is safe only while no
// other thread moves it. The protocol that ends this for good:
//  * Owner: announces itself (owner_taking_ = 1), then looks at owner_ again
//    (a compiler barrier between); only if it still sees itself does it load
//    and store the cursor, then drops the announcement (release).
//  * Sharer (the first other thread to record or close a frame): CAS owner_
//    from the owner's key to kSharing, membarrier (a full barrier on every
//    running thread), wait for owner_taking_ == 0 (acquire), store kShared
//    (release). An asymmetric Dekker: either the owner's second look sees
//    kSharing, or its announcement is visible to the sharer after the
//    membarrier, and the sharer waits until it drops. Either way the
//    owner's last plain store happens before kShared is stored, and its
//    later looks see kSharing or kShared: it never takes the plain path
//    again.
//  * Everyone else fetch_adds only after seeing kShared with acquire (a
//    thread that sees kSharing waits for kShared), so its fetch_add comes
//    after the owner's last plain store: no two zones get one pair and the
//    owner never rewinds the cursor. The owner itself, once it has seen it
//    lost the cursor, fetch_adds at once: nobody else moves the cursor
//    without a locked operation by then.
//  * next_frame's exchange follows the same rule (claim_or_share_cursor
//    first, unless its caller is the owner).
// tests/protocol/ parks each thread at each LATLAB_CURSOR_STEP with 2, 3 and
// 8 threads. Acquire on the cursor pairs with next_frame's release: a
// recycled slot's reset happens before this zone writes into it.
[[gnu::always_inline]] inline uint64_t ZoneRecorder::take_pair() {
  const uintptr_t me = thread_key();
  const uintptr_t owner = owner_.load(std::memory_order_acquire);
  if (owner == me) [[likely]] {
    LATLAB_CURSOR_STEP(owner_seen);
    owner_taking_.store(1, std::memory_order_relaxed);
    LATLAB_CURSOR_STEP(announced);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (owner_.load(std::memory_order_relaxed) == me) [[likely]] {
      LATLAB_CURSOR_STEP(confirmed);
      const uint64_t c = cursor_.load(std::memory_order_acquire);
      LATLAB_CURSOR_STEP(cursor_loaded);
      cursor_.store(c + 2, std::memory_order_release);
      LATLAB_CURSOR_STEP(cursor_stored);
      owner_taking_.store(0, std::memory_order_release);
      return c;
    }
    owner_taking_.store(0, std::memory_order_release);
    LATLAB_CURSOR_STEP(owner_lost);
  } else if (owner != kShared) [[unlikely]] {
    claim_or_share_cursor(me);
  }
  LATLAB_CURSOR_STEP(before_fetch_add);
  return cursor_.fetch_add(2, std::memory_order_acquire);
}

// Hot path: a frame's query pair and zone record from take_pair.
[[gnu::always_inline]] inline ZoneRecorder::ZoneRef ZoneRecorder::begin_zone(const GpuZone& zone,
                                                                             const void* what,
                                                                             uint32_t site_bit) {
  const uint64_t c = take_pair();
  const uint64_t q = c & kIndexMask;
  if (q >= queries_per_frame_) [[unlikely]] return {};  // full, or a frame without queries
  const uint32_t frame_base = static_cast<uint32_t>(c >> 48) * queries_per_frame_;
  const uint32_t query = frame_base + static_cast<uint32_t>(q);
  // Parent: the innermost enclosing zone of this profiler on the same stream,
  // if it is in this frame (a dropped one's kNoZone wraps out of range too).
  uint32_t parent = kNoZone;
  uint32_t tag = t_thread_id;
  if (tag == 0) [[unlikely]] tag = assign_thread_id();
  // Zones hold their GpuProfiler*: compare with this recorder as one, cast
  // once (a base pointer would be adjusted, and null-checked, per zone).
  const GpuProfiler* self = static_cast<const GpuProfiler*>(this);
  for (const GpuZone* z = zone.outer_; z != nullptr; z = z->outer_) {
    if (z->profiler_ == self && z->stream_ == zone.stream_) {
      const uint32_t in_frame = z->ref_.query - frame_base;
      if (in_frame < queries_per_frame_) parent = in_frame / 2;
      else tag |= ZoneRecord::kOrphanBit;
      break;
    }
  }
  ZoneRecord& r = records_[query / 2];
  r.what = what;
  r.parent = parent;
  if (cpu_times_ != nullptr) cpu_times_[query] = host_now_ns();
  slots_raw_->write(zone.stream_, query, TimestampEdge::begin);
  return {query, tag | site_bit | ZoneRecord::kEndedBit};
}

[[gnu::always_inline]] inline void ZoneRecorder::end_zone(GpuCommandStream stream, ZoneRef ref) {
  if (ref.query == kNoZone) [[unlikely]] return;
  slots_raw_->write(stream, ref.query + 1, TimestampEdge::end);
  if (cpu_times_ != nullptr) cpu_times_[ref.query + 1] = host_now_ns();
  records_[ref.query / 2].tag.store(ref.tag, std::memory_order_release);
}

// Hot path of a CPU zone: its record from cpu_cursor_, its parent from this
// thread's chain of CPU zones, the host clock read last.
[[gnu::always_inline]] inline ZoneRecorder::ZoneRef ZoneRecorder::begin_cpu_zone(
    const CpuZone& zone, const void* what, uint32_t site_bit) {
  const uint64_t c = cpu_cursor_.fetch_add(1, std::memory_order_acquire);
  const uint64_t i = c & kIndexMask;
  if (i >= cpu_zones_per_frame_) [[unlikely]]
    return {};  // full, or a frame without a slot
  const uint32_t frame_base = static_cast<uint32_t>(c >> 48) * cpu_zones_per_frame_;
  const uint32_t index = frame_base + static_cast<uint32_t>(i);
  uint32_t parent = kNoZone;
  uint32_t tag = t_thread_id;
  if (tag == 0) [[unlikely]]
    tag = assign_thread_id();
  const GpuProfiler* self = static_cast<const GpuProfiler*>(this);  // as begin_zone
  for (const CpuZone* z = zone.outer_; z != nullptr; z = z->outer_) {
    if (z->profiler_ == self) {
      const uint32_t in_frame = z->ref_.query - frame_base;
      if (in_frame < cpu_zones_per_frame_)
        parent = in_frame;
      else
        tag |= ZoneRecord::kOrphanBit;
      break;
    }
  }
  CpuZoneRecord& r = cpu_records_[index];
  r.what = what;
  r.parent = parent;
  r.begin_ns = host_now_ns();
  return {index, tag | site_bit | ZoneRecord::kEndedBit};
}

[[gnu::always_inline]] inline void ZoneRecorder::end_cpu_zone(ZoneRef ref) {
  if (ref.query == kNoZone) [[unlikely]]
    return;
  CpuZoneRecord& r = cpu_records_[ref.query];
  r.end_ns = host_now_ns();
  r.tag.store(ref.tag, std::memory_order_release);
}

}  // namespace latlab::detail

namespace latlab {

namespace detail {
inline GpuProfiler* profiler_ptr(GpuProfiler* p) { return p; }
inline GpuProfiler* profiler_ptr(GpuProfiler& p) { return &p; }
inline GpuProfiler* profiler_ptr(const std::unique_ptr<GpuProfiler>& p) { return p.get(); }
inline GpuProfiler* profiler_ptr(const std::shared_ptr<GpuProfiler>& p) { return p.get(); }
// A typed profiler stays typed (these win over the GpuProfiler ones).
template <class Stream>
TypedGpuProfiler<Stream>* profiler_ptr(TypedGpuProfiler<Stream>* p) {
  return p;
}
template <class Stream>
TypedGpuProfiler<Stream>* profiler_ptr(TypedGpuProfiler<Stream>& p) {
  return &p;
}
template <class Stream>
TypedGpuProfiler<Stream>* profiler_ptr(const std::unique_ptr<TypedGpuProfiler<Stream>>& p) {
  return p.get();
}
template <class Stream>
TypedGpuProfiler<Stream>* profiler_ptr(const std::shared_ptr<TypedGpuProfiler<Stream>>& p) {
  return p.get();
}
// The disabled macros' check of the stream: unevaluated, it runs nothing,
// but a typed profiler's wrong stream fails to compile in both modes.
inline int zone_stream_check(GpuProfiler*, GpuCommandStream) { return 0; }
template <class Stream, class Given>
auto zone_stream_check(TypedGpuProfiler<Stream>*, Given&& stream) {
  return typed_stream<Stream>(std::forward<Given>(stream)) != nullptr ? 1 : 0;
}
}  // namespace detail

}  // namespace latlab
