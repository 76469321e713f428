// The TimestampSlots / TimestampQueryPool contract, written once and run on
// every backend (sim, Vulkan, GL, CUDA) as a typed suite. Each test binary
// that owns a backend instantiates it with that backend's rig:
//
//   INSTANTIATE_TYPED_TEST_SUITE_P(Vulkan, TimestampContract, VulkanRigs, RigName);
//
// A rig opens the device, makes pools through the backend's factory, and
// runs small known-ordered work in frames (two in flight); it says what its
// backend cannot do (hold submitted work, land a late write, ...) with the
// reason, and the case skips with it. A backend without a device here skips,
// never passes.
//
// Rig interface (every member is used by the cases below):
//   static constexpr const char* kName;
//   static constexpr uint32_t kScaleBase;  // complexity whose 4x measures longer
//   std::optional<std::string> open(const RigOptions&);  // reason: skip
//   void close();  // checks the backend's error channel (validation, KHR_debug)
//   Result<std::unique_ptr<TimestampQueryPool>> make_pool(const QueryPoolDesc&);
//   TickFormat expected_ticks();  // asked of the device, not of the slots
//   void begin(uint32_t slot);    // starts frame slot `slot` (< kRigInFlight)
//   GpuCommandStream stream(uint32_t slot);
//   void barrier(uint32_t slot);  // orders the next pass after earlier ones
//   void work(uint32_t slot, uint32_t complexity, uint32_t index);
//   void submit(uint32_t slot);
//   void wait(uint32_t slot);     // blocks until the slot's frame completed
//   std::optional<std::string> cannot_hold();  // hold/release unsupported
//   void hold(uint32_t slot);     // the frame waits for release() on the device
//   void release();               // from any thread
//   std::optional<std::string> cannot_write_late();
//   std::optional<std::string> reads_may_wait();
//   std::optional<std::string> dispose_needs_no_wait();
//   bool separates_small_work();  // 16x the work is reliably slower
//   std::optional<std::string> skips(ContractCase);  // a variant's skip
// cannot_hold, cannot_write_late, dispose_needs_no_wait and skips are asked
// before open().
#pragma once

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "latlab/host_clock.hpp"
#include "latlab/timestamp_query_pool.hpp"

