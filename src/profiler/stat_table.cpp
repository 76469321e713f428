#include "profiler/stat_table.hpp"

#include <bit>
#include <cstring>

#include "latlab/stats.hpp"

namespace latlab::profiler_detail {

StatTable::StatTable(uint32_t max_names, uint32_t window_frames, uint32_t max_zones_per_frame)
    : max_names_(max_names), window_(window_frames), by_position_(max_zones_per_frame) {
  entries_.reserve(max_names_);
  touched_.reserve(max_names_);
  // Twice the names, and room for aliases (one name from several translation
  // units has several pointers), at most half full.
  const size_t cap = std::bit_ceil(static_cast<size_t>(max_names_) * 4);
  keys_.assign(cap, nullptr);
  key_mask_ = cap - 1;
  values_.assign(cap, kNone);
}

uint32_t StatTable::find_or_insert(const char* name, ProfilerCounters& counters) {
  size_t i = hash_pointer(name) & key_mask_;
  while (keys_[i] != nullptr) {
    if (keys_[i] == name) return values_[i];
    i = (i + 1) & key_mask_;
  }
  // First sight of this pointer: the same text may be tabled already.
  uint32_t idx = kNone;
  for (uint32_t e = 0; e < entries_.size(); ++e) {
    if (std::strcmp(entries_[e].name, name) == 0) {
      idx = e;
      break;
    }
  }
  if (idx == kNone && entries_.size() < max_names_) {
    Entry entry;
    entry.name = name;
    entry.ring.resize(window_);
    ++counters.heap_allocations;  // warm-up: once per name
    entries_.push_back(std::move(entry));
    idx = static_cast<uint32_t>(entries_.size() - 1);
  }
  // Remembered either way (a name beyond capacity maps to kNone), unless the
  // keys are half full: then the text is searched again next time.
  if (key_count_ + 1 > keys_.size() / 2) return idx;
  keys_[i] = name;
  values_[i] = idx;
  ++key_count_;
  return idx;
}

void StatTable::end_frame(uint64_t seq, uint32_t dropped_zones) {
  for (uint32_t idx : touched_) {
    Entry& e = entries_[idx];
    e.ring[e.next] =
        Sample{seq, e.acc_ns, e.calls, e.missing, complete_sum(e.calls, e.ok, dropped_zones)};
    e.next = (e.next + 1) % window_;
    e.acc_ns = 0;
    e.ok = e.calls = e.missing = 0;
    e.touched = false;
  }
  touched_.clear();
}

std::vector<ZoneStat> StatTable::stats(uint64_t newest_seq) const {
  std::vector<ZoneStat> out;
  std::vector<double> ms;
  const uint64_t oldest = newest_seq >= window_ ? newest_seq - window_ + 1 : 1;
  for (const Entry& e : entries_) {
    ms.clear();
    uint64_t calls = 0, missing = 0;
    uint32_t frames_missing = 0;
    for (const Sample& s : e.ring) {
      if (s.seq == 0 || s.seq < oldest || s.seq > newest_seq) continue;
      missing += s.missing;
      if (!s.complete) {  // a partial sum is no sample, and never a zero
        ++frames_missing;
        continue;
      }
      calls += s.calls;
      ms.push_back(s.total_ns / 1e6);
    }
    if (ms.empty() && frames_missing == 0) continue;
    ZoneStat st;
    st.name = e.name;
    st.frames = static_cast<uint32_t>(ms.size());
    st.missing = missing;
    st.frames_missing = frames_missing;
    if (!ms.empty()) {
      const Distribution d = summarize_in_place(ms);
      st.calls_per_frame = static_cast<double>(calls) / static_cast<double>(d.count);
      st.avg_ms = d.mean;
      st.min_ms = d.min;
      st.max_ms = d.max;
      st.p95_ms = d.p95;
    }
    out.push_back(std::move(st));
  }
  return out;
}

}  // namespace latlab::profiler_detail
