// The `stat gpu` table behind GpuProfiler::stats(): per zone name, per-frame
// sums over a sliding window of collected frames. Fixed capacity; memory is
// taken when a name is first seen (warm-up), never per frame. The one place
// where a frame's zones of one name are summed: a frame's sum counts only
// when it is complete (complete_sum), otherwise the frame is missing for that
// name (ZoneStat::frames_missing), never a smaller number.
// Not thread-safe: GpuProfiler holds its mutex around every call.
#pragma once

#include <cstdint>
#include <vector>

#include "latlab/profiler.hpp"

namespace latlab::profiler_detail {

class StatTable {
 public:
  StatTable(uint32_t max_names, uint32_t window_frames, uint32_t max_zones_per_frame);

  // Adds zone number `position` of the frame being collected: its static
  // name, and its device duration when `ok`. Counts names beyond capacity in
  // counters.stat_names_dropped and any allocation in
  // counters.heap_allocations. Inlined into the collection loop (it runs once
  // per zone).
  [[gnu::always_inline]] void add_zone(uint32_t position, const char* name, bool ok,
                                       int64_t duration_ns, ProfilerCounters& counters) {
    if (name == nullptr) return;
    // Frames repeat: zone `position` usually has the name it had last frame,
    // so its entry is remembered per position before any hashing.
    uint32_t idx;
    if (position < by_position_.size() && by_position_[position].name == name) [[likely]] {
      idx = by_position_[position].idx;
    } else {
      idx = lookup(name, counters);
      if (position < by_position_.size()) by_position_[position] = {name, idx};
    }
    if (idx == kNone) [[unlikely]] {
      ++counters.stat_names_dropped;
      return;
    }
    Entry& e = entries_[idx];
    ++e.calls;
    if (ok) {
      e.acc_ns += static_cast<double>(duration_ns);
      ++e.ok;
    } else {
      ++e.missing;
    }
    if (!e.touched) {
      e.touched = true;
      touched_.push_back(idx);  // reserved to max_names_: no allocation
    }
  }
  // Closes the frame: it was collected frame number `seq` (1, 2, ...);
  // `dropped_zones`: zones of it that found no query pair (their names are
  // unknown, so no name's sum in this frame is complete).
  void end_frame(uint64_t seq, uint32_t dropped_zones);
  // A frame's sum of `calls` zones of one name is its time only when every
  // call has an ok time and the frame dropped no zone.
  static bool complete_sum(uint32_t calls, uint32_t ok, uint32_t dropped_zones) {
    return ok == calls && dropped_zones == 0;
  }
  // The window ending at collected frame `newest_seq`, in first-seen order.
  std::vector<ZoneStat> stats(uint64_t newest_seq) const;

 private:
  struct Sample {
    uint64_t seq = 0;  // 0: empty
    double total_ns = 0;
    uint32_t calls = 0;
    uint32_t missing = 0;   // calls without an ok time
    bool complete = false;  // complete_sum: total_ns is the frame's time for the name
  };
  struct Entry {
    const char* name = nullptr;
    std::vector<Sample> ring;
    uint32_t next = 0;
    double acc_ns = 0;
    uint32_t ok = 0, calls = 0, missing = 0;
    bool touched = false;
  };
  static size_t hash_pointer(const char* p) {
    auto v = reinterpret_cast<uintptr_t>(p);
    v ^= v >> 17;
    v *= 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(v ^ (v >> 29));
  }
  // Entry index for `name` through the pointer hash; kNone when the table
  // is full.
  uint32_t lookup(const char* name, ProfilerCounters& counters) {
    const char* const* keys = keys_.data();
    size_t i = hash_pointer(name) & key_mask_;
    while (keys[i] != nullptr && keys[i] != name) i = (i + 1) & key_mask_;
    return keys[i] == name ? values_[i] : find_or_insert(name, counters);
  }
  // The slow path: the text compared, `name` inserted.
  uint32_t find_or_insert(const char* name, ProfilerCounters& counters);
  struct PositionMemo {
    const char* name = nullptr;
    uint32_t idx = kNone;
  };

  static constexpr uint32_t kNone = 0xFFFF'FFFFu;
  uint32_t max_names_;
  uint32_t window_;
  std::vector<Entry> entries_;        // reserved to max_names_
  std::vector<const char*> keys_;     // open addressing by pointer, power of two
  size_t key_mask_ = 0;               // keys_.size() - 1
  std::vector<uint32_t> values_;
  uint32_t key_count_ = 0;
  std::vector<uint32_t> touched_;     // reserved to max_names_
  std::vector<PositionMemo> by_position_;  // per zone position in a frame
};

}  // namespace latlab::profiler_detail
