// The capture layer's timestamp slots: per queue family, chunks of query
// pairs and pre-recorded command buffers that bracket a submission, handed
// out and given back in turn (FamilyTiming), and their making and teardown.
#pragma once

#include <vulkan/vulkan.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>

#include "capture/vulkan_layer/result_buffer.hpp"

namespace latlab::capture::layer {

struct DeviceData;
struct InstanceData;

// Timestamp slots come in chunks (a query pool and a command pool each); a
// family starts with one and grows while the program has more submissions
// in flight, up to kMaxChunks, past which a submission goes unbracketed
// (NoSpan::ring_full).
constexpr uint32_t kChunkSlots = 64;
constexpr uint32_t kMaxChunks = 64;
constexpr uint32_t kMaxSlots = kChunkSlots * kMaxChunks;
// On a device that runs its command buffers on the host's CPUs
// (VK_PHYSICAL_DEVICE_TYPE_CPU: lavapipe, SwiftShader), a copy that waits
// for its timestamps is a wait on the submitting thread, which keeps the
// driver from preparing the next submission while the last one renders.
// There the end command buffer copies without waiting, and also copies the
// kLateCopySlots slots before its own in the chunk again: a submission's
// timestamps reach the host with one of the next few submissions on its
// family, or at vkDestroyDevice (read_slots_at_idle).
constexpr uint32_t kLateCopySlots = 4;

// The layer's timestamps on one queue family: a query pool of two pairs per
// slot, A (queries 4s, 4s+1) and B (4s+2, 4s+3), and per slot command
// buffers recorded once (simultaneous use). Use k of a slot (k: its earlier
// executed uses) writes pair X = A if k is even, else B; its end command
// buffer then copies X to the host (waiting for it), resets the other pair
// Y and copies Y too, after the program's work: nothing of the layer's but
// its begin timestamp runs on the GPU before the program's first command
// buffer. Before each use the host clears X's copy and marks Y's copy
// available; the collector gives the slot back only once it has read X
// and seen Y's copy unavailable (the reset executed), so the next use, on
// any queue of the family, writes a pair already reset and read. The
// first use of a slot resets both pairs in its begin command buffer (once).
// No host query reset: a host reset after a read is not ordered with the
// queue for the validation layer (it retires a submit only at the program's
// fence wait and then takes the pair for written again).
enum Pair : uint8_t { kPairA = 0, kPairB = 1 };

inline uint32_t first_query(uint32_t slot, uint8_t pair) { return 4 * slot + 2 * pair; }

// The command buffers of one use of a slot.
struct SlotUse {
  uint32_t slot = UINT32_MAX;  // UINT32_MAX: every slot is in flight
  uint8_t pair = kPairA;       // the pair this use writes (X)
  VkCommandBuffer begin = VK_NULL_HANDLE;
  VkCommandBuffer end = VK_NULL_HANDLE;
};

// One slot: its command buffers and its state on one cache line, so a
// submit touches one line of the slot table, not one in each of eight
// arrays (after the program slept, every line it touches may be cold).
struct alignas(64) TimingSlot {
  // begin_first (resets A and B, writes A.begin), begin[X] (writes
  // X.begin), end_first (writes A.end), end[X] (writes X.end, resets Y).
  VkCommandBuffer begin_first = VK_NULL_HANDLE;
  VkCommandBuffer end_first = VK_NULL_HANDLE;
  VkCommandBuffer begin[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};
  VkCommandBuffer end[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};
  uint64_t uses = 0;  // executed uses
  bool busy = false;
};
static_assert(sizeof(TimingSlot) == 64);

// A chunk of slots: its queries (four per slot) and command buffers, in
// pools of its own, so that a chunk is made without touching another.
struct SlotChunk {
  VkQueryPool queries = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  ResultBuffer results;  // per slot 8 words: pair A's copy, then B's (value, availability each)
  std::array<TimingSlot, kChunkSlots> slots{};
};

struct FamilyTiming {
  uint32_t family = 0;
  bool can_time = false;
  std::mutex grow_mu;  // one grower at a time (grow_family)
  std::mutex mu;       // guards slots' busy and uses, chunk_count and the free ring
  // [0, chunk_count) are made; a slot id (chunk * kChunkSlots + index) is
  // handed out under mu only after its chunk is.
  std::array<std::unique_ptr<SlotChunk>, kMaxChunks> chunks;
  uint32_t chunk_count = 0;
  bool grow_failed = false;
  // Free slot ids, oldest first: slots are reused in turn, so the ones in
  // flight sit next to each other and the collector reads them in one call.
  std::array<uint32_t, kMaxSlots> free_ring{};
  uint32_t free_head = 0;
  uint32_t free_count = 0;

