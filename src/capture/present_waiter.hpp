// One thread that waits, in present order, for the presents of one swapchain
// to complete (the Vulkan layer's vkWaitForPresentKHR, docs/capture.md), so
// that the program's own present never waits: the program's thread only
// queues (push), the waiter's thread blocks. API-neutral: the wait itself is
// a function given at construction, so the protocol is tested without a
// display (tests/unit/present_waiter_threads_test.cpp).
//
// Threads: push and stop from any thread (the layer calls them from the
// program's present / swapchain calls); Wait and Done run on the waiter's
// own thread, Done also on stop's caller for what was still queued.
// Ownership: the waiter owns its thread; stop() (or the destructor) joins it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "capture/capture_record.hpp"

namespace latlab::capture {

enum class WaitOutcome : uint8_t {
  done,     // the present with this id (or a later one) completed
  timeout,  // not yet: the waiter calls again unless it is stopping
  failed,   // an error (out of date, surface lost, device lost): not completed
};

struct PresentWaiterDesc {
  // Presents queued at once (waiting or waited for); a push beyond is
  // dropped and counted. Default 16 (more than any swapchain has images).
  uint32_t capacity = 16;
  // Timeout of each Wait call, ns: the longest stop() waits for a Wait in
  // progress. Default 20 ms.
  uint64_t slice_ns = 20'000'000;
};

class PresentWaiter {
 public:
  // Blocks until the present `present_id` completed or `timeout_ns` passed.
  using Wait = std::function<WaitOutcome(uint64_t present_id, uint64_t timeout_ns)>;
  // One call per pushed present, in push order: complete_ns is the host time
  // the Wait returned (kNoTime with a reason otherwise).
  using Done = std::function<void(uint64_t frame, int64_t complete_ns, NoComplete why)>;

  enum class Push : uint8_t { queued, full, stopped };

  // Starts the thread (after every member is set).
  PresentWaiter(Wait wait, Done done, PresentWaiterDesc desc = {});
  ~PresentWaiter();  // stop(NoComplete::retired)
  PresentWaiter(const PresentWaiter&) = delete;
  PresentWaiter& operator=(const PresentWaiter&) = delete;

  // Queues present `present_id` (increasing per swapchain) of frame `frame`.
  // Never blocks on the wait. full: dropped (counted in dropped());
  // stopped: after stop(). In both cases Done is not called for it.
  Push push(uint64_t present_id, uint64_t frame);

  // Stops: once it returns, Wait is never called again (a Wait in progress
  // is let finish: at most slice_ns), and every present still queued was
  // given to Done with kNoTime and `why`. Later calls do nothing.
  void stop(NoComplete why);

  uint64_t dropped() const;

 private:
  struct Item {
    uint64_t present_id = 0;
    uint64_t frame = 0;
  };
  void run();

  Wait wait_;
  Done done_;
  PresentWaiterDesc desc_;
  std::mutex stop_mu_;  // serialises stop() calls
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Item> ring_;  // capacity slots; head_.. head_+count_ queued
  uint32_t head_ = 0;
  uint32_t count_ = 0;
  bool idle_ = false;      // the thread sleeps on cv_ (push wakes it only then)
  bool stopping_ = false;  // guarded by mu_
  bool stopped_ = false;   // stop() finished
  uint64_t dropped_ = 0;
  std::thread thread_;  // last: started once the rest is set
};

}  // namespace latlab::capture
