// The rare paths of the lane protocol (see ZoneRecorder::take_pair, which
// has the proof): binding a lane, skipping a closed frame's block, claiming
// a block, the shared cursor, and the collector's hold on the lanes.
#include <algorithm>
#include <bit>
#include <thread>

#include "latlab/profiler.hpp"
#include "profiler/heavy_fence.hpp"

namespace latlab::detail {

thread_local constinit LaneCacheEntry t_last_lane = {};
thread_local constinit LaneCacheEntry t_lane_cache[kLaneCacheEntries] = {};
#if LATLAB_PROFILER_PROTOCOL_HOOKS
void (*zone_step_hook)(ZoneStep) = nullptr;
ZoneFault zone_fault = ZoneFault::none;
#endif

namespace {

// Where a thread's search for its lane starts: threads spread over the
// lanes, so that a thread's lane is usually the first one it looks at.
uint32_t first_lane(uintptr_t key) {
  return static_cast<uint32_t>((key * 0x9E37'79B9'7F4A'7C15ull) >> 58) % kZoneLanes;
}

// A block's size: `grow` (doubling per claim up to kMaxZoneBlock), at most
// 1/(2 * lanes) of the frame's free records, at least one.
uint32_t block_size(uint32_t grow, uint64_t free_records, uint32_t lanes) {
  const uint64_t share = std::max<uint64_t>(1, free_records / (2 * std::max(lanes, 1u)));
  return static_cast<uint32_t>(std::min<uint64_t>(grow, share));
}

}  // namespace

void ZoneRecorder::skip_records(uint32_t first_query, uint32_t end_query) {
  for (uint32_t q = first_query; q < end_query; q += 2) {
    records_[q / 2].tag.store(ZoneRecord::kSkipped, std::memory_order_release);
  }
}

ZoneRecorder::Pair ZoneRecorder::take_single() {
  LATLAB_ZONE_STEP(before_fetch_add);
  const uint64_t c = cursor_.fetch_add(1, std::memory_order_acquire);
  const uint64_t index = c & kIndexMask;
  if (index >= zones_per_frame_) return {};  // full, or a frame without queries
  const auto base = static_cast<uint32_t>(c >> 48) * zones_per_frame_;
  return {2 * (base + static_cast<uint32_t>(index)), 2 * base};
}

ZoneRecorder::Pair ZoneRecorder::take_pair_without_lane() {
  if (lanes_ == nullptr) return take_single();
  LaneCacheEntry& cached = t_lane_cache[id_ % kLaneCacheEntries];
  if (cached.recorder != id_) cached = {id_, find_lane()};
  t_last_lane = cached;
  return take_pair();
}

// Lanes are bound once and never freed, so a thread's lane, if it has one,
// lies before the first free lane of its search (open addressing without
// deletion). A thread that exits leaves its lane to the next thread with its
// thread_key(): it cannot be inside take_pair any more. Every lane taken by
// another thread: the overflow lane, which sends each zone to the shared
// cursor without a search.
ZoneLane* ZoneRecorder::find_lane() {
  const uintptr_t me = thread_key();
  const uint32_t start = first_lane(me);
  for (uint32_t k = 0; k < kZoneLanes; ++k) {
    ZoneLane& lane = lanes_[(start + k) % kZoneLanes];
    uintptr_t owner = lane.owner.load(std::memory_order_acquire);
    if (owner == 0) {
      LATLAB_ZONE_STEP(binding);
      if (lane.owner.compare_exchange_strong(owner, me, std::memory_order_acq_rel)) {
        lanes_bound_.fetch_add(1, std::memory_order_relaxed);
        return &lane;
      }
    }
    if (owner == me) return &lane;
  }
  return &lanes_[kZoneLanes];
}

ZoneRecorder::Pair ZoneRecorder::take_pair_in_lane(ZoneLane& lane) {
  if (&lane == &lanes_[kZoneLanes]) {  // the overflow lane: no block ever
    lane.taking.store(0, std::memory_order_release);
    return take_single();
  }
  // Held by the collector: the lane is its until `held` drops (acquire: as
  // it left it). A record from the shared cursor instead could come before
  // a record this thread takes from its block later: a child before its parent.
  if (lane.held.load(std::memory_order_acquire) != 0) {
    lane.taking.store(0, std::memory_order_release);
    while (lane.held.load(std::memory_order_acquire) != 0) {
      LATLAB_ZONE_STEP(waiting_held);
      std::this_thread::yield();
    }
    return take_pair();
  }
  uint64_t c = cursor_.load(std::memory_order_acquire);
  const uint32_t next = lane.next.load(std::memory_order_relaxed);
  const uint32_t end = lane.end.load(std::memory_order_relaxed);
  if (lane.slot.load(std::memory_order_relaxed) != (c >> 48)) {
    // A block of a closed frame: its unused records are that frame's to
    // skip, and this frame's blocks grow from one again.
    LATLAB_ZONE_STEP(abandoning);
    skip_records(next, end);
    lane.next.store(end, std::memory_order_relaxed);
    lane.grow.store(1, std::memory_order_relaxed);
  } else if (next < end) {
    // The open frame's block: next_frame moved the cursor after open_slot_ was read.
    lane.next.store(next + 2, std::memory_order_relaxed);
    const uint32_t base = lane.base.load(std::memory_order_relaxed);
    lane.taking.store(0, std::memory_order_release);
    return {next, base};
  }
  return claim_block(lane, c);
}

// A new block from the frame of cursor value `c` (a CAS on the cursor binds
// it to that frame), installed in `lane`; its first record is this zone's.
// Called and returns as take_pair_in_lane.
ZoneRecorder::Pair ZoneRecorder::claim_block(ZoneLane& lane, uint64_t c) {
  const uint32_t grow = lane.grow.load(std::memory_order_relaxed);
  const uint32_t lanes = lanes_bound_.load(std::memory_order_relaxed);
  uint32_t size = 0;
  for (;;) {
    const uint64_t index = c & kIndexMask;
    if ((c >> 48) == kNoSlot || index >= zones_per_frame_) {
      // Full, or no queries: the shared cursor counts the drop (or finds
      // the next frame open).
      lane.taking.store(0, std::memory_order_release);
      return take_single();
    }
    size = block_size(grow, zones_per_frame_ - index, lanes);
    LATLAB_ZONE_STEP(claim_loaded);
    if (cursor_.compare_exchange_weak(c, c + size, std::memory_order_acquire,
                                      std::memory_order_acquire)) {
      break;
    }
  }
  LATLAB_ZONE_STEP(claimed);
  const auto slot = static_cast<uint32_t>(c >> 48);
  const uint32_t base = slot * queries_per_frame_;
  const uint32_t first = base + 2 * static_cast<uint32_t>(c & kIndexMask);
  lane.slot.store(slot, std::memory_order_relaxed);
  lane.base.store(base, std::memory_order_relaxed);
  lane.next.store(first + 2, std::memory_order_relaxed);
  lane.end.store(first + 2 * size, std::memory_order_relaxed);
  lane.grow.store(std::min(2 * grow, kMaxZoneBlock), std::memory_order_relaxed);
  LATLAB_ZONE_STEP(installed);
  lane.taking.store(0, std::memory_order_release);
  return {first, base};
}

#if LATLAB_PROFILER_PROTOCOL_HOOKS
// take_pair with its reads before the announcement: a collector that looks
// between the two finds the lane idle and skips a record this zone takes.
ZoneRecorder::Pair ZoneRecorder::take_pair_read_first(ZoneLane& lane) {
  const uint32_t open = open_slot_.load(std::memory_order_acquire);
  const uint32_t next = lane.next.load(std::memory_order_relaxed);
  const bool room = lane.slot.load(std::memory_order_relaxed) == open &&
                    next < lane.end.load(std::memory_order_relaxed);
  if (room) LATLAB_ZONE_STEP(block_loaded);
  lane.taking.store(1, std::memory_order_relaxed);
  LATLAB_ZONE_STEP(announced);
  if (!room) return take_pair_in_lane(lane);
  lane.next.store(next + 2, std::memory_order_relaxed);
  LATLAB_ZONE_STEP(block_stored);
  const uint32_t base = lane.base.load(std::memory_order_relaxed);
  lane.taking.store(0, std::memory_order_release);
  return {next, base};
}
#endif

void ZoneRecorder::skip_own_block(uint32_t slot) {
  if (lanes_ == nullptr) return;
  const LaneCacheEntry& last = t_last_lane;
  const LaneCacheEntry& cached = t_lane_cache[id_ % kLaneCacheEntries];
  ZoneLane* lane = last.recorder == id_     ? last.lane
                   : cached.recorder == id_ ? cached.lane
                                            : nullptr;
  if (lane == nullptr || lane == &lanes_[kZoneLanes]) return;
  const uint32_t next = lane->next.load(std::memory_order_relaxed);
  const uint32_t end = lane->end.load(std::memory_order_relaxed);
  if (lane->slot.load(std::memory_order_relaxed) != slot || next >= end) return;
  skip_records(next, end);
  lane->next.store(end, std::memory_order_relaxed);
}

bool ZoneRecorder::take_unused_blocks(uint32_t slot) {
  if (lanes_ == nullptr) return false;
  // Lanes with room in the slot's frame, as far as can be seen without
  // holding them; what is read again once they are held decides.
  const uintptr_t me = thread_key();
  uint64_t others = 0;
  uint64_t mine = 0;
  for (uint32_t i = 0; i < kZoneLanes; ++i) {
    const ZoneLane& lane = lanes_[i];
    const uintptr_t owner = lane.owner.load(std::memory_order_relaxed);
    if (owner == 0 || lane.slot.load(std::memory_order_relaxed) != slot ||
        lane.next.load(std::memory_order_relaxed) >= lane.end.load(std::memory_order_relaxed)) {
      continue;
    }
    (owner == me ? mine : others) |= 1ull << i;
  }
  if ((mine | others) == 0) return false;
  // This thread's own lane needs no hold: it is not inside take_pair. A
  // lane whose thread is inside take_pair is left to a later collection:
  // collection never waits for a recording thread.
  const uint64_t taken = mine | (others != 0 ? hold_lanes(others) : 0);
  for (uint64_t m = taken; m != 0; m &= m - 1) {
    ZoneLane& lane = lanes_[std::countr_zero(m)];
    if (lane.slot.load(std::memory_order_relaxed) != slot) continue;
    const uint32_t end = lane.end.load(std::memory_order_relaxed);
    skip_records(lane.next.load(std::memory_order_relaxed), end);
    lane.next.store(end, std::memory_order_relaxed);
  }
  LATLAB_ZONE_STEP(skipped);
  for (uint64_t m = others; m != 0; m &= m - 1) {
    lanes_[std::countr_zero(m)].held.store(0, std::memory_order_release);
  }
  return taken != 0;
}

// Marks the lanes in `mask` held and returns those whose thread is not
// inside take_pair on its lane: it will not enter before `held` drops, which
// the caller stores for every lane in `mask`.
uint64_t ZoneRecorder::hold_lanes(uint64_t mask) {
  for (uint64_t m = mask; m != 0; m &= m - 1) {
    lanes_[std::countr_zero(m)].held.store(1, std::memory_order_seq_cst);
  }
  LATLAB_ZONE_STEP(holding);
  profiler_detail::heavy_fence();
  LATLAB_ZONE_STEP(fenced);
  uint64_t out = 0;
  for (uint64_t m = mask; m != 0; m &= m - 1) {
    const int i = std::countr_zero(m);
    bool inside = lanes_[i].taking.load(std::memory_order_acquire) != 0;
#if LATLAB_PROFILER_PROTOCOL_HOOKS
    if (zone_fault == ZoneFault::collector_ignores_busy) inside = false;
#endif
    if (inside) {
      LATLAB_ZONE_STEP(busy_lane);
    } else {
      out |= 1ull << i;
    }
  }
  return out;
}

}  // namespace latlab::detail
