#include <gtest/gtest.h>

#include <cstdint>

#include "capture/span_budget.hpp"

namespace latlab::capture {
namespace {

constexpr int64_t kMs = 1'000'000;

// Simulates a program that submits `per_frame` times a frame, one frame
// every `frame_ns`, for `frames` frames; returns the timed submissions.
uint64_t timed(SpanBudget& b, int frames, int per_frame, int64_t frame_ns,
               bool per_frame_decision) {
  uint64_t n = 0;
  for (int f = 0; f < frames; ++f) {
    for (int s = 0; s < per_frame; ++s) {
      const int64_t now = f * frame_ns + s;
      if (per_frame_decision ? b.take_in_frame(static_cast<uint64_t>(f + 1), now)
                             : b.take_submission(now))
        ++n;
    }
  }
  return n;
}

TEST(SpanBudget, ACheapSpanTimesEverySubmission) {
  // 20 us a span, 16.7-ms frames, 5 submissions: 0.6 % of the time, under 2 %.
  SpanBudget b(0.02, 20'000, 0);
  EXPECT_EQ(timed(b, 1000, 5, 16'700'000, true), 5000U);
}

TEST(SpanBudget, ADearSpanIsTimedWithinItsShareOverALongRun) {
  // 20 us a span, 126-us frames of one submission: every span would cost
  // 16 % of the time; a 2 % budget times about one in eight.
  SpanBudget b(0.02, 20'000, 0);
  const int frames = 100'000;  // 12.6 s
  const uint64_t n = timed(b, frames, 1, 126'000, true);
  const double cost_share = static_cast<double>(n) * 20'000 / (frames * 126'000.0);
  EXPECT_GT(cost_share, 0.018);
  EXPECT_LE(cost_share, 0.0201 + 64.0 * 20'000 / (frames * 126'000.0));  // + the first burst
}

TEST(SpanBudget, AFrameIsTimedWholeOrNotAtAll) {
  SpanBudget b(0.02, 20'000, 0);
  for (int f = 1; f <= 2000; ++f) {
    const bool first = b.take_in_frame(static_cast<uint64_t>(f), f * 200'000);
    for (int s = 1; s < 4; ++s)
      ASSERT_EQ(b.take_in_frame(static_cast<uint64_t>(f), f * 200'000 + s), first) << "frame " << f;
  }
}

TEST(SpanBudget, TheFirstSpansOfAProgramAreTimed) {
  // A short program gets its spans: the bucket starts full (kBurstSpans).
  SpanBudget b(0.02, 100'000, 0);
  EXPECT_EQ(timed(b, SpanBudget::kBurstSpans, 1, 1000, false),
            static_cast<uint64_t>(SpanBudget::kBurstSpans));
  EXPECT_FALSE(b.take_submission(2 * kMs));
}

TEST(SpanBudget, AnIdleProgramDoesNotSaveMoreThanABurst) {
  SpanBudget b(0.02, 100'000, 0);
  const int64_t hour = 3600 * 1000 * kMs;
  uint64_t n = 0;
  for (int i = 0; i < 1000; ++i) n += b.take_submission(hour + i) ? 1 : 0;
  EXPECT_EQ(n, static_cast<uint64_t>(SpanBudget::kBurstSpans));
}

// A program that presents, whose submissions take sub_ns each plus real_ns
// when timed; returns the share of its time that timing cost it.
double real_share(SpanBudget& b, int frames, int per_frame, int64_t sub_ns, int64_t real_ns) {
  int64_t t = 0;
  int64_t spent = 0;
  for (int f = 1; f <= frames; ++f) {
    for (int s = 0; s < per_frame; ++s) {
      const bool timed = b.take_in_frame(static_cast<uint64_t>(f), t);
      t += sub_ns + (timed ? real_ns : 0);
      spent += timed ? real_ns : 0;
    }
  }
  return static_cast<double>(spent) / static_cast<double>(t);
}

TEST(SpanBudget, ASpanDearerThanTheProbeSaidIsPricedFromTheProgramsFrames) {
  // The probe says 20 us, a span costs the program 60 us: priced at the
  // probe's figure the spans would cost 6 % of its time, not 2 %.
  SpanBudget b(0.02, 20'000, 0);
  const double share = real_share(b, 50'000, 2, 100'000, 60'000);
  EXPECT_GT(share, 0.015);
  EXPECT_LT(share, 0.026);
  EXPECT_GT(b.cost_ns(), 45'000);
  EXPECT_LT(b.cost_ns(), 75'000);
  EXPECT_EQ(b.probe_cost_ns(), 20'000);
  EXPECT_EQ(b.price_from(), SpanPriceFrom::frames);
}

TEST(SpanBudget, FramesOfAFixedLengthKeepTheProbesPrice) {
  // Frames paced by the display take as long timed or not.
  SpanBudget b(0.02, 20'000, 0);
  for (int f = 1; f <= 20'000; ++f)
    (void)b.take_in_frame(static_cast<uint64_t>(f), int64_t{f} * 200'000);
  EXPECT_EQ(b.cost_ns(), 20'000);
}

TEST(SpanBudget, TheLearntPriceIsHeldToAMultipleOfTheProbes) {
  // 400 us against the probe's 20: priced at 8 times the probe's at most.
  SpanBudget b(0.02, 20'000, 0);
  (void)real_share(b, 50'000, 1, 100'000, 400'000);
  EXPECT_EQ(b.cost_ns(), static_cast<int64_t>(20'000 * SpanBudget::kMaxPriceOverProbe));
}

TEST(SpanBudget, SubmissionsBeforeAPresentAreDecidedInBlocks) {
  SpanBudget b(0.02, 20'000, 0);
  for (int64_t block = 0; block < 500; ++block) {
    const int64_t start = block * SpanBudget::kBlockSubmissions * 126'000;
    const bool first = b.take_submission(start);
    for (int64_t s = 1; s < SpanBudget::kBlockSubmissions; ++s)
      ASSERT_EQ(b.take_submission(start + s * 126'000), first) << "block " << block;
  }
}

// A program that never presents and waits for each submission: one takes
// sub_ns, and timing one costs real_ns, paid in the wait of the next one.
// Returns the share of its time that timing cost it.
double waiting_share(SpanBudget& b, int submissions, int64_t sub_ns, int64_t real_ns) {
  int64_t t = 0;
  int64_t spent = 0;
  bool owed = false;
  for (int i = 0; i < submissions; ++i) {
    const bool timed = b.take_submission(t);
    const int64_t cost = owed ? real_ns : 0;
    t += sub_ns + cost;
    spent += cost;
    owed = timed;
  }
  return static_cast<double>(spent) / static_cast<double>(t);
}

TEST(SpanBudget, ASpanDearerThanTheProbeSaidIsPricedFromTheProgramsSubmissions) {
  // The probe says 7 us, a span costs the program 21 us (as a replay on an
  // H100): priced at the probe's figure the spans would cost 6 %.
  SpanBudget b(0.02, 7'000, 0);
  const double share = waiting_share(b, 200'000, 140'000, 21'000);
  EXPECT_GT(share, 0.015);
  EXPECT_LT(share, 0.026);
  EXPECT_GT(b.cost_ns(), 17'000);
  EXPECT_LT(b.cost_ns(), 25'000);
  EXPECT_EQ(b.price_from(), SpanPriceFrom::submissions);
}

TEST(SpanBudget, APaceThatChangesIsNoPrice) {
  // Spans that cost nothing, in a program that runs 1000 frames of 100 us,
  // then 1000 of 300 us, and so on: the budget times more of the long
  // frames, which must not make a price of their length.
  SpanBudget b(0.02, 20'000, 0);
  int64_t t = 0;
  for (int f = 1; f <= 20'000; ++f) {
    (void)b.take_in_frame(static_cast<uint64_t>(f), t);
    t += (f / 1000) % 2 == 0 ? 100'000 : 300'000;
  }
  EXPECT_LT(b.cost_ns(), 30'000);
}

TEST(SpanBudget, TheSettingReadsAllOrAPercent) {
  EXPECT_DOUBLE_EQ(*span_budget_share(nullptr), kDefaultSpanBudgetPercent / 100);
  EXPECT_FALSE(span_budget_share("all").has_value());
  EXPECT_FALSE(span_budget_share("100").has_value());
  EXPECT_DOUBLE_EQ(*span_budget_share("0.5"), 0.005);
  EXPECT_DOUBLE_EQ(*span_budget_share("5"), 0.05);
  for (const char* bad : {"", "x", "0", "-1", "101", "nan", "2%", "3 "})
    EXPECT_DOUBLE_EQ(*span_budget_share(bad), kDefaultSpanBudgetPercent / 100) << bad;
}

}  // namespace
}  // namespace latlab::capture
