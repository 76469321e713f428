// The profiler's recording internals: what a zone does between its
// braces, without a lock: each recording thread takes its zones' records
// from a block of its own (its lane, detail/profiler_lanes.hpp), and blocks from
// the frame's shared cursor. Included by profiler.hpp; not an API (names
// here may change in any version): read profiler.hpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "latlab/detail/profiler_lanes.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/timestamp_slots.hpp"

namespace latlab {

// A zone index or query that is none (ProfilerZone's parent and links).
inline constexpr uint32_t kNoZone = 0xFFFF'FFFFu;

class GpuZone;
class CpuZone;
namespace profiler_detail {  // collection's state (src/profiler)
struct FrameMapping;
struct RetainedFrame;
}  // namespace profiler_detail

namespace detail {
// This thread's innermost open zone (any profiler, any stream): the chain the
// zones' parents are found in, and this thread's small id (0 until its first
// zone). Constant-initialised: no TLS wrapper call on the hot path.
extern thread_local constinit const GpuZone* t_innermost_zone;
// This thread's innermost open CPU zone (any profiler): CPU zones' parents.
extern thread_local constinit const CpuZone* t_innermost_cpu_zone;
extern thread_local constinit uint32_t t_thread_id;
uint32_t assign_thread_id();  // sets t_thread_id, returns it
// A key unique among live threads (the address of this thread's t_thread_id):
// unlike the small id, it never wraps.
inline uintptr_t thread_key() { return reinterpret_cast<uintptr_t>(&t_thread_id); }
// Thread ids live in the low 29 bits of a zone record's tag.
inline constexpr uint32_t kThreadIdMask = 0x1FFF'FFFFu;
}  // namespace detail

namespace detail {

// The state every zone touches, and the inline steps of a zone: the base of
// GpuProfiler (public, so that a zone can compare its profiler with the
// recorder; every member is protected).
class ZoneRecorder {
 public:
  // `query` is the zone's begin slot in the whole ring (its end is query + 1,
  // its record query / 2), so the zone's end needs no arithmetic on the frame.
  struct ZoneRef {
    uint32_t query = kNoZone;  // kNoZone: dropped
    uint32_t tag = 0;          // the record's final tag, stored by end_zone
  };

 protected:
  ZoneRecorder(TimestampSlots* slots, uint32_t zones_per_frame, uint32_t cpu_zones_per_frame,
               bool cpu_zone_times)
      : slots_raw_(slots),
        queries_per_frame_(2 * zones_per_frame),
        zones_per_frame_(zones_per_frame),
        cpu_zones_per_frame_(cpu_zones_per_frame),
        cpu_zone_times_(cpu_zone_times) {}
  ~ZoneRecorder() = default;
  ZoneRecorder(const ZoneRecorder&) = delete;
  ZoneRecorder& operator=(const ZoneRecorder&) = delete;

  // Written by the recording thread; `tag` is stored last, at the zone's end
  // (release), so a collector that sees kEndedBit (acquire) sees every field
  // (and the zone's CPU times). 16 bytes, four to a cache line: recording
  // touches little memory. A recycled record's tag is 0; a record that a
  // thread's block reserved and no zone used is kSkipped (nonzero, without
  // kEndedBit): the collector leaves it out of the frame.
  struct ZoneRecord {
    static constexpr uint32_t kSiteBit = 0x2000'0000u;  // `what` is a ZoneSite, not a name
    static constexpr uint32_t kEndedBit = 0x4000'0000u;
    static constexpr uint32_t kOrphanBit = 0x8000'0000u;
    static constexpr uint32_t kSkipped = kOrphanBit;
    static constexpr uint32_t kThreadMask = detail::kThreadIdMask;
    const void* what = nullptr;  // the zone's name (const char*), or its ZoneSite (kSiteBit)
    uint32_t parent = kNoZone;
    std::atomic<uint32_t> tag{0};  // thread's small id | kSiteBit | kOrphanBit | kEndedBit
  };
  static_assert(sizeof(ZoneRecord) == 16);
  static_assert((ZoneRecord::kThreadMask &
                 (ZoneRecord::kSiteBit | ZoneRecord::kEndedBit | ZoneRecord::kOrphanBit)) == 0);
  // A CPU zone: its host times beside the name; `tag` as ZoneRecord's, stored
  // last (release) at the zone's end.
  struct CpuZoneRecord {
    const void* what = nullptr;
    int64_t begin_ns = 0;
    int64_t end_ns = 0;
    uint32_t parent = kNoZone;
    std::atomic<uint32_t> tag{0};
  };
  static_assert(sizeof(CpuZoneRecord) == 32);
  static constexpr uint32_t kNoSlot = kNoFrameSlot;
  static constexpr uint64_t kIndexMask = (1ull << 48) - 1;

