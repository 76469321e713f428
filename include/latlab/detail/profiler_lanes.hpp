// A recording thread's lane in a profiler: the block of zone records it
// takes its zones from, without touching any other thread's cache line, and
// the steps of that protocol that a test can park a thread at. Included by
// profiler_recording.hpp; not an API (names here may change in any
// version): read profiler.hpp, and ZoneRecorder::take_pair for the proof.
#pragma once

#include <atomic>
#include <cstdint>

namespace latlab::detail {

// Lanes per profiler; a thread beyond them takes each zone's record from the
// shared cursor (one locked add per zone).
inline constexpr uint32_t kZoneLanes = 64;
// A lane's block grows 1, 2, 4, ... per frame up to this many records, and
// takes at most 1/(2n) of the frame's records still free, n the lanes bound:
// a filling frame is not held in other threads' unused blocks.
inline constexpr uint32_t kMaxZoneBlock = 256;
// A frame slot that is none (a frame without queries); also ZoneLane::slot's
// value before its first block.
inline constexpr uint32_t kNoFrameSlot = 0xFFFF;

// One thread's lane: written by that thread inside take_pair while `taking`
// is 1, and by the collector only while it holds the lane (`held`; the
// thread then waits before it touches the lane:
// ZoneRecorder::take_unused_blocks). Its own cache line. The block is the
// query pairs [next, end) of the ring (begin queries: even, record = query
// / 2), in frame slot `slot`, whose first query is `base`.
struct alignas(64) ZoneLane {
  std::atomic<uintptr_t> owner{0};  // thread_key() of its thread; 0: free. Set once, never cleared.
  std::atomic<uint32_t> taking{0};
  std::atomic<uint32_t> slot{kNoFrameSlot};
  std::atomic<uint32_t> next{0};
  std::atomic<uint32_t> end{0};
  std::atomic<uint32_t> base{0};
  std::atomic<uint32_t> grow{1};  // the size of the thread's next block in this frame, in zones
  std::atomic<uint32_t> held{0};  // written by the collector only
};
static_assert(sizeof(ZoneLane) == 64);

// Which lane of which profiler this thread records through: the profiler
// it recorded into last (the one compare of a zone's fast path), and a
// small table of its own, indexed by profiler id, for up to
// kLaneCacheEntries others (ids are never reused, so an entry of a profiler
// that is gone never matches).
struct LaneCacheEntry {
  uint64_t recorder = 0;  // ZoneRecorder id; 0: empty
  ZoneLane* lane = nullptr;
};
inline constexpr uint32_t kLaneCacheEntries = 8;
extern thread_local constinit LaneCacheEntry t_last_lane;
extern thread_local constinit LaneCacheEntry t_lane_cache[kLaneCacheEntries];

}  // namespace latlab::detail

// Test builds only (tests/protocol/, a library built with
// LATLAB_PROFILER_PROTOCOL_HOOKS=1): every step of the lane protocol calls a
// hook that may park the thread there, and a fault can be switched on that
// breaks the protocol on purpose, to show that the tests catch it. In every
// other build the steps are nothing and the faults do not exist.
#ifndef LATLAB_PROFILER_PROTOCOL_HOOKS
#define LATLAB_PROFILER_PROTOCOL_HOOKS 0
#endif
#if LATLAB_PROFILER_PROTOCOL_HOOKS
namespace latlab::detail {
enum class ZoneStep : uint8_t {
  announced,         // take_pair: taking is 1, nothing read yet
  block_loaded,      // the block has room in the open frame: between the load and store of next
  block_stored,      // next stored, taking still 1
  waiting_held,      // (each turn) the collector holds this thread's lane
  abandoning,        // the block is of a closed frame: before its unused records are skipped
  claim_loaded,      // the cursor loaded, before the CAS that claims a block
  claimed,           // a block claimed, not yet in the lane
  installed,         // the block in the lane, taking still 1
  binding,           // before the CAS that binds a free lane to this thread
  before_fetch_add,  // a record from the shared cursor (no lane, a full frame, a collector at work)
  before_exchange,   // next_frame, about to move the cursor to a new frame
  exchanged,         // the cursor moved, the lanes not yet told (open_slot_)
  holding,           // collector: lanes marked held, before membarrier
  fenced,            // after membarrier, before looking at the lanes' threads
  busy_lane,         // a held lane's thread is inside take_pair: the lane is left alone
  skipped,           // unused records skipped, the lanes still held
};
inline constexpr int kZoneSteps = static_cast<int>(ZoneStep::skipped) + 1;
extern void (*zone_step_hook)(ZoneStep);  // null: no hook

// Protocol breakages the tests switch on to see them caught.
enum class ZoneFault : uint8_t {
  none,
  // take_pair reads the frame and the block before it announces itself.
  read_before_announce,
  // The collector skips a held lane's unused records though its thread is
  // inside take_pair.
  collector_ignores_busy,
};
extern ZoneFault zone_fault;
}  // namespace latlab::detail
#define LATLAB_ZONE_STEP(step)                                              \
  (::latlab::detail::zone_step_hook != nullptr                              \
       ? ::latlab::detail::zone_step_hook(::latlab::detail::ZoneStep::step) \
       : void())
#else
#define LATLAB_ZONE_STEP(step) static_cast<void>(0)
#endif
