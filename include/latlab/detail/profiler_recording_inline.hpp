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

// This zone's record and query pair. A locked add is about half of a zone
// on the H200's Xeon, and three threads adding to one cursor would spend
// 15-20 times one thread's cost fighting over its cache line. So each thread
// takes its records from a block of its own, in its lane (one per thread
// and profiler, on its own cache line), with plain loads and stores, and
// claims blocks from the frame's cursor with one CAS per block. Records a
// block reserved and no zone used are marked skipped
// (ZoneRecord::kSkipped); the collector leaves them out. The protocol:
//  * The thread, in take_pair: announces itself (lane.taking = 1; a compiler
//    barrier), reads open_slot_ (acquire) and its block; only if the
//    block is of the open frame (its slot is open_slot_) and has room does
//    it load and store `next`, then drops the announcement (release).
//  * Otherwise, still announced (take_pair_in_lane): if the collector holds
//    the lane it drops the announcement, waits, and starts again. If the
//    block is of a closed frame, it skips the block's unused records. It
//    claims a new block with a CAS on the cursor (which binds the block to
//    the cursor's frame) and installs it. A full frame sends the zone to the
//    shared cursor, whose fetch_add counts the drop.
//  * The collector (take_unused_blocks, once a closed frame waits only for
//    records of blocks whose threads have not come back since): stores
//    `held` in each such lane, membarrier (a full barrier on every running
//    thread), then skips the unused records of each lane whose taking is 0
//    (acquire), and stores `held` = 0 (release). An asymmetric Dekker:
//    either the thread's read of `held` sees it, or its announcement is
//    visible to the collector after the membarrier and the collector leaves
//    that lane to a later collection (it never waits for a recording thread).
//    The fast path needs no look at `held`: it touches only blocks of the
//    open frame, which the collector never does, and after the membarrier
//    no thread reads an older open_slot_.
//  * A slot is reused only once its frame is collected, and a frame is
//    collected only once every record of it is ended or skipped: no block
//    with room outlives its frame, so a lane whose slot equals open_slot_
//    (read with acquire, after every skip of that slot's last frame) holds
//    a block of the open frame.
//  * A thread's records in a frame rise (blocks are claimed in order, a
//    block is left only when used up or its frame closed, and shared-cursor
//    records come after the thread's used-up block): a zone's parent
//    precedes it.
// tests/protocol/ parks each thread at each LATLAB_ZONE_STEP with 2, 3 and
// 8 threads, and shows that two broken variants fail there. The claim's
// acquire on the cursor pairs with next_frame's release: a recycled slot's
// reset happens before this zone writes into it.
[[gnu::always_inline]] inline ZoneRecorder::Pair ZoneRecorder::take_pair() {
  if (t_last_lane.recorder != id_) [[unlikely]] return take_pair_without_lane();
  ZoneLane& lane = *t_last_lane.lane;
#if LATLAB_PROFILER_PROTOCOL_HOOKS
  if (zone_fault == ZoneFault::read_before_announce) return take_pair_read_first(lane);
#endif
  lane.taking.store(1, std::memory_order_relaxed);
  LATLAB_ZONE_STEP(announced);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  const uint32_t open = open_slot_.load(std::memory_order_acquire);
  const uint32_t next = lane.next.load(std::memory_order_relaxed);
  // One branch, the slow path out of the way: the fast path is straight-line code
  // (int operands: `|` on bools is a clang warning, and `||` would be two branches).
  const int other_frame = static_cast<int>(lane.slot.load(std::memory_order_relaxed) != open);
  const int block_spent = static_cast<int>(next >= lane.end.load(std::memory_order_relaxed));
  if (__builtin_expect(other_frame | block_spent, 0)) {
    return take_pair_in_lane(lane);
  }
  LATLAB_ZONE_STEP(block_loaded);
  lane.next.store(next + 2, std::memory_order_relaxed);
  LATLAB_ZONE_STEP(block_stored);
  const uint32_t base = lane.base.load(std::memory_order_relaxed);
  lane.taking.store(0, std::memory_order_release);
  return {next, base};
}

// Hot path: a query pair and zone record from take_pair.
[[gnu::always_inline]] inline ZoneRecorder::ZoneRef ZoneRecorder::begin_zone(const GpuZone& zone,
                                                                             const void* what,
                                                                             uint32_t site_bit) {
  const auto [query, frame_base] = take_pair();
  if (query == kNoZone) [[unlikely]] return {};  // full, or a frame without queries
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
