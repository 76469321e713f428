// Runtime zone names (intern_zone_name, profiler.hpp): one table for the
// process under a lock, and a table per thread in front of it, so that a
// name a thread has used before costs a hash lookup: no lock, no allocation.
#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>

#include "latlab/profiler.hpp"

namespace latlab {
namespace {

using NameMap = std::unordered_map<std::string_view, const char*>;

struct ProcessNames {
  std::mutex mu;
  std::deque<std::string> texts;  // the copies; a deque never moves its elements
  NameMap names;                  // keys view `texts`
  std::atomic<uint64_t> refused{0};
};

// Never destroyed: zones recorded by static destructors or exiting threads
// may still intern, and every interned pointer stays valid until exit.
ProcessNames& process_names() {
  static ProcessNames* names = new ProcessNames;
  return *names;
}

// Keys and values point into process_names(): nothing to free at thread exit
// but the map itself.
thread_local NameMap t_names;

}  // namespace

const char* intern_zone_name(std::string_view name) noexcept {
  name = name.substr(0, name.find('\0'));  // zones show C strings
  if (const auto it = t_names.find(name); it != t_names.end()) [[likely]]
    return it->second;
  ProcessNames& p = process_names();
  try {
    std::lock_guard lock(p.mu);
    const char* interned = nullptr;
    if (const auto it = p.names.find(name); it != p.names.end()) {
      interned = it->second;
    } else if (p.names.size() < kMaxZoneNames) {
      const std::string& copy = p.texts.emplace_back(name);
      interned = copy.c_str();
      p.names.emplace(std::string_view(copy), interned);
    } else {
      // Not remembered by the thread either: its table stays bounded.
      p.refused.fetch_add(1, std::memory_order_relaxed);
      return kZoneNamesFull;
    }
    try {
      t_names.emplace(std::string_view(interned, name.size()), interned);
    } catch (const std::bad_alloc&) {  // the next use takes the lock again
    }
    return interned;
  } catch (const std::bad_alloc&) {
    p.refused.fetch_add(1, std::memory_order_relaxed);
    return kZoneNamesFull;
  }
}

uint64_t zone_names_refused() noexcept {
  return process_names().refused.load(std::memory_order_relaxed);
}

}  // namespace latlab
