// SimTimestampQueryPool: the query pool contract over a deterministic
// simulated device. Tests play the device: they write ticks into slots (as
// the current allocation, or late as a previous one) and flag faults.
// Not thread-safe, like every pool.
#pragma once

#include <memory>
#include <vector>

#include "latlab/timestamp_query_pool.hpp"

namespace latlab {

class SimTimestampQueryPool final : public TimestampQueryPool {
 public:
  // `can_time` false models a device without timestamp support.
  static std::unique_ptr<SimTimestampQueryPool> create(const QueryPoolDesc& desc,
                                                       TickFormat ticks = {},
                                                       bool can_time = true);
  ~SimTimestampQueryPool() override;

  // Device side: the work allocated at `query` writes `ticks` now.
  void device_write(uint32_t query, uint64_t ticks);
  // Device side: a previous user of `query`'s slot writes late (after reuse).
  void device_write_late(uint32_t query, uint64_t ticks);
  // Device side: the value at `query` is flagged discontinuous.
  void device_mark_disjoint(uint32_t query);
  // How many slots the pool has reset (each reuse resets two).
  uint64_t reset_count() const { return resets_; }

 private:
  SimTimestampQueryPool(const QueryPoolDesc& desc, TickFormat ticks, bool can_time);
  void read_queries(uint32_t first, uint32_t count, std::span<RawQuery> out) override;
  void reset_queries(uint32_t first, uint32_t count, uint64_t generation) override;
  void release_device_objects() override;

  struct Slot {
    RawQuery value;
    uint64_t generation = 0;  // the allocation currently using the slot
  };
  std::vector<Slot> slots_;
  uint64_t resets_ = 0;
};

}  // namespace latlab
