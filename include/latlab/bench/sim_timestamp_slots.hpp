// SimTimestampSlots: the backend seam's timestamp slots on a simulated
// device, for the timestamp query pool and the profiler alike. Tests play the GPU.
//
// Scripted (default): write() appends the write to the SimCommandStream it is
// given (a null stream records nothing: benchmarks); the test later
// "executes" a stream, which stamps its writes in order with ticks of its
// choosing, or completes single slots by hand (complete, complete_late,
// mark_disjoint). Immediate: every write stamps the next tick of a shared sim
// clock at once, from any thread (a device that runs the work the moment it
// is recorded).
//
// A write of an earlier use (complete_late, after the slot's reset) reads
// back flagged SlotReading::kLate, as the CUDA backend's generation tags do.
//
// Thread safety: write() may be called concurrently for distinct streams;
// execute/complete/complete_late/mark_disjoint from any thread (per-slot
// values are atomics published with release order); read/reset from one
// thread at a time (the pool's owner or the profiler's collector).
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "latlab/timestamp_slots.hpp"

namespace latlab {

// A command buffer of the sim device: the timestamp writes recorded into it,
// in order. One recording thread at a time, like a Vulkan command buffer.
struct SimCommandStream {
  struct Write {
    uint32_t slot = 0;
    TimestampEdge edge = TimestampEdge::begin;
  };
  std::vector<Write> writes;
};

struct SimTimestampSlotsDesc {
  uint32_t count = 8192;   // slots (>= 2). Default 8192 = 1024 pairs x 4 frame slots.
  TickFormat ticks{};      // tick period and valid bits. Default 1 ns, 64 bits.
  bool can_time = true;    // false: a device without timestamps (users time nothing)
  bool immediate = false;  // stamp at write time from a shared clock (see above). Default off.
  uint64_t immediate_start_ticks = 1'000;  // first tick of the immediate clock
  uint64_t immediate_step_ticks = 10;      // ticks between successive immediate writes (>= 1)
};

class SimTimestampSlots final : public TimestampSlots {
 public:
  static std::shared_ptr<SimTimestampSlots> create(SimTimestampSlotsDesc desc = {});
  ~SimTimestampSlots() override;

  uint32_t slot_count() const override { return static_cast<uint32_t>(slots_.size()); }
  TickFormat tick_format() const override { return desc_.ticks; }
  bool can_time() const override { return desc_.can_time; }
  void write(GpuCommandStream stream, uint32_t slot, TimestampEdge edge) override;
  void read(uint32_t first, std::span<SlotReading> out) override;
  // Resets at once (the sim has no command buffers to defer into).
  void reset(uint32_t first, uint32_t count, bool previous_use_done) override;

  // --- device side -----------------------------------------------------------
  // Runs `stream`: its k-th write gets start_ticks + k * step_ticks (masked to
  // the valid bits); the stream is then emptied. Returns the next free tick.
  uint64_t execute(SimCommandStream& stream, uint64_t start_ticks, uint64_t step_ticks = 1);
  // The slot's current use writes `ticks` now.
  void complete(uint32_t slot, uint64_t ticks);
  // A previous use of the slot writes `ticks` late (after the reset).
  void complete_late(uint32_t slot, uint64_t ticks);
  // Flags the value of `slot` as discontinuous (a clock change on the device).
  void mark_disjoint(uint32_t slot);

  // Writes into a slot that had been written and not reset since (a
  // validation error on a real device): must stay 0.
  uint64_t double_writes() const { return double_writes_.load(std::memory_order_relaxed); }
  uint64_t slots_reset() const { return resets_.load(std::memory_order_relaxed); }
  uint64_t immediate_writes() const { return immediate_writes_.load(std::memory_order_relaxed); }

 private:
  explicit SimTimestampSlots(SimTimestampSlotsDesc desc);
  void store(uint32_t slot, uint64_t ticks, bool late);
  // write()'s rare paths, kept out of its body (see write).
  [[gnu::noinline]] void write_immediate(uint32_t slot);
  [[gnu::noinline]] static void append_growing(std::vector<SimCommandStream::Write>& writes,
                                               uint32_t slot, TimestampEdge edge);

  static constexpr uint32_t kAvailable = 1, kDisjoint = 2, kLate = 4;
  struct Slot {
    std::atomic<uint64_t> ticks{0};
    std::atomic<uint32_t> flags{0};  // kAvailable | kDisjoint | kLate; 0 after a reset
  };
  SimTimestampSlotsDesc desc_;
  std::vector<Slot> slots_;
  std::atomic<uint64_t> clock_{0};
  std::atomic<uint64_t> double_writes_{0};
  std::atomic<uint64_t> resets_{0};
  std::atomic<uint64_t> immediate_writes_{0};
};

}  // namespace latlab
