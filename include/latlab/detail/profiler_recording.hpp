// The profiler's recording internals: what a zone does between its
// braces, without a lock, and the cursor protocol that lets the one thread
// that records and closes frames move the cursor without a locked add until
// a second thread records. Included by profiler.hpp; not an API (names here
// may change in any version): read profiler.hpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>
#include <utility>

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

// Test builds only (tests/protocol/, a library built with
// LATLAB_PROFILER_PROTOCOL_HOOKS=1): every step of the cursor protocol (see
// GpuProfiler::take_pair) calls a hook that may park the thread there. In
// every other build the steps are nothing.
#ifndef LATLAB_PROFILER_PROTOCOL_HOOKS
#define LATLAB_PROFILER_PROTOCOL_HOOKS 0
#endif
#if LATLAB_PROFILER_PROTOCOL_HOOKS
namespace detail {
enum class CursorStep : uint8_t {
  owner_seen,      // take_pair: owner_ was this thread
  announced,       // owner_taking_ is 1, owner_ not looked at again yet
  confirmed,       // the second look saw this thread: the plain path
  cursor_loaded,   // between the plain load and store of the cursor
  cursor_stored,   // the cursor stored, owner_taking_ still 1
  owner_lost,      // the second look did not see this thread
  claim,           // claim_or_share_cursor entered
  sharing,         // the sharer marked the cursor, before membarrier
  fenced,          // after membarrier, before waiting for the owner
  waiting_owner,   // (each turn) the owner is inside its plain path
  owner_out,       // the owner is out, kShared not stored yet
  waiting_shared,  // (each turn) another thread is sharing the cursor
  before_fetch_add,
  before_exchange,  // next_frame, about to move the cursor to a new frame
};
inline constexpr int kCursorSteps = static_cast<int>(CursorStep::before_exchange) + 1;
extern void (*cursor_step_hook)(CursorStep);  // null: no hook
}  // namespace detail
#define LATLAB_CURSOR_STEP(step)                                                \
  (::latlab::detail::cursor_step_hook != nullptr                                \
       ? ::latlab::detail::cursor_step_hook(::latlab::detail::CursorStep::step) \
       : void())
#else
#define LATLAB_CURSOR_STEP(step) static_cast<void>(0)
#endif

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
  // touches little memory. A recycled record's tag is 0.
  struct ZoneRecord {
    static constexpr uint32_t kSiteBit = 0x2000'0000u;  // `what` is a ZoneSite, not a name
    static constexpr uint32_t kEndedBit = 0x4000'0000u;
    static constexpr uint32_t kOrphanBit = 0x8000'0000u;
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
  static constexpr uint32_t kNoSlot = 0xFFFF;
  static constexpr uint64_t kIndexMask = (1ull << 48) - 1;
  // owner_ besides a thread_key(): no thread has recorded or closed a frame
  // yet; a second thread is sharing the cursor (waiting for the owner to
  // leave its plain path); or it has (or membarrier is missing), so every
  // zone takes its pair with fetch_add. Thread keys are addresses, never
  // these. owner_ only moves forward: kNoOwner -> key -> kSharing -> kShared.
  static constexpr uintptr_t kNoOwner = 0;
  static constexpr uintptr_t kShared = 1;
  static constexpr uintptr_t kSharing = 2;

  // Recording: inline, lock-free (detail/profiler_recording_inline.hpp).
  uint64_t take_pair();
  // `what`: a name, or with `site_bit` (ZoneRecord::kSiteBit) a ZoneSite.
  ZoneRef begin_zone(const GpuZone& zone, const void* what, uint32_t site_bit);
  void end_zone(GpuCommandStream stream, ZoneRef ref);
  // CPU zones: one fetch_add on cpu_cursor_ (no owner fast path: the two
  // clock reads cost more than the locked add), `query` is the record index.
  ZoneRef begin_cpu_zone(const CpuZone& zone, const void* what, uint32_t site_bit);
  void end_cpu_zone(ZoneRef ref);
  // Makes `me` the owner if there is none; otherwise, unless `me` owns it,
  // returns only once the cursor is shared for good (kShared, seen with
  // acquire): sharing it itself, or waiting for the thread that is (see
  // take_pair).
  void claim_or_share_cursor(uintptr_t me);
  // What a zone reads, from here to cpu_zone_times_, on one cache line that
  // nothing writes after create (the cursor, which every zone writes, has its own).
  alignas(64) TimestampSlots* slots_raw_ = nullptr;  // hot path: no shared_ptr deref
  // Slot s, zone i at records_[s * max_zones_per_frame + i], which is records_[query / 2].
  ZoneRecord* records_ = nullptr;
  int64_t* cpu_times_ = nullptr;   // with cpu_zone_times: begin/end pairs, indexed like the queries
  CpuZoneRecord* cpu_records_ = nullptr;  // slot s, CPU zone i at [s * cpu_zones_per_frame_ + i]
  uint32_t queries_per_frame_ = 0;
  uint32_t zones_per_frame_ = 0;
  uint32_t cpu_zones_per_frame_ = 0;
  bool cpu_zone_times_ = false;
  // [slot:16 | query index within the frame:48]; the slot 0xFFFF means the
  // frame has no queries, and its index starts full (queries_per_frame_), so
  // one compare drops a zone. One move of it (take_pair) binds a zone to its
  // frame and pair.
  alignas(64) std::atomic<uint64_t> cursor_{0};
  // On the cursor's line (the owner writes it anyway): take_pair's owner.
  // owner_taking_ is 1 from just before the owner's second look at owner_
  // until its cursor store is done.
  std::atomic<uintptr_t> owner_{kNoOwner};
  std::atomic<uint32_t> owner_taking_{0};
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
