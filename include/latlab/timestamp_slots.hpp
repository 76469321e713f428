// TimestampSlots: the timestamp port of the backend seam. A backend (Vulkan,
// CUDA, OpenGL, sim) implements it once; the timestamp query pool
// (timestamp_query_pool.hpp) and the scoped profiler (profiler.hpp) are thin
// users of it, so each API has one owner of its query objects and one
// readback path. Part of the core: no GPU headers.
//
// A slot holds one device timestamp. Users write slots into the API's command
// stream (a begin/end pair around the work they time), read them back with
// availability and never wait for the device, and reset a slot before each
// use, its first included.
//
// Durations only. Some slots cannot read the device clock, only time a span
// (GL_TIME_ELAPSED where GL_QUERY_COUNTER_BITS of GL_TIMESTAMP is 0): they
// say so with durations_only(). Their pairs are slot s (begin) and s+1 (end);
// the end slot reads the span's length in ticks and the begin slot reads 0,
// so end - begin is still the span, but neither is a point on the device
// clock: nothing may map them onto the host clock or order them in time.
// They time one span at a time: a begin while another span is open is not
// measured, and both slots of that pair read kOverlapped.
//
// Threads: write() may be called from several recording threads at once,
// each with its own command stream; read() and reset() from one thread at a
// time (the pool's owner, the profiler's collector). Backends state more.
// Ownership: users hold slots through shared_ptr; destroy them only after the
// device finished every command that writes them.
#pragma once

#include <cstdint>
#include <span>

#include "latlab/query_status.hpp"
#include "latlab/tick_format.hpp"

namespace latlab {

// The command stream a timestamp is recorded into, as an opaque handle:
// VkCommandBuffer (a dispatchable handle is a pointer), cudaStream_t, a
// GlContext*, or a SimCommandStream* for the sim backend. Untyped here, at
// the seam; each API's profiler checks the type at compile time
// (TypedGpuProfiler, profiler.hpp).
using GpuCommandStream = void*;

// Which end of a timed span a timestamp marks; backends pick the pipeline
// stage (Vulkan: begin at the top of the pipe, end at the bottom).
enum class TimestampEdge : uint8_t { begin, end };

// One slot as read back: 16 bytes, the layout of a Vulkan 64-bit result with
// its availability word (little-endian), so a Vulkan read lands straight in it.
struct SlotReading {
  static constexpr uint32_t kDisjoint = 1;  // the value is discontinuous (clock change)
  static constexpr uint32_t kLate = 2;      // written by an earlier use of the slot
  static constexpr uint32_t kOverlapped = 4;  // durations only: not timed, another span was open
  uint64_t ticks = 0;                       // device ticks; meaningful only when available
  uint32_t available = 0;                   // nonzero: the device has written the slot
  uint32_t flags = 0;                       // kDisjoint | kLate | kOverlapped; 0 from backends that cannot tell
  bool disjoint() const { return (flags & kDisjoint) != 0; }
  bool late() const { return (flags & kLate) != 0; }
  bool overlapped() const { return (flags & kOverlapped) != 0; }
};
static_assert(sizeof(SlotReading) == 16);

// A begin/end pair read once its work has completed (nothing more will be
// written): ok; disjoint (a discontinuity flagged); overlapped (durations-only
// slots did not time it); or invalid (a slot never written, written by an
// earlier use, or end before begin). `elapsed`, when given, receives
// end - begin in ticks (wrap-aware) whenever both are written.
inline QueryStatus completed_pair_status(const SlotReading& b, const SlotReading& e,
                                         const TickFormat& ticks, uint64_t* elapsed = nullptr) {
  if ((b.available & e.available) == 0) [[unlikely]] return QueryStatus::invalid;
  const uint64_t mask = ticks.mask();
  const uint64_t span = (e.ticks - b.ticks) & mask;  // TickFormat::elapsed_ticks, mask computed once
  if (elapsed != nullptr) *elapsed = span;
  if (const uint32_t flags = b.flags | e.flags; flags != 0) [[unlikely]] {
    if ((flags & SlotReading::kLate) != 0) return QueryStatus::invalid;
    return (flags & SlotReading::kOverlapped) != 0 ? QueryStatus::overlapped : QueryStatus::disjoint;
  }
  return span > (mask >> 1) ? QueryStatus::invalid : QueryStatus::ok;  // backwards: end before begin
}

class TimestampSlots {
 public:
  virtual ~TimestampSlots() = default;
  TimestampSlots(const TimestampSlots&) = delete;
  TimestampSlots& operator=(const TimestampSlots&) = delete;

  // Slots [0, slot_count()).
  virtual uint32_t slot_count() const = 0;
  // Tick period and valid bits of the values read.
  virtual TickFormat tick_format() const = 0;
  // False: the device cannot write timestamps; users then time nothing.
  virtual bool can_time() const { return true; }
  // True: pairs give durations only, no device-clock values (see the top of
  // this file); their users must not map or order them in time.
  virtual bool durations_only() const { return false; }
  // Records "write slot `slot` once the work before it is done" into
  // `stream`. Must not block; safe for distinct streams concurrently.
  virtual void write(GpuCommandStream stream, uint32_t slot, TimestampEdge edge) = 0;
  // Non-blocking read of [first, first + out.size()); slots out of range
  // read as unavailable. Never returns a value of an earlier use as
  // available unless it flags it kLate.
  virtual void read(uint32_t first, std::span<SlotReading> out) = 0;
  // Makes [first, first + count) writable again for a new use.
  // `previous_use_done`: every command that wrote these slots before has
  // finished on the device (its fence signalled). Backends that reset on the
  // host need it; without it they reset in the next stream that writes the
  // slot (and until then read the old value as unavailable).
  virtual void reset(uint32_t first, uint32_t count, bool previous_use_done) = 0;

 protected:
  TimestampSlots() = default;
};

}  // namespace latlab