  // A zone's begin query in the ring and the first query of its frame.
  struct Pair {
    uint32_t query = kNoZone;  // kNoZone: dropped
    uint32_t frame_base = 0;
  };
  // Recording: inline, lock-free (detail/profiler_recording_inline.hpp).
  Pair take_pair();
  // `what`: a name, or with `site_bit` (ZoneRecord::kSiteBit) a ZoneSite.
  ZoneRef begin_zone(const GpuZone& zone, const void* what, uint32_t site_bit);
  void end_zone(GpuCommandStream stream, ZoneRef ref);
  // CPU zones: one fetch_add on cpu_cursor_ (no lanes: a zone's two clock
  // reads cost more than an uncontended locked add), `query` is the record
  // index.
  ZoneRef begin_cpu_zone(const CpuZone& zone, const void* what, uint32_t site_bit);
  void end_cpu_zone(ZoneRef ref);
  // take_pair's rare paths (src/profiler/zone_lanes.cpp). In a lane whose
  // block is used up or of a closed frame; called with lane.taking 1,
  // returns with it 0.
  Pair take_pair_in_lane(ZoneLane& lane);
  Pair claim_block(ZoneLane& lane, uint64_t cursor);
  // This thread recorded into another profiler last: finds its lane in this
  // one (its table, or a search), or binds one.
  Pair take_pair_without_lane();
  ZoneLane* find_lane();  // this thread's lane (bound now if need be), or the overflow lane
  // One record from the shared cursor (one locked add), or a dropped zone.
  Pair take_single();
  // Marks the records of the begin queries [first_query, end_query) skipped.
  void skip_records(uint32_t first_query, uint32_t end_query);
#if LATLAB_PROFILER_PROTOCOL_HOOKS
  Pair take_pair_read_first(ZoneLane& lane);  // ZoneFault::read_before_announce
#endif
  // Collection (the profiler's mutex held): skips the unused records of
  // every lane's block in frame slot `slot` (a closed frame's), holding the
  // lanes' threads out of them first; a lane whose thread is inside
  // take_pair is left alone. Returns whether it skipped any block.
  bool take_unused_blocks(uint32_t slot);
  // next_frame, the frame in `slot` just closed: the calling thread's own
  // block in it (it is not inside take_pair) skipped at once, so that a
  // frame recorded by one thread is never found unfinished.
  void skip_own_block(uint32_t slot);
  uint64_t hold_lanes(uint64_t mask);  // bit i: lanes_[i]

  // What a zone reads, from here to open_slot_, on one cache line that
  // nothing writes after create but next_frame, once a frame (the cursor,
  // which blocks are claimed from, has its own).
  alignas(64) TimestampSlots* slots_raw_ = nullptr;  // hot path: no shared_ptr deref
  // Slot s, zone i at records_[s * max_zones_per_frame + i], which is records_[query / 2].
  ZoneRecord* records_ = nullptr;
  int64_t* cpu_times_ = nullptr;   // with cpu_zone_times: begin/end pairs, indexed like the queries
  // kZoneLanes lanes and the overflow lane (threads beyond them); null where
  // membarrier(2) is missing: every zone then takes its record from the
  // shared cursor.
  ZoneLane* lanes_ = nullptr;
  uint64_t id_ = 0;  // unique in the process, never reused: the key of t_last_lane, t_lane_cache
  CpuZoneRecord* cpu_records_ = nullptr;  // slot s, CPU zone i at [s * cpu_zones_per_frame_ + i]
  uint32_t queries_per_frame_ = 0;
  uint32_t zones_per_frame_ = 0;
  uint32_t cpu_zones_per_frame_ = 0;
  // The open frame's slot (kNoSlot: it has none), stored by next_frame once
  // it moved the cursor. A lane's block with room is of the open frame when
  // its slot equals this (a slot is not reused while a block in it has room).
  std::atomic<uint32_t> open_slot_{0};
  bool cpu_zone_times_ = false;
  // [slot:16 | record index within the frame:48]; the slot 0xFFFF means the
  // frame has no queries, and its index starts full (zones_per_frame_), so
  // every claim fails and each zone's fetch_add counts a drop. Claiming a
  // block, or taking one record, binds records to the frame of the cursor
  // it moved.
  alignas(64) std::atomic<uint64_t> cursor_{0};
  // Lanes bound to a thread so far (a claim's share of the free records).
  std::atomic<uint32_t> lanes_bound_{0};
  // [slot:16 | CPU zone index within the frame:48], moved by fetch_add only;
  // next_frame exchanges it with cursor_ (same slot; a frame without a slot
  // starts full).
  alignas(64) std::atomic<uint64_t> cpu_cursor_{0};
};

template <class>
inline constexpr bool kDependentFalse = false;
// A typed profiler's stream as the seam's handle; a stream of another type
// stops the build here, with this message.
template <class Stream, class Given>
[[gnu::always_inline]] inline GpuCommandStream typed_stream(Given&& stream) noexcept {
  if constexpr (std::is_convertible_v<Given&&, Stream>) {
    return static_cast<Stream>(std::forward<Given>(stream));
  } else {
    static_assert(kDependentFalse<Given>,
                  "latlab: the stream given to this zone is not this profiler's command stream "
                  "type (TypedGpuProfiler<Stream>::stream_type): a Vulkan profiler records into a "
                  "VkCommandBuffer, a CUDA profiler into a cudaStream_t, an OpenGL profiler into "
                  "its GlContext*; see [with Stream = ..., Given = ...] below");
    return nullptr;
  }
}
}  // namespace detail

}  // namespace latlab
