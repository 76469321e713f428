// The capture layer's queue table (src/capture/queue_table.hpp) with several
// program threads: each finds its own queues while others append theirs and
// a device goes away; no lookup ever gives another queue's value. Run under
// TSan in CI (label threads), which also checks the publication order.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "capture/queue_table.hpp"

namespace latlab::capture {
namespace {

struct Owner {
  int device = -1;
  int queue = -1;
};
bool operator==(const Owner& a, const Owner& b) {
  return a.device == b.device && a.queue == b.queue;
}

// Distinct non-null handles, as VkQueue values are.
struct QueueHandle {
  int unused = 0;
};
using Key = QueueHandle*;

constexpr int kQueuesPerDevice = 16;

class Handles {
 public:
  explicit Handles(int devices) : handles_(static_cast<size_t>(devices * kQueuesPerDevice)) {}
  Key operator()(int device, int queue) {
    return &handles_[static_cast<size_t>(device * kQueuesPerDevice + queue)];
  }

 private:
  std::vector<QueueHandle> handles_;
};

// Each thread is a device's: it publishes its queues one by one and, after
// each, looks up every queue of every device. Its own published ones are
// found with their own value; another's are found with that one's value or
// not at all (not yet published), never with a wrong one.
void appenders_race(int threads) {
  QueueTable<Key, Owner, 256> table;
  Handles handles(threads);
  std::atomic<int> wrong{0};
  std::atomic<int> lost{0};
  std::barrier start(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int q = 0; q < kQueuesPerDevice; ++q) {
        EXPECT_TRUE(table.publish(handles(t, q), Owner{t, q}));
        for (int other = 0; other < threads; ++other) {
          for (int oq = 0; oq < kQueuesPerDevice; ++oq) {
            const Owner* o = table.find(handles(other, oq));
            if (o == nullptr) {
              if (other == t && oq <= q) lost.fetch_add(1);
            } else if (!(*o == Owner{other, oq})) {
              wrong.fetch_add(1);
            }
          }
        }
      }
    });
  }
  for (std::thread& th : pool) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(lost.load(), 0);
  for (int t = 0; t < threads; ++t) {
    for (int q = 0; q < kQueuesPerDevice; ++q) {
      const Owner* o = table.find(handles(t, q));
      ASSERT_NE(o, nullptr);
      EXPECT_EQ(*o, (Owner{t, q}));
    }
  }
}

TEST(QueueTableThreads, TwoThreadsAppendAndFind) { appenders_race(2); }
TEST(QueueTableThreads, ThreeThreadsAppendAndFind) { appenders_race(3); }
TEST(QueueTableThreads, EightThreadsAppendAndFind) { appenders_race(8); }

// Three devices' threads submit (look their queues up) in a loop while the
// main thread destroys device 1: devices 0 and 2 always find theirs; device
// 1's thread sees its queues either with their value or, once forgotten,
// not at all; then a new device whose queues reuse device 1's handles is
// found with the new value.
TEST(QueueTableThreads, ADeviceGoesAwayWhileOthersSubmit) {
  constexpr int kDevices = 3;
  QueueTable<Key, Owner, 256> table;
  Handles handles(kDevices);
  for (int d = 0; d < kDevices; ++d) {
    for (int q = 0; q < kQueuesPerDevice; ++q) ASSERT_TRUE(table.publish(handles(d, q), Owner{d, q}));
  }
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::atomic<int> lost{0};
  std::atomic<int> found_after_forget{0};
  std::atomic<int> rounds_after_forget{0};
  std::atomic<bool> forgotten{false};
  std::vector<std::thread> pool;
  for (int d = 0; d < kDevices; ++d) {
    pool.emplace_back([&, d] {
      while (!stop.load()) {
        const bool after = forgotten.load();
        for (int q = 0; q < kQueuesPerDevice; ++q) {
          const Owner* o = table.find(handles(d, q));
          if (o == nullptr) {
            if (d != 1) lost.fetch_add(1);
          } else if (!(*o == Owner{d, q})) {
            wrong.fetch_add(1);
          } else if (d == 1 && after) {
            found_after_forget.fetch_add(1);
          }
        }
        if (after) rounds_after_forget.fetch_add(1);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  table.forget_if([](const Owner& o) { return o.device == 1; });
  forgotten.store(true);
  while (rounds_after_forget.load() < 300) std::this_thread::yield();
  stop.store(true);
  for (std::thread& th : pool) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(lost.load(), 0);
  EXPECT_EQ(found_after_forget.load(), 0);
  for (int q = 0; q < kQueuesPerDevice; ++q) {
    EXPECT_EQ(table.find(handles(1, q)), nullptr);
    ASSERT_TRUE(table.publish(handles(1, q), Owner{7, q}));
    EXPECT_EQ(*table.find(handles(1, q)), (Owner{7, q}));
    EXPECT_EQ(*table.find(handles(0, q)), (Owner{0, q}));
  }
}

TEST(QueueTableThreads, PastItsCapacityPublishSaysNoAndChangesNothing) {
  QueueTable<Key, Owner, 4> table;
  Handles handles(1);
  for (int q = 0; q < 4; ++q) ASSERT_TRUE(table.publish(handles(0, q), Owner{0, q}));
  EXPECT_FALSE(table.publish(handles(0, 4), Owner{0, 4}));
  EXPECT_EQ(table.find(handles(0, 4)), nullptr);
  // A key already in keeps its first value.
  EXPECT_FALSE(table.publish(handles(0, 2), Owner{9, 9}));
  EXPECT_EQ(*table.find(handles(0, 2)), (Owner{0, 2}));
  // Forgetting frees no entry: entries are never reused.
  table.forget_if([](const Owner&) { return true; });
  EXPECT_FALSE(table.publish(handles(0, 5), Owner{0, 5}));
  EXPECT_EQ(table.find(handles(0, 0)), nullptr);
}

}  // namespace
}  // namespace latlab::capture
