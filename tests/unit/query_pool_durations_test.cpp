// The pool on durations-only slots (the seam's GL_TIME_ELAPSED convention:
// the begin slot reads 0, the end slot the span): durations without ticks,
// overlapped pairs, and no false late-write alarm from a begin of 0. The
// slots here are the test's own script of that convention; the GL tests run
// the real thing (tests/opengl/gl_elapsed_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "latlab/timestamp_query_pool.hpp"

namespace latlab {
namespace {

class ScriptedDurationSlots final : public TimestampSlots {
 public:
  explicit ScriptedDurationSlots(uint32_t count) : slots_(count) {}
  uint32_t slot_count() const override { return static_cast<uint32_t>(slots_.size()); }
  TickFormat tick_format() const override { return TickFormat{1, 1, 64}; }
  bool durations_only() const override { return true; }
  void write(GpuCommandStream, uint32_t, TimestampEdge) override {}
  void read(uint32_t first, std::span<SlotReading> out) override {
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = first + i < slots_.size() ? slots_[first + i] : SlotReading{};
  }
  void reset(uint32_t first, uint32_t count, bool) override {
    std::fill_n(slots_.begin() + first, count, SlotReading{});
  }
  // The device finished the pair at `offset`: `span` ticks long, or overlapped.
  void finish(uint32_t offset, uint64_t span) {
    slots_[offset] = {.ticks = 0, .available = 1, .flags = 0};
    slots_[offset + 1] = {.ticks = span, .available = 1, .flags = 0};
  }
  void overlap(uint32_t offset) {
    slots_[offset] = {.ticks = 0, .available = 1, .flags = SlotReading::kOverlapped};
    slots_[offset + 1] = {.ticks = 0, .available = 1, .flags = SlotReading::kOverlapped};
  }

 private:
  std::vector<SlotReading> slots_;
};

struct Rig {
  std::shared_ptr<ScriptedDurationSlots> slots = std::make_shared<ScriptedDurationSlots>(4);
  std::unique_ptr<TimestampQueryPool> pool =
      TimestampQueryPool::create(slots, {.max_queries = 4, .kind = QueryKind::compute}).value();
};

TEST(QueryPoolDurationsOnly, ResultsHaveADurationAndNoTicks) {
  Rig r;
  EXPECT_TRUE(r.pool->durations_only());
  const auto off = r.pool->allocate_queries_for_context("c:0:a:f1", 1);
  ASSERT_TRUE(off);
  r.slots->finish(*off, 1500);
  ASSERT_TRUE(r.pool->resolve_queries_async().is_ready());
  const TimestampResult res = r.pool->timestamp("c:0:a:f1");
  EXPECT_EQ(res.status, QueryStatus::ok);
  EXPECT_EQ(res.duration_ns, 1500);
  EXPECT_FALSE(res.has_ticks);
  EXPECT_EQ(res.begin_ticks, 0u);
  EXPECT_EQ(res.end_ticks, 0u);
  EXPECT_EQ(r.pool->last_value(), 0.0015);
}

TEST(QueryPoolDurationsOnly, AnOverlappedPairHasNoNumber) {
  Rig r;
  const auto a = r.pool->allocate_queries_for_context("c:0:a:f1", 1);
  const auto b = r.pool->allocate_queries_for_context("c:0:b:f1", 1);
  ASSERT_TRUE(a && b);
  r.slots->finish(*a, 900);
  r.slots->overlap(*b);
  const ResolveTicket t = r.pool->resolve_queries_async();
  ASSERT_TRUE(t.is_ready());
  EXPECT_EQ(t.summary().resolved_ok, 1u);
  EXPECT_EQ(t.summary().invalid, 1u);
  const TimestampResult res = r.pool->timestamp("c:0:b:f1");
  EXPECT_EQ(res.status, QueryStatus::overlapped);
  EXPECT_EQ(res.duration_ns, 0);
  EXPECT_FALSE(r.pool->last_value().has_value()) << "frame 1 is not all ok";
}

// With ticks, a begin older than what the pool has seen complete is a late
// write; every begin reads 0 here, and that is no alarm.
TEST(QueryPoolDurationsOnly, AReusedPairIsNotMistakenForALateWrite) {
  Rig r;
  for (uint64_t frame = 1; frame <= 4; ++frame) {
    const std::string uid = "c:0:a:f" + std::to_string(frame);
    const auto off = r.pool->allocate_queries_for_context(uid, frame);
    ASSERT_TRUE(off);
    r.slots->finish(*off, 1000 * frame);
    (void)r.pool->resolve_queries_async();
    EXPECT_EQ(r.pool->timestamp(uid).status, QueryStatus::ok) << uid;
    EXPECT_EQ(r.pool->timestamp(uid).duration_ns, static_cast<int64_t>(1000 * frame));
  }
  EXPECT_EQ(r.pool->late_result_count(), 0u);
}

}  // namespace
}  // namespace latlab