namespace latlab::test {

inline constexpr uint32_t kRigInFlight = 2;

struct RigOptions {
  uint32_t work_side = 64;  // workload extent (Vulkan, GL); the sim and CUDA ignore it
  bool one_worker = false;  // one Mesa worker thread (one_mesa_worker.hpp)
};

inline std::string contract_uid(uint32_t pass, uint64_t frame) {
  return "c:0:pass" + std::to_string(pass) + ":f" + std::to_string(frame);
}

// One pass of a frame: its uid ("" = untimed) and complexity.
struct RigPass {
  std::string uid;
  uint32_t complexity = 1;
};

struct RigPassResult {
  std::string uid;
  bool got_offset = false;
  TimestampResult result;
};

struct RigFrame {
  uint64_t frame_id = 0;
  std::vector<RigPassResult> passes;  // timed passes only
};

// Runs frames 1..n of make_passes(frame), two in flight. After a frame's
// wait it resolves the pool, retires the frame and collects its results.
// `allocate_first`: every pass takes its pair before any is written (a pool
// too small for a frame then overflows whatever the device's speed).
template <class Rig>
std::vector<RigFrame> run_rig_frames(
    Rig& rig, TimestampQueryPool& pool, uint32_t n,
    const std::function<std::vector<RigPass>(uint64_t)>& make_passes, bool allocate_first = false) {
  std::vector<RigFrame> out;
  std::vector<RigFrame> in_slot(kRigInFlight);
  std::vector<bool> busy(kRigInFlight, false);
  const auto finish = [&](uint32_t slot) {
    if (!busy[slot]) return;
    busy[slot] = false;
    rig.wait(slot);
    (void)pool.resolve_queries_async();
    RigFrame& f = in_slot[slot];
    pool.retire_frame(f.frame_id);
    for (auto& p : f.passes) p.result = pool.timestamp(p.uid);
    out.push_back(f);
  };
  for (uint64_t frame = 1; frame <= n; ++frame) {
    const auto slot = static_cast<uint32_t>(frame % kRigInFlight);
    finish(slot);
    if (::testing::Test::HasFatalFailure()) return out;
    rig.begin(slot);
    if (::testing::Test::HasFatalFailure()) return out;
    const std::vector<RigPass> passes = make_passes(frame);
    std::vector<std::optional<uint32_t>> offsets(passes.size());
    for (size_t i = 0; i < passes.size() && allocate_first; ++i) {
      if (!passes[i].uid.empty())
        offsets[i] = pool.allocate_queries_for_context(passes[i].uid, frame);
    }
    RigFrame f{.frame_id = frame, .passes = {}};
    for (size_t i = 0; i < passes.size(); ++i) {
      const auto index = static_cast<uint32_t>(i);
      rig.barrier(slot);
      if (passes[i].uid.empty()) {
        rig.work(slot, passes[i].complexity, index);
        continue;
      }
      if (!allocate_first) offsets[i] = pool.allocate_queries_for_context(passes[i].uid, frame);
      if (offsets[i]) pool.write_begin(rig.stream(slot), *offsets[i]);
      rig.work(slot, passes[i].complexity, index);
      if (offsets[i]) pool.write_end(rig.stream(slot), *offsets[i]);
      f.passes.push_back({passes[i].uid, offsets[i].has_value(), {}});
    }
    in_slot[slot] = f;
    busy[slot] = true;
    rig.submit(slot);
    if (::testing::Test::HasFatalFailure()) return out;
  }
  for (uint64_t frame = n + 1; frame <= n + kRigInFlight; ++frame)
    finish(static_cast<uint32_t>(frame % kRigInFlight));
  return out;
}

// The shortest ok duration of pass `pass` over all frames: other load on the
// machine only ever adds time, so the fastest frames are what survives a busy
// machine (per-frame or median comparisons failed in CI).
inline int64_t rig_fastest_ns(const std::vector<RigFrame>& frames, size_t pass) {
  int64_t best = std::numeric_limits<int64_t>::max();
  for (const auto& f : frames) {
    if (pass < f.passes.size() && f.passes[pass].result.ok())
      best = std::min(best, f.passes[pass].result.duration_ns);
  }
  return best;
}

// The work runs one pass after the other, so the ok results, in frame and
// pass order, tile the timeline: each begins at or after the previous one's
// end. A result read from the wrong slot, frame or reuse breaks this.
inline void expect_rig_results_in_submission_order(const std::vector<RigFrame>& frames) {
  const TimestampResult* prev = nullptr;
  std::string prev_uid;
  for (const auto& f : frames) {
    for (const auto& p : f.passes) {
      if (!p.result.ok()) continue;
      ASSERT_TRUE(p.result.has_ticks) << p.uid;
      EXPECT_LT(p.result.begin_ticks, p.result.end_ticks) << p.uid;
      if (prev != nullptr) {
        EXPECT_LE(prev->end_ticks, p.result.begin_ticks) << prev_uid << " then " << p.uid;
      }
      prev = &p.result;
      prev_uid = p.uid;
    }
  }
}

// The cases, for a rig's skips(): a variant of a backend (another reset
// path, context kind or timer) runs the cases its variation can change and
// skips the rest, which the backend's main rig runs (each test is a process
// of its own under ctest; a GL or Vulkan context costs about a second).
enum class ContractCase : uint8_t {
  pairs_ordered,
  results_map,
  more_work,
  tiny_pool,
  full_pool,
  reused_slots,
  reset_slot,
  late_write,
  untimed_uids,
  dispose,
  bad_capacity,
  tick_format,
  reads_never_wait,
};

// Opens the rig or skips with the backend's reason (returns from the caller).
#define LATLAB_OPEN_RIG(rig, ...)                                         \
  do {                                                                    \
    if (const auto why_ = (rig).open(__VA_ARGS__)) GTEST_SKIP() << *why_; \
    if (::testing::Test::HasFatalFailure()) return;                       \
  } while (0)

#define LATLAB_RIG_REQUIRES(reason_expr)                        \
  do {                                                          \
    if (const auto why_ = (reason_expr)) GTEST_SKIP() << *why_; \
  } while (0)

template <class Rig>
std::unique_ptr<TimestampQueryPool> make_rig_pool(Rig& rig, uint32_t max_queries) {
  auto p = rig.make_pool(QueryPoolDesc{.max_queries = max_queries, .kind = QueryKind::compute});
  EXPECT_TRUE(p) << p.error().message;
  return p ? std::move(p.value()) : nullptr;
}

// The contract's cases; each is a whole test body (TYPED_TESTs below call
// them; the sim's faulty-rig tests run them under a fake reporter).
namespace contract {

// Every pair of ordered work comes back ok, begin before end, in its frame.
template <class Rig>
void pairs_are_ordered_and_positive(Rig& rig) {
  LATLAB_RIG_REQUIRES(rig.skips(ContractCase::pairs_ordered));
  LATLAB_OPEN_RIG(rig, RigOptions{});
  auto pool = make_rig_pool(rig, 256);
  ASSERT_TRUE(pool);
  ASSERT_TRUE(pool->track_timestamp());
  const auto frames = run_rig_frames(rig, *pool, 6, [](uint64_t f) {
    return std::vector<RigPass>{{contract_uid(0, f), 8}, {contract_uid(1, f), 8}};
  });
  ASSERT_EQ(frames.size(), 6u);
  const bool ticks = !pool->slots().durations_only();
  for (const auto& f : frames) {
    for (const auto& p : f.passes) {
      ASSERT_TRUE(p.got_offset) << p.uid;
      EXPECT_EQ(p.result.status, QueryStatus::ok) << p.uid << " " << to_string(p.result.status);
      EXPECT_GT(p.result.duration_ns, 0) << p.uid;
      EXPECT_EQ(p.result.frame_id, f.frame_id);
      // Durations-only slots have no device clock: no ticks, never a made-up 0 passed off as one.
      EXPECT_EQ(p.result.has_ticks, ticks) << p.uid;
      if (ticks) {
        EXPECT_LT(p.result.begin_ticks, p.result.end_ticks) << p.uid;
      }
    }
  }
  EXPECT_EQ(pool->durations_only(), !ticks);
  EXPECT_EQ(pool->pairs_in_use(), 0u);
  EXPECT_EQ(pool->overflow_count(), 0u);
  EXPECT_EQ(pool->late_result_count(), 0u);
  ASSERT_TRUE(pool->last_value().has_value());
  EXPECT_GT(*pool->last_value(), 0.0);
}

// Different work per uid, 16x apart, in a pool of six pairs that two frames
// in flight of three passes reuse every other frame: each uid's result is
// its own (fastest frames in the work's order) and, with ticks, all results
// tile the timeline in submission order.
template <class Rig>
void results_map_to_their_uid_and_frame(Rig& rig) {
  LATLAB_RIG_REQUIRES(rig.skips(ContractCase::results_map));
  LATLAB_OPEN_RIG(rig, RigOptions{});
  auto pool = make_rig_pool(rig, 12);
  ASSERT_TRUE(pool);
  const uint32_t complexity[3] = {16, 256, 4096};
  const auto frames = run_rig_frames(rig, *pool, 7, [&](uint64_t f) {
    return std::vector<RigPass>{{contract_uid(0, f), complexity[0]},
                                {contract_uid(1, f), complexity[1]},
                                {contract_uid(2, f), complexity[2]}};
  });
  ASSERT_EQ(frames.size(), 7u);
  uint64_t expected_frame = 1;
  for (const auto& f : frames) {
    EXPECT_EQ(f.frame_id, expected_frame++);
    ASSERT_EQ(f.passes.size(), 3u);
    for (uint32_t i = 0; i < 3; ++i) {
      ASSERT_TRUE(f.passes[i].result.ok())
          << f.passes[i].uid << " " << to_string(f.passes[i].result.status);
      EXPECT_EQ(f.passes[i].result.frame_id, f.frame_id);
      EXPECT_EQ(f.passes[i].uid, contract_uid(i, f.frame_id));
    }
  }
  if (!pool->durations_only()) expect_rig_results_in_submission_order(frames);
  EXPECT_LT(rig_fastest_ns(frames, 0), rig_fastest_ns(frames, 2));
  EXPECT_LT(rig_fastest_ns(frames, 1), rig_fastest_ns(frames, 2));
  if (rig.separates_small_work()) {
    EXPECT_LT(rig_fastest_ns(frames, 0), rig_fastest_ns(frames, 1));
  }
  EXPECT_EQ(pool->overflow_count(), 0u);
  EXPECT_EQ(pool->late_result_count(), 0u);
}

// Four times the work measures longer: fastest of 8 frames, ratio > 2.
template <class Rig>
void more_work_takes_measurably_longer(Rig& rig) {
  LATLAB_RIG_REQUIRES(rig.skips(ContractCase::more_work));
  LATLAB_OPEN_RIG(rig, RigOptions{.work_side = 128, .one_worker = true});
  auto pool = make_rig_pool(rig, 256);
  ASSERT_TRUE(pool);
  const uint32_t base = Rig::kScaleBase;
  const auto frames = run_rig_frames(rig, *pool, 8, [base](uint64_t f) {
    return std::vector<RigPass>{{contract_uid(0, f), base}, {contract_uid(1, f), 4 * base}};
  });
  ASSERT_EQ(frames.size(), 8u);
  for (const auto& f : frames) ASSERT_TRUE(f.passes[0].result.ok() && f.passes[1].result.ok());
  const double small = static_cast<double>(rig_fastest_ns(frames, 0));
  const double large = static_cast<double>(rig_fastest_ns(frames, 1));
  std::printf("%s: complexity %u: fastest %.3f ms; 4x: %.3f ms; ratio %.2f\n", Rig::kName, base,
              small / 1e6, large / 1e6, large / small);
  EXPECT_GT(large / small, 2.0);
}

// Two pairs, three passes per frame taking their pairs up front, two frames
// in flight: some passes find no free pair; no written result is lost.
template <class Rig>
void tiny_pool_overflow_loses_no_written_result(Rig& rig) {
  LATLAB_RIG_REQUIRES(rig.skips(ContractCase::tiny_pool));
  LATLAB_OPEN_RIG(rig, RigOptions{});
  auto pool = make_rig_pool(rig, 4);
  ASSERT_TRUE(pool);
  const auto frames = run_rig_frames(
      rig, *pool, 12,
      [](uint64_t f) {
        return std::vector<RigPass>{
            {contract_uid(0, f), 4}, {contract_uid(1, f), 4}, {contract_uid(2, f), 4}};
      },
      /*allocate_first=*/true);
  ASSERT_EQ(frames.size(), 12u);
  uint64_t timed = 0, overflowed = 0;
  for (const auto& f : frames) {
    for (const auto& p : f.passes) {
      if (p.got_offset) {
        ++timed;
        EXPECT_EQ(p.result.status, QueryStatus::ok) << p.uid << " " << to_string(p.result.status);
        EXPECT_GT(p.result.duration_ns, 0);
      } else {
        ++overflowed;
        EXPECT_EQ(p.result.status, QueryStatus::overflowed) << p.uid;
      }
    }
  }
  EXPECT_GE(timed, 12u);      // two frames share two pairs: at least every other frame is timed
  EXPECT_GT(overflowed, 0u);  // and the pool did run out
  EXPECT_EQ(overflowed, pool->overflow_count());
  EXPECT_EQ(timed + overflowed, 36u);
  EXPECT_EQ(pool->late_result_count(), 0u);
  EXPECT_EQ(pool->pairs_in_use(), 0u);
}

// A full pool: while both pairs' work is queued (held, where the backend
// can hold and its reads do not wait) a third uid overflows; once written, an allocation reads and
// frees them without a resolve call in between, and both results are ok.
template <class Rig>
void full_pool_frees_written_pairs_without_losing_them(Rig& rig) {
  LATLAB_RIG_REQUIRES(rig.skips(ContractCase::full_pool));
  LATLAB_OPEN_RIG(rig, RigOptions{});
  auto pool = make_rig_pool(rig, 4);
  ASSERT_TRUE(pool);
  // Allocation reads the slots: where a read waits for the device, holding would deadlock.
  const bool held = !rig.cannot_hold() && !rig.reads_may_wait();
  ASSERT_NO_FATAL_FAILURE(rig.begin(0));
  if (held) {
    ASSERT_NO_FATAL_FAILURE(rig.hold(0));
  }
  for (uint32_t i = 0; i < 2; ++i) {
    const auto off = pool->allocate_queries_for_context(contract_uid(i, 1), 1);
    ASSERT_TRUE(off.has_value()) << i;
    rig.barrier(0);
    pool->write_begin(rig.stream(0), *off);
    rig.work(0, 4, i);
    pool->write_end(rig.stream(0), *off);
  }
  ASSERT_NO_FATAL_FAILURE(rig.submit(0));
  if (held) {
    EXPECT_FALSE(pool->allocate_queries_for_context(contract_uid(2, 1), 1).has_value());
    EXPECT_EQ(pool->timestamp(contract_uid(2, 1)).status, QueryStatus::overflowed);
    EXPECT_EQ(pool->overflow_count(), 1u);
    rig.release();
  }
  ASSERT_NO_FATAL_FAILURE(rig.wait(0));
  EXPECT_TRUE(pool->allocate_queries_for_context(contract_uid(0, 2), 2).has_value());
  EXPECT_EQ(pool->timestamp(contract_uid(0, 1)).status, QueryStatus::ok);
  EXPECT_EQ(pool->timestamp(contract_uid(1, 1)).status, QueryStatus::ok);
  EXPECT_EQ(pool->overflow_count(), held ? 1u : 0u);
}

// One pair: frame 2 reuses frame 1's slots. Before frame 2 runs, its uid is
// not_ready (never frame 1's value, nor a late write); after, its own result.
template <class Rig>
void reused_slots_old_value_is_not_read_as_the_new_use(Rig& rig) {
  LATLAB_RIG_REQUIRES(rig.skips(ContractCase::reused_slots));
  LATLAB_OPEN_RIG(rig, RigOptions{});
  auto pool = make_rig_pool(rig, 2);
  ASSERT_TRUE(pool);
  const auto run_frame = [&](uint64_t frame, uint32_t offset) {
    ASSERT_NO_FATAL_FAILURE(rig.begin(0));
    rig.barrier(0);
    pool->write_begin(rig.stream(0), offset);
    rig.work(0, 4, 0);
    pool->write_end(rig.stream(0), offset);
    ASSERT_NO_FATAL_FAILURE(rig.submit(0));
    ASSERT_NO_FATAL_FAILURE(rig.wait(0));
    (void)frame;
  };
  const auto first_off = pool->allocate_queries_for_context(contract_uid(0, 1), 1);
  ASSERT_EQ(first_off, 0u);
  ASSERT_NO_FATAL_FAILURE(run_frame(1, *first_off));
  (void)pool->resolve_queries_async();
  const TimestampResult first = pool->timestamp(contract_uid(0, 1));
  ASSERT_TRUE(first.ok()) << to_string(first.status);
  pool->retire_frame(1);

  const auto off = pool->allocate_queries_for_context(contract_uid(0, 2), 2);
  ASSERT_EQ(off, 0u);
  auto t = pool->resolve_queries_async();
  EXPECT_FALSE(t.is_ready());
  EXPECT_EQ(pool->timestamp(contract_uid(0, 2)).status, QueryStatus::not_ready)
      << "frame 1's value read as frame 2's";
  EXPECT_EQ(pool->late_result_count(), 0u);

  ASSERT_NO_FATAL_FAILURE(run_frame(2, *off));
  (void)pool->resolve_queries_async();
  const TimestampResult second = pool->timestamp(contract_uid(0, 2));
  ASSERT_TRUE(second.ok()) << to_string(second.status);
  if (second.has_ticks) {
    EXPECT_GE(second.begin_ticks, first.end_ticks) << "frame 2's result is frame 1's value";
  }
  EXPECT_EQ(pool->late_result_count(), 0u);
}

// On the slots themselves: a reset slot reads unavailable until written
// again, then reads the new use's value.
template <class Rig>
void reset_slot_reads_unavailable_until_written_again(Rig& rig) {
  LATLAB_RIG_REQUIRES(rig.skips(ContractCase::reset_slot));
  LATLAB_OPEN_RIG(rig, RigOptions{});
  auto pool = make_rig_pool(rig, 4);
  ASSERT_TRUE(pool);
  TimestampSlots& slots = pool->slots();
  const auto use = [&] {
    slots.reset(0, 2, true);
    ASSERT_NO_FATAL_FAILURE(rig.begin(0));
    rig.barrier(0);
    slots.write(rig.stream(0), 0, TimestampEdge::begin);
    rig.work(0, 4, 0);
    slots.write(rig.stream(0), 1, TimestampEdge::end);
    ASSERT_NO_FATAL_FAILURE(rig.submit(0));
    ASSERT_NO_FATAL_FAILURE(rig.wait(0));
  };
  SlotReading r[2];
  ASSERT_NO_FATAL_FAILURE(use());
  slots.read(0, r);
  ASSERT_TRUE(r[0].available && r[1].available);
  EXPECT_EQ(completed_pair_status(r[0], r[1], slots.tick_format()), QueryStatus::ok);
  const uint64_t old_end = r[1].ticks;
  slots.reset(0, 2, true);
  slots.read(0, r);
  EXPECT_EQ(r[0].available, 0u) << "the previous use's value came back after a reset";
  EXPECT_EQ(r[1].available, 0u) << "the previous use's value came back after a reset";
  ASSERT_NO_FATAL_FAILURE(use());
  slots.read(0, r);
  ASSERT_TRUE(r[0].available && r[1].available);
  EXPECT_EQ(completed_pair_status(r[0], r[1], slots.tick_format()), QueryStatus::ok);
  if (!slots.durations_only()) {
    EXPECT_GE(r[0].ticks, old_end) << "the second use read the first's value";
  }
}

// Frame 1's work is held on the device; the owner retires frame 1 (its pair
// frees, its uid invalid) and frame 2 takes the pair. Frame 1's writes then
// land in it: frame 2 reads invalid and a late result is counted.
template <class Rig>
void late_write_into_reused_slot_is_invalid(Rig& rig) {
  LATLAB_RIG_REQUIRES(rig.skips(ContractCase::late_write));
  LATLAB_RIG_REQUIRES(rig.cannot_hold());
  LATLAB_RIG_REQUIRES(rig.cannot_write_late());
  LATLAB_OPEN_RIG(rig, RigOptions{});
  auto pool = make_rig_pool(rig, 2);
  ASSERT_TRUE(pool);
  ASSERT_NO_FATAL_FAILURE(rig.begin(0));
  ASSERT_NO_FATAL_FAILURE(rig.hold(0));
  const auto first = pool->allocate_queries_for_context(contract_uid(0, 1), 1);
  ASSERT_TRUE(first.has_value());
  pool->write_begin(rig.stream(0), *first);
  rig.work(0, 10, 0);
  pool->write_end(rig.stream(0), *first);
  ASSERT_NO_FATAL_FAILURE(rig.submit(0));
  pool->retire_frame(1);  // the owner gives frame 1 up: its writes have not landed
  EXPECT_EQ(pool->timestamp(contract_uid(0, 1)).status, QueryStatus::invalid);
  const auto second = pool->allocate_queries_for_context(contract_uid(0, 2), 2);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(*second, *first);
  rig.release();  // frame 1's writes now land in the reused slots
  ASSERT_NO_FATAL_FAILURE(rig.wait(0));
  EXPECT_TRUE(pool->resolve_queries_async().is_ready());
  EXPECT_EQ(pool->timestamp(contract_uid(0, 2)).status, QueryStatus::invalid);
  EXPECT_EQ(pool->late_result_count(), 1u);
}

template <class Rig>
void untimed_passes_and_foreign_uids_give_no_offset(Rig& rig) {
  LATLAB_RIG_REQUIRES(rig.skips(ContractCase::untimed_uids));
  LATLAB_OPEN_RIG(rig, RigOptions{});
  auto pool = make_rig_pool(rig, 256);
  ASSERT_TRUE(pool);
  const auto frames = run_rig_frames(rig, *pool, 2, [](uint64_t f) {
    return std::vector<RigPass>{
        {"", 4}, {"r:0:render:f" + std::to_string(f), 4}, {contract_uid(2, f), 4}};
  });
  ASSERT_EQ(frames.size(), 2u);
  for (const auto& f : frames) {
    ASSERT_EQ(f.passes.size(), 2u);  // the untimed pass has no entry
    EXPECT_FALSE(f.passes[0].got_offset);
    EXPECT_EQ(f.passes[0].result.status, QueryStatus::missing);
    EXPECT_TRUE(f.passes[1].got_offset);
    EXPECT_TRUE(f.passes[1].result.ok()) << to_string(f.passes[1].result.status);
  }
  EXPECT_EQ(pool->pairs_in_use(), 0u);
}

// dispose() lets go of the last owner of the slots while a frame that writes
// them is held on the device: it must wait for that frame, not free what the
// device still writes (Vulkan: VUID-vkDestroyQueryPool-queryPool-00793).
template <class Rig>
void dispose_while_in_flight_waits(Rig& rig) {
  LATLAB_RIG_REQUIRES(rig.skips(ContractCase::dispose));
  LATLAB_RIG_REQUIRES(rig.cannot_hold());
  LATLAB_RIG_REQUIRES(rig.dispose_needs_no_wait());
  LATLAB_OPEN_RIG(rig, RigOptions{});
  auto pool = make_rig_pool(rig, 8);
  ASSERT_TRUE(pool);
  ASSERT_NO_FATAL_FAILURE(rig.begin(0));
  const auto off = pool->allocate_queries_for_context(contract_uid(0, 1), 1);
  ASSERT_TRUE(off.has_value());
  pool->write_begin(rig.stream(0), *off);
  ASSERT_NO_FATAL_FAILURE(rig.hold(0));
  rig.work(0, 4, 0);
  pool->write_end(rig.stream(0), *off);
  ASSERT_NO_FATAL_FAILURE(rig.submit(0));
  static constexpr int64_t kHoldNs = 200'000'000;
  std::thread releaser([&rig] {
    std::this_thread::sleep_for(std::chrono::nanoseconds(kHoldNs));
    rig.release();
  });
  const int64_t t0 = host_now_ns();
  pool->dispose();  // the pool holds the only reference to its slots
  const int64_t waited = host_now_ns() - t0;
  releaser.join();
  EXPECT_TRUE(pool->is_disposed());
  EXPECT_GT(waited, kHoldNs / 2) << "dispose returned before the frame in flight completed";
  ASSERT_NO_FATAL_FAILURE(rig.wait(0));
}

template <class Rig>
void bad_capacity_is_refused(Rig& rig) {
  LATLAB_RIG_REQUIRES(rig.skips(ContractCase::bad_capacity));
  LATLAB_OPEN_RIG(rig, RigOptions{});
  for (uint32_t bad : {0u, 1u, 3u}) {
    auto p = rig.make_pool(QueryPoolDesc{.max_queries = bad, .kind = QueryKind::compute});
    ASSERT_FALSE(p) << bad;
    EXPECT_NE(p.error().message.find("even"), std::string::npos) << p.error().message;
  }
}

template <class Rig>
void tick_format_comes_from_the_backend(Rig& rig) {
  LATLAB_RIG_REQUIRES(rig.skips(ContractCase::tick_format));
  LATLAB_OPEN_RIG(rig, RigOptions{});
  auto pool = make_rig_pool(rig, 4);
  ASSERT_TRUE(pool);
  const TickFormat want = rig.expected_ticks();
  EXPECT_EQ(pool->tick_format().valid_bits, want.valid_bits);
  EXPECT_NEAR(pool->tick_format().period_ns(), want.period_ns(), 1e-6);
  EXPECT_EQ(pool->slots().tick_format().valid_bits, want.valid_bits);
}

// Reads never wait for the device: before submission and while the work is
// held, a resolve returns at once, not_ready (never 0, never an old value);
// once the work ran, the same pending ticket completes. A backend that
// cannot hold work is timed instead: the resolve takes a small part of the
// GPU work it did not wait for.
template <class Rig>
void reads_never_wait_for_the_gpu(Rig& rig) {
  LATLAB_RIG_REQUIRES(rig.skips(ContractCase::reads_never_wait));
  LATLAB_OPEN_RIG(rig, RigOptions{.work_side = 256});
  LATLAB_RIG_REQUIRES(rig.reads_may_wait());
  auto pool = make_rig_pool(rig, 16);
  ASSERT_TRUE(pool);
  const bool held = !rig.cannot_hold();
  const std::string u = contract_uid(0, 1);
  ASSERT_NO_FATAL_FAILURE(rig.begin(0));
  if (held) {
    ASSERT_NO_FATAL_FAILURE(rig.hold(0));
  }
  const auto off = pool->allocate_queries_for_context(u, 1);
  ASSERT_TRUE(off.has_value());
  rig.barrier(0);
  pool->write_begin(rig.stream(0), *off);
  rig.work(0, 1024, 0);
  rig.work(0, 1024, 1);
  pool->write_end(rig.stream(0), *off);
  std::optional<ResolveTicket> pending;
  if (held) {
    pending = pool->resolve_queries_async();
    EXPECT_FALSE(pending->is_ready()) << "available before submission";
    EXPECT_EQ(pool->timestamp(u).status, QueryStatus::not_ready);
  }
  ASSERT_NO_FATAL_FAILURE(rig.submit(0));
  const int64_t t0 = host_now_ns();
  const ResolveTicket during = pool->resolve_queries_async();
  const int64_t resolve_ns = host_now_ns() - t0;
  if (held) {
    EXPECT_FALSE(during.is_ready());
    EXPECT_TRUE(during.same_as(*pending));
    EXPECT_EQ(pool->timestamp(u).status, QueryStatus::not_ready);
    EXPECT_FALSE(pool->has_timestamp_query(u));
    rig.release();
  }
  ASSERT_NO_FATAL_FAILURE(rig.wait(0));
  const ResolveTicket done = pool->resolve_queries_async();
  EXPECT_TRUE(done.is_ready());
  if (held) {
    EXPECT_TRUE(done.same_as(*pending));
  }
  const auto r = pool->timestamp(u);
  ASSERT_TRUE(r.ok()) << to_string(r.status);
  std::printf("%s: resolve %.3f ms; the work %.3f ms\n", Rig::kName,
              static_cast<double>(resolve_ns) / 1e6, static_cast<double>(r.duration_ns) / 1e6);
  if (!held) {
    EXPECT_LT(resolve_ns * 10, r.duration_ns)
        << "the resolve took as long as the GPU work: it waited";
  }
}

}  // namespace contract

// The typed suite. RigFixture owns one rig per test and closes it after.
template <class Rig>
class TimestampContract : public ::testing::Test {
 protected:
  void TearDown() override { rig_.close(); }
  Rig rig_;
};

TYPED_TEST_SUITE_P(TimestampContract);

#define LATLAB_CONTRACT_CASE(Name, fn) \
  TYPED_TEST_P(TimestampContract, Name) { contract::fn(this->rig_); }

LATLAB_CONTRACT_CASE(PairsAreOrderedAndPositive, pairs_are_ordered_and_positive)
LATLAB_CONTRACT_CASE(ResultsMapToTheirUidAndFrame, results_map_to_their_uid_and_frame)
LATLAB_CONTRACT_CASE(MoreWorkTakesMeasurablyLonger, more_work_takes_measurably_longer)
LATLAB_CONTRACT_CASE(TinyPoolOverflowLosesNoWrittenResult,
                     tiny_pool_overflow_loses_no_written_result)
LATLAB_CONTRACT_CASE(FullPoolFreesWrittenPairsWithoutLosingThem,
                     full_pool_frees_written_pairs_without_losing_them)
LATLAB_CONTRACT_CASE(ReusedSlotsOldValueIsNotReadAsTheNewUse,
                     reused_slots_old_value_is_not_read_as_the_new_use)
LATLAB_CONTRACT_CASE(ResetSlotReadsUnavailableUntilWrittenAgain,
                     reset_slot_reads_unavailable_until_written_again)
LATLAB_CONTRACT_CASE(LateWriteIntoReusedSlotIsInvalid, late_write_into_reused_slot_is_invalid)
LATLAB_CONTRACT_CASE(UntimedPassesAndForeignUidsGiveNoOffset,
                     untimed_passes_and_foreign_uids_give_no_offset)
LATLAB_CONTRACT_CASE(DisposeWhileInFlightWaits, dispose_while_in_flight_waits)
LATLAB_CONTRACT_CASE(BadCapacityIsRefused, bad_capacity_is_refused)
LATLAB_CONTRACT_CASE(TickFormatComesFromTheBackend, tick_format_comes_from_the_backend)
LATLAB_CONTRACT_CASE(ReadsNeverWaitForTheGpu, reads_never_wait_for_the_gpu)

REGISTER_TYPED_TEST_SUITE_P(
    TimestampContract, PairsAreOrderedAndPositive, ResultsMapToTheirUidAndFrame,
    MoreWorkTakesMeasurablyLonger, TinyPoolOverflowLosesNoWrittenResult,
    FullPoolFreesWrittenPairsWithoutLosingThem, ReusedSlotsOldValueIsNotReadAsTheNewUse,
    ResetSlotReadsUnavailableUntilWrittenAgain, LateWriteIntoReusedSlotIsInvalid,
    UntimedPassesAndForeignUidsGiveNoOffset, DisposeWhileInFlightWaits, BadCapacityIsRefused,
    TickFormatComesFromTheBackend, ReadsNeverWaitForTheGpu);

// Names the instantiated suites by the rig's kName.
struct RigName {
  template <class Rig>
  static std::string GetName(int) {
    return Rig::kName;
  }
};

// Runs `body` with failures captured instead of reported; true when it
// reported at least one (the faulty-rig tests: the suite catches a broken
// backend).
inline bool reports_a_failure(const std::function<void()>& body) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    body();
  }
  for (int i = 0; i < results.size(); ++i) {
    if (results.GetTestPartResult(i).failed()) return true;
  }
  return false;
}

}  // namespace latlab::test
