// The timestamp query pool contract on the simulated device.
#include <gtest/gtest.h>

#include <string>

#include "latlab/bench/sim_timestamp_slots.hpp"
#include "latlab/timestamp_query_pool.hpp"

namespace latlab {
namespace {

std::string uid(int pass, uint64_t frame) {
  return "c:0:pass" + std::to_string(pass) + ":f" + std::to_string(frame);
}

// A pool on sim slots; the test plays the device through `device`.
struct SimPool {
  std::shared_ptr<SimTimestampSlots> device;
  std::unique_ptr<TimestampQueryPool> pool;
  TimestampQueryPool* operator->() const { return pool.get(); }
};

SimPool make_sim_pool(const QueryPoolDesc& desc, TickFormat ticks = {}, bool can_time = true) {
  SimPool p;
  p.device =
      SimTimestampSlots::create({.count = desc.max_queries, .ticks = ticks, .can_time = can_time});
  p.pool = TimestampQueryPool::create(p.device, desc).value();
  return p;
}

SimPool make_pool(uint32_t max_queries = 8) {
  return make_sim_pool(QueryPoolDesc{.max_queries = max_queries, .kind = QueryKind::compute});
}

// Plays the device: writes begin/end for uid's pair.
void complete(SimPool& p, const std::string& u, uint64_t begin, uint64_t end) {
  const auto off = p->query_offset(u);
  ASSERT_TRUE(off.has_value()) << u;
  p.device->complete(*off, begin);
  p.device->complete(*off + 1, end);
}

TEST(QueryPool, DefaultsFollowSeed) {
  auto pool = make_sim_pool(QueryPoolDesc{});
  EXPECT_EQ(pool->max_queries(), 2048u);
  EXPECT_EQ(pool->current_query_index(), 0u);
  EXPECT_TRUE(pool->track_timestamp());
  EXPECT_FALSE(pool->is_disposed());
  EXPECT_FALSE(pool->last_value().has_value());
  EXPECT_FALSE(pool->last_value_frame().has_value());
}

TEST(QueryPool, AllocatesConsecutivePairs) {
  auto pool = make_pool();
  EXPECT_EQ(pool->allocate_queries_for_context(uid(0, 1), 1), 0u);
  EXPECT_EQ(pool->allocate_queries_for_context(uid(1, 1), 1), 2u);
  EXPECT_EQ(pool->current_query_index(), 4u);
  EXPECT_EQ(pool->query_offset(uid(1, 1)), 2u);
  // Same uid again: same pair.
  EXPECT_EQ(pool->allocate_queries_for_context(uid(0, 1), 1), 0u);
  EXPECT_EQ(pool->pairs_in_use(), 2u);
}

TEST(QueryPool, RefusesOtherKindAndMalformedUids) {
  auto pool = make_pool();
  EXPECT_FALSE(pool->allocate_queries_for_context("r:0:pass:f1", 1));
  EXPECT_FALSE(pool->allocate_queries_for_context("c:0:pass", 1));
  EXPECT_FALSE(pool->allocate_queries_for_context("c:0:pass:fx", 1));
  EXPECT_EQ(pool->pairs_in_use(), 0u);
}

// A pair filed under frame_id but looked up under the uid's frame would read
// an ok measurement back as `missing`: a frame_id that disagrees is refused.
TEST(QueryPool, RefusesFrameIdThatDisagreesWithUid) {
  auto pool = make_pool();
  EXPECT_FALSE(pool->allocate_queries_for_context(uid(0, 7), 8));
  EXPECT_EQ(pool->pairs_in_use(), 0u);
  EXPECT_EQ(pool->frame_mismatch_count(), 1u);
  const auto r = pool->timestamp(uid(0, 7));
  EXPECT_EQ(r.status, QueryStatus::invalid);
  EXPECT_EQ(r.frame_id, 7u);
  // The matching call still works and is not counted.
  EXPECT_EQ(pool->allocate_queries_for_context(uid(0, 7), 7), 0u);
  EXPECT_EQ(pool->frame_mismatch_count(), 1u);
  // A mismatched call on a held uid leaves its pending result alone.
  EXPECT_FALSE(pool->allocate_queries_for_context(uid(0, 7), 9));
  EXPECT_EQ(pool->timestamp(uid(0, 7)).status, QueryStatus::not_ready);
  EXPECT_EQ(pool->frame_mismatch_count(), 2u);
}

TEST(QueryPool, NoAllocationWhenTrackingOff) {
  auto pool = make_sim_pool(QueryPoolDesc{.kind = QueryKind::compute}, {}, false);
  EXPECT_FALSE(pool->track_timestamp());
  EXPECT_FALSE(pool->allocate_queries_for_context(uid(0, 1), 1));
}

TEST(QueryPool, ResolvedDurationsMapToTheirUid) {
  auto pool = make_pool();
  pool->allocate_queries_for_context(uid(0, 3), 3);
  pool->allocate_queries_for_context(uid(1, 3), 3);
  complete(pool, uid(0, 3), 1000, 1500);
  complete(pool, uid(1, 3), 2000, 4000);
  auto t = pool->resolve_queries_async();
  ASSERT_TRUE(t.is_ready());
  EXPECT_EQ(t.summary().resolved_ok, 2u);
  EXPECT_EQ(pool->timestamp(uid(0, 3)).duration_ns, 500);
  EXPECT_EQ(pool->timestamp(uid(1, 3)).duration_ns, 2000);
  EXPECT_EQ(pool->timestamp(uid(1, 3)).frame_id, 3u);
  EXPECT_TRUE(pool->has_timestamp_query(uid(0, 3)));
  ASSERT_TRUE(pool->last_value().has_value());
  EXPECT_DOUBLE_EQ(*pool->last_value(), 0.0025);
  EXPECT_EQ(pool->timestamp_frames(), std::vector<uint64_t>{3});
  EXPECT_EQ(pool->pairs_in_use(), 0u);
}

// Two pairs of one frame that each span over half of int64's ns range: the
// frame's total is their sum, not a signed overflow (UBSan stopped
// bench/fuzz/fuzz_uid_pool on it).
TEST(QueryPool, LastValueOfHugeDurationsDoesNotOverflow) {
  auto pool = make_pool();
  pool->allocate_queries_for_context(uid(0, 2), 2);
  pool->allocate_queries_for_context(uid(1, 2), 2);
  constexpr uint64_t kHalf = (uint64_t{1} << 62) + 12345;
  complete(pool, uid(0, 2), 10, 10 + kHalf);
  complete(pool, uid(1, 2), 20, 20 + kHalf);
  ASSERT_TRUE(pool->resolve_queries_async().is_ready());
  ASSERT_TRUE(pool->timestamp(uid(0, 2)).ok());
  ASSERT_TRUE(pool->last_value().has_value());
  EXPECT_DOUBLE_EQ(*pool->last_value(), 2.0 * static_cast<double>(kHalf) / 1e6);
}

TEST(QueryPool, TickPeriodIsHonoured) {
  auto pool = make_sim_pool(QueryPoolDesc{.max_queries = 4, .kind = QueryKind::compute},
                            TickFormat::from_period_ns(41.666668, 64));
  pool->allocate_queries_for_context(uid(0, 1), 1);
  complete(pool, uid(0, 1), 0, 24'000'000);  // one second of 24 MHz ticks
  (void)pool->resolve_queries_async();
  EXPECT_EQ(pool->timestamp(uid(0, 1)).duration_ns, 1'000'000'000);
}

TEST(QueryPool, WrapAroundAt32Bits) {
  auto pool = make_sim_pool(QueryPoolDesc{.max_queries = 4, .kind = QueryKind::compute},
                            TickFormat::from_period_ns(1.0, 32));
  pool->allocate_queries_for_context(uid(0, 1), 1);
  complete(pool, uid(0, 1), 0xFFFFFF00ull, 0x100ull);
  (void)pool->resolve_queries_async();
  const auto r = pool->timestamp(uid(0, 1));
  EXPECT_EQ(r.status, QueryStatus::ok);
  EXPECT_EQ(r.duration_ns, 0x200);
}

TEST(QueryPool, UnwrittenIsNotReadyNotZero) {
  auto pool = make_pool();
  pool->allocate_queries_for_context(uid(0, 1), 1);
  EXPECT_EQ(pool->timestamp(uid(0, 1)).status, QueryStatus::not_ready);
  EXPECT_FALSE(pool->has_timestamp_query(uid(0, 1)));
  pool.device->complete(0, 10);  // begin only
  auto t = pool->resolve_queries_async();
  EXPECT_FALSE(t.is_ready());
  EXPECT_EQ(t.summary().still_pending, 1u);
  EXPECT_EQ(pool->timestamp(uid(0, 1)).status, QueryStatus::not_ready);
  EXPECT_FALSE(pool->last_value().has_value());
}

TEST(QueryPool, UnknownUidIsMissing) {
  auto pool = make_pool();
  EXPECT_EQ(pool->timestamp(uid(9, 9)).status, QueryStatus::missing);
  EXPECT_EQ(pool->timestamp("garbage").status, QueryStatus::missing);
}

TEST(QueryPool, PendingResolveIsSharedUntilDone) {
  auto pool = make_pool();
  pool->allocate_queries_for_context(uid(0, 1), 1);
  auto first = pool->resolve_queries_async();
  ASSERT_FALSE(first.is_ready());
  // A new allocation after the pending resolve started is not part of it.
  pool->allocate_queries_for_context(uid(1, 1), 1);
  auto second = pool->resolve_queries_async();
  EXPECT_TRUE(second.same_as(first));
  complete(pool, uid(0, 1), 5, 9);
  auto third = pool->resolve_queries_async();
  EXPECT_TRUE(third.same_as(first));
  EXPECT_TRUE(first.is_ready());
  EXPECT_EQ(first.summary().resolved_ok, 1u);
  // The next call starts a new resolve, which covers uid(1,1).
  auto fourth = pool->resolve_queries_async();
  EXPECT_FALSE(fourth.same_as(first));
  EXPECT_FALSE(fourth.is_ready());
}

TEST(QueryPool, FullPoolResolvesWrittenPairsAndReuses) {
  auto pool = make_pool(4);  // two pairs
  pool->allocate_queries_for_context(uid(0, 1), 1);
  pool->allocate_queries_for_context(uid(1, 1), 1);
  complete(pool, uid(0, 1), 100, 300);
  complete(pool, uid(1, 1), 400, 700);
  // Full: allocation resolves what is written and reuses the slots.
  const auto off = pool->allocate_queries_for_context(uid(0, 2), 2);
  ASSERT_TRUE(off.has_value());
  EXPECT_EQ(pool->timestamp(uid(0, 1)).duration_ns, 200);
  EXPECT_EQ(pool->timestamp(uid(1, 1)).duration_ns, 300);
  EXPECT_EQ(pool->overflow_count(), 0u);
  EXPECT_GE(pool.device->slots_reset(), 6u);
}

TEST(QueryPool, FullPoolNeverDropsUnreadResults) {
  auto pool = make_pool(4);
  pool->allocate_queries_for_context(uid(0, 1), 1);
  pool->allocate_queries_for_context(uid(1, 1), 1);
  // Nothing written yet: no pair may be reused.
  EXPECT_FALSE(pool->allocate_queries_for_context(uid(2, 1), 1).has_value());
  EXPECT_EQ(pool->timestamp(uid(2, 1)).status, QueryStatus::overflowed);
  EXPECT_EQ(pool->overflow_count(), 1u);
  complete(pool, uid(0, 1), 10, 20);
  complete(pool, uid(1, 1), 30, 50);
  (void)pool->resolve_queries_async();
  EXPECT_EQ(pool->timestamp(uid(0, 1)).duration_ns, 10);
  EXPECT_EQ(pool->timestamp(uid(1, 1)).duration_ns, 20);
}

TEST(QueryPool, LateWriteIntoReusedSlotIsDetected) {
  auto pool = make_pool(2);  // one pair
  pool->allocate_queries_for_context(uid(0, 1), 1);
  pool->retire_frame(1);  // frame 1 finished without writing: its pair frees up
  EXPECT_EQ(pool->timestamp(uid(0, 1)).status, QueryStatus::invalid);
  ASSERT_EQ(pool->allocate_queries_for_context(uid(0, 2), 2), 0u);
  pool.device->complete_late(0, 111);  // frame 1's write lands after the reuse
  pool.device->complete_late(1, 222);
  (void)pool->resolve_queries_async();
  EXPECT_EQ(pool->timestamp(uid(0, 2)).status, QueryStatus::invalid);
  EXPECT_EQ(pool->late_result_count(), 1u);
}

TEST(QueryPool, LateWriteDetectedByTickFloorWithoutGenerations) {
  // A backend that cannot tag writes (generation 0): a begin older than a
  // tick already seen complete is a late write.
  auto pool = make_pool(4);
  pool->allocate_queries_for_context(uid(0, 1), 1);
  complete(pool, uid(0, 1), 1000, 2000);
  (void)pool->resolve_queries_async();
  pool->allocate_queries_for_context(uid(0, 2), 2);
  const uint32_t off = *pool->query_offset(uid(0, 2));
  pool.device->complete_late(off, 500);  // generation older
  pool.device->complete_late(off + 1, 900);
  (void)pool->resolve_queries_async();
  EXPECT_EQ(pool->timestamp(uid(0, 2)).status, QueryStatus::invalid);
}

TEST(QueryPool, EndBeforeBeginIsInvalid) {
  auto pool = make_pool();
  pool->allocate_queries_for_context(uid(0, 1), 1);
  complete(pool, uid(0, 1), 5000, 4000);
  (void)pool->resolve_queries_async();
  EXPECT_EQ(pool->timestamp(uid(0, 1)).status, QueryStatus::invalid);
}

TEST(QueryPool, DisjointIsReported) {
  auto pool = make_pool();
  pool->allocate_queries_for_context(uid(0, 1), 1);
  complete(pool, uid(0, 1), 10, 20);
  pool.device->mark_disjoint(1);
  (void)pool->resolve_queries_async();
  EXPECT_EQ(pool->timestamp(uid(0, 1)).status, QueryStatus::disjoint);
  EXPECT_FALSE(pool->last_value().has_value());
}

TEST(QueryPool, LastValueIsNewestCompleteFrame) {
  auto pool = make_pool(16);
  for (uint64_t f = 1; f <= 2; ++f) {
    pool->allocate_queries_for_context(uid(0, f), f);
    pool->allocate_queries_for_context(uid(1, f), f);
  }
  complete(pool, uid(0, 1), 0, 1'000'000);
  complete(pool, uid(1, 1), 1'000'000, 3'000'000);
  complete(pool, uid(0, 2), 4'000'000, 5'000'000);  // frame 2 half done
  (void)pool->resolve_queries_async();
  ASSERT_TRUE(pool->last_value().has_value());
  EXPECT_DOUBLE_EQ(*pool->last_value(), 3.0);
  // The fallback to an older frame says which frame it is.
  EXPECT_EQ(pool->last_value_frame(), 1u);
  complete(pool, uid(1, 2), 5'000'000, 9'000'000);
  (void)pool->resolve_queries_async();
  const auto t = pool->resolve_queries_async();
  EXPECT_DOUBLE_EQ(*pool->last_value(), 5.0);
  EXPECT_EQ(pool->last_value_frame(), 2u);
  EXPECT_EQ(t.summary().last_value_frame, 2u);
  EXPECT_EQ(pool->timestamp_frames(), (std::vector<uint64_t>{1, 2}));
}

TEST(QueryPool, ResultMapIsBounded) {
  auto pool = make_sim_pool(
      QueryPoolDesc{.max_queries = 4, .kind = QueryKind::compute, .retained_frames = 3});
  for (uint64_t f = 1; f <= 50; ++f) {
    ASSERT_TRUE(pool->allocate_queries_for_context(uid(0, f), f).has_value());
    complete(pool, uid(0, f), f * 100, f * 100 + 10);
    (void)pool->resolve_queries_async();
  }
  EXPECT_EQ(pool->timestamp_frames(), (std::vector<uint64_t>{48, 49, 50}));
  EXPECT_EQ(pool->timestamp(uid(0, 1)).status, QueryStatus::missing);
  EXPECT_EQ(pool->timestamp(uid(0, 50)).duration_ns, 10);
}

TEST(QueryPool, DisposeStopsEverything) {
  auto pool = make_pool();
  pool->allocate_queries_for_context(uid(0, 1), 1);
  pool->dispose();
  EXPECT_TRUE(pool->is_disposed());
  EXPECT_FALSE(pool->allocate_queries_for_context(uid(1, 1), 1).has_value());
  EXPECT_TRUE(pool->resolve_queries_async().is_ready());
  pool->dispose();  // idempotent
}

TEST(TickFormat, RationalPeriods) {
  const auto f = TickFormat::from_period_ns(41.666668, 64);
  EXPECT_EQ(f.period_num, 125u);
  EXPECT_EQ(f.period_den, 3u);
  const auto g = TickFormat::from_period_ns(1.0, 36);
  EXPECT_EQ(g.period_num, 1u);
  EXPECT_EQ(g.mask(), (1ull << 36) - 1);
  EXPECT_EQ(g.span_ns((1ull << 36) - 5, 5), 10);
  // Exact over long spans: 10 hours of 24 MHz ticks.
  EXPECT_EQ(f.ticks_to_ns(24'000'000ull * 36'000), 36'000'000'000'000);
}

// Half a wrap apart is -2^(bits-1), the bottom of the range; with 64 valid
// bits that is INT64_MIN, which negating a distance overflowed (the fuzzer's
// uid_pool target found it under UBSan).
TEST(TickFormat, SignedDeltaAtHalfAWrap) {
  const auto t64 = TickFormat::from_period_ns(1.0, 64);
  EXPECT_EQ(t64.signed_delta(1ull << 63, 0), INT64_MIN);
  EXPECT_EQ(t64.signed_delta(0, 1ull << 63), INT64_MIN);
  EXPECT_EQ(t64.signed_delta(5, 2), -3);
  EXPECT_EQ(t64.signed_delta(2, 5), 3);
  EXPECT_FALSE(t64.before(0, 1ull << 63));
  const auto t36 = TickFormat::from_period_ns(1.0, 36);
  EXPECT_EQ(t36.signed_delta(1ull << 35, 0), -(int64_t{1} << 35));
  EXPECT_EQ(t36.signed_delta((1ull << 36) - 2, 3), 5);
  EXPECT_EQ(t36.signed_delta(3, (1ull << 36) - 2), -5);
}

}  // namespace
}  // namespace latlab
