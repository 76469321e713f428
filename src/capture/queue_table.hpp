// The capture layer's submit-path lookup: a queue's device and timing
// without a lock or a hash (a mutex and a hash lookup cost the program about
// 0.2 us a submit on the H200). Program threads look their queue up while
// other threads get queues and destroy devices, so the table is:
// - append-only: an entry is written once, before the count that makes it
//   visible is published (release), and never reused;
// - forget clears an entry's key (its device is going away); the value
//   stays, and no reader matches a cleared key;
// - bounded: past Capacity, publish says no and the caller keeps its own
//   locked map for the rest.
// A reader matches only its own key, whose value outlives its lookups (the
// program's external synchronisation: a queue is not used while its device
// is destroyed). Tested with threads under TSan (queue_table_threads_test).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <mutex>

namespace latlab::capture {

// Key: a handle (a pointer type; the null value is never a key).
template <class Key, class Value, size_t Capacity>
class QueueTable {
 public:
  // Makes `key` find `value`. False when the table is full (nothing
  // changed) or `key` is in it already (its value stays).
  bool publish(Key key, const Value& value) {
    std::lock_guard lock(append_mu_);
    const size_t n = count_.load(std::memory_order_relaxed);
    for (size_t i = 0; i < n; ++i) {
      if (entries_[i].key.load(std::memory_order_relaxed) == key) return false;
    }
    if (n == Capacity) return false;
    entries_[n].value = value;
    entries_[n].key.store(key, std::memory_order_relaxed);
    count_.store(n + 1, std::memory_order_release);
    return true;
  }

  // Clears every entry whose value `gone` says is going away.
  template <class Pred>
  void forget_if(Pred&& gone) {
    std::lock_guard lock(append_mu_);
    const size_t n = count_.load(std::memory_order_relaxed);
    for (size_t i = 0; i < n; ++i) {
      if (entries_[i].key.load(std::memory_order_relaxed) != Key{} && gone(entries_[i].value))
        entries_[i].key.store(Key{}, std::memory_order_relaxed);
    }
  }

  // The value of `key`, or nullptr.
  const Value* find(Key key) const {
    const size_t n = count_.load(std::memory_order_acquire);
    for (size_t i = 0; i < n; ++i) {
      if (entries_[i].key.load(std::memory_order_relaxed) == key) return &entries_[i].value;
    }
    return nullptr;
  }

 private:
  struct Entry {
    std::atomic<Key> key{Key{}};
    Value value{};
  };
  std::array<Entry, Capacity> entries_{};
  std::atomic<size_t> count_{0};
  std::mutex append_mu_;
};

}  // namespace latlab::capture
