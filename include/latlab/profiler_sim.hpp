// SimTimestampWriter: the profiler's timestamp writer over a simulated device.
// Tests play the GPU.
//
// Scripted (default): write_timestamp appends the write to the
// SimCommandStream it is given (a null stream records nothing: benchmarks);
// the test later "executes" a stream, which stamps its writes in order with
// ticks of its choosing, or completes single queries by hand.
// Immediate: every write stamps the next tick of a shared sim clock at once,
// from any thread (a device that runs the work the moment it is recorded).
//
// Thread safety: write_timestamp may be called concurrently for distinct
// streams; execute/complete/mark_disjoint from any thread (per-query values
// are atomics published with release order); read_results/reset_queries from
// the profiler's collector.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "latlab/profiler.hpp"

namespace latlab {

// A command buffer of the sim device: the timestamp writes recorded into it,
// in order. One recording thread at a time, like a Vulkan command buffer.
struct SimCommandStream {
  struct Write {
    uint32_t query = 0;
    ZoneEdge edge = ZoneEdge::begin;
  };
  std::vector<Write> writes;
};

struct SimTimestampWriterDesc {
  uint32_t query_count = 8192;       // raw queries (>= 2). Default 8192 = 1024 pairs x 4 frame slots.
  TickFormat ticks{};                // tick period and valid bits. Default 1 ns, 64 bits.
  bool immediate = false;            // stamp at write time from a shared clock (see above). Default off.
  uint64_t immediate_start_ticks = 1'000;  // first tick of the immediate clock
  uint64_t immediate_step_ticks = 10;      // ticks between successive immediate writes (>= 1)
};

class SimTimestampWriter final : public GpuTimestampWriter {
 public:
  static std::shared_ptr<SimTimestampWriter> create(SimTimestampWriterDesc desc = {});
  ~SimTimestampWriter() override;

  uint32_t query_count() const override { return static_cast<uint32_t>(slots_.size()); }
  TickFormat tick_format() const override { return desc_.ticks; }
  void write_timestamp(GpuCommandStream stream, uint32_t query, ZoneEdge edge) override;
  void read_results(uint32_t first, std::span<TimestampReadback> out) override;
  void reset_queries(uint32_t first, uint32_t count) override;

  // --- device side -----------------------------------------------------------
  // Runs `stream`: its k-th write gets start_ticks + k * step_ticks (masked to
  // the valid bits); the stream is then emptied. Returns the next free tick.
  uint64_t execute(SimCommandStream& stream, uint64_t start_ticks, uint64_t step_ticks = 1);
  // Writes `ticks` into `query` now.
  void complete(uint32_t query, uint64_t ticks);
  // Flags the value of `query` as discontinuous (a clock change on the device).
  void mark_disjoint(uint32_t query);

  // Writes into a query that had been written and not reset since (a
  // validation error on a real device): must stay 0.
  uint64_t double_writes() const { return double_writes_.load(std::memory_order_relaxed); }
  uint64_t queries_reset() const { return resets_.load(std::memory_order_relaxed); }
  uint64_t immediate_writes() const { return immediate_writes_.load(std::memory_order_relaxed); }

 private:
  explicit SimTimestampWriter(SimTimestampWriterDesc desc);
  void store(uint32_t query, uint64_t ticks);

  static constexpr uint32_t kAvailable = 1, kDisjoint = 2;
  struct Slot {
    std::atomic<uint64_t> ticks{0};
    std::atomic<uint32_t> flags{0};
  };
  SimTimestampWriterDesc desc_;
  std::vector<Slot> slots_;
  std::atomic<uint64_t> clock_{0};
  std::atomic<uint64_t> double_writes_{0};
  std::atomic<uint64_t> resets_{0};
  std::atomic<uint64_t> immediate_writes_{0};
};

}  // namespace latlab