  SlotChunk& chunk_of(uint32_t id) { return *chunks[id / kChunkSlots]; }
  TimingSlot& slot(uint32_t id) { return chunk_of(id).slots[id % kChunkSlots]; }
  uint64_t* words(uint32_t id) { return chunk_of(id).results.words + 8 * (id % kChunkSlots); }

  // A free slot and the command buffers of its next use (slot UINT32_MAX
  // when every slot is in flight).
  SlotUse take() {
    SlotUse u;
    std::lock_guard lock(mu);
    if (free_count == 0) return u;
    const uint32_t id = free_ring[free_head];
    free_head = (free_head + 1) % kMaxSlots;
    --free_count;
    TimingSlot& s = slot(id);
    s.busy = true;
    u.slot = id;
    u.pair = static_cast<uint8_t>(s.uses & 1);
    const bool first = s.uses == 0;
    u.begin = first ? s.begin_first : s.begin[u.pair];
    u.end = first ? s.end_first : s.end[u.pair];
    // No copy of this use is in flight (the slot was free): X's copy reads
    // unavailable until this use writes it, Y's available until its reset.
    uint64_t* w = words(id);
    std::fill(w + 4 * u.pair, w + 4 * u.pair + 4, uint64_t{0});
    w[4 * (u.pair ^ 1U) + 1] = 1;
    w[4 * (u.pair ^ 1U) + 3] = 1;
    return u;
  }
  // executed: the use's command buffers ran (its pair was read and the
  // other pair's reset seen); a failed submit's did not.
  void give_back(uint32_t id, bool executed) {
    std::lock_guard lock(mu);
    TimingSlot& s = slot(id);
    if (executed) ++s.uses;
    s.busy = false;
    push_free(id);
  }
  // Publishes a chunk made by the caller (who holds grow_mu).
  void add_chunk(std::unique_ptr<SlotChunk> c) {
    std::lock_guard lock(mu);
    const uint32_t k = chunk_count;
    chunks[k] = std::move(c);
    ++chunk_count;
    for (uint32_t i = 0; i < kChunkSlots; ++i) push_free(k * kChunkSlots + i);
  }
  uint32_t free_slots() {
    std::lock_guard lock(mu);
    return free_count;
  }

 private:
  void push_free(uint32_t id) {
    free_ring[(free_head + free_count) % kMaxSlots] = id;
    ++free_count;
  }
};

// Adds chunks to `f` until it has `want_free` free slots or kMaxChunks
// chunks. false: no slot could be added (at the limit, or the driver refused).
bool grow_family(DeviceData& d, FamilyTiming& f, uint32_t want_free);

// Timing for each queue family the device was created with.
void create_families(DeviceData& d, const InstanceData& inst, VkPhysicalDevice physical,
                     const VkDeviceCreateInfo& info);

// Destroys every family's chunks.
void destroy_timing(DeviceData& d);

// With late copies, the device's last submissions have no later one to
// copy their timestamps. At vkDestroyDevice the device is idle (the
// program's duty), so the slots still in use are read from the driver on
// the program's thread and published as a copy would be: values first,
// then each availability word with release order (load_acquire).
void read_slots_at_idle(DeviceData& d);

}  // namespace latlab::capture::layer
