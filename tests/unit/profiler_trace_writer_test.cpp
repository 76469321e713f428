// ChromeTraceWriter (profiler_trace.hpp): the streamed trace holds the spans
// ChromeTrace holds, in lanes that nest, with memory bounded by its window;
// it is committed at close, marked partial by close_partial, never left
// half-written under its name, and written through to a FIFO or /dev/null.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "fifo_reader.hpp"
#include "latlab/profiler_trace.hpp"
#include "temp_dir.hpp"
#include "trace_lanes.hpp"

namespace latlab {
namespace {

using nlohmann::json;
using test::slurp;

struct TempDir : test::TempDir {
  TempDir() : test::TempDir("latlab-trace-writer-test") {}
};

// (name, begin us, end us) of one span as the file has it.
using SpanKey = std::tuple<std::string, double, double>;

struct Parsed {
  // Per track (lane names without " #k"): every span, sorted.
  std::map<std::string, std::vector<SpanKey>> spans;
  // Per lane name: its B/E events in file order ("B name ts" / "E name ts").
  std::map<std::string, std::vector<std::string>> lanes;
};

// Checks every lane: B/E matched by name, nested, ts non-decreasing in file
// order, nothing left open; returns the spans per track and the lanes.
Parsed parse_trace(const json& doc) {
  Parsed p;
  test::walk_trace_lanes(
      doc, [&](int pid, const std::string& thread, const std::string& ph, const std::string& name,
               double ts, std::optional<double> begin_ts) {
        const std::string lane = std::to_string(pid) + "/" + thread;
        p.lanes[lane].push_back(ph + " " + name + " " + std::to_string(ts));
        if (!begin_ts) return;
        const size_t hash = lane.rfind(" #");
        const std::string track = hash == std::string::npos ? lane : lane.substr(0, hash);
        p.spans[track].emplace_back(name, *begin_ts, ts);
      });
  for (auto& [track, v] : p.spans) std::sort(v.begin(), v.end());
  return p;
}

json read_json(const std::filesystem::path& p) { return json::parse(slurp(p)); }

// One random span: nested runs and overlapping siblings over a few tracks,
// arriving out of order (mostly a little, sometimes far).
struct RandomSpan {
  std::string track;
  std::string name;
  int64_t begin_ns;
  int64_t end_ns;
  bool gpu;
};

std::vector<RandomSpan> random_spans(uint32_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  std::vector<RandomSpan> out;
  const char* tracks[] = {"CPU main", "GPU q (thread 1)", "CPU thread 2"};
  int64_t t = 0;
  while (out.size() < n) {
    const int track = static_cast<int>(rng() % 3);
    const int64_t len = 1000 + static_cast<int64_t>(rng() % 50000);
    // A parent and up to three children, some overlapping each other.
    out.push_back({tracks[track], "p" + std::to_string(out.size()), t, t + len, track == 1});
    const int kids = static_cast<int>(rng() % 4);
    for (int k = 0; k < kids; ++k) {
      const int64_t b = t + static_cast<int64_t>(rng() % static_cast<uint64_t>(len));
      const int64_t e = std::min(t + len, b + static_cast<int64_t>(rng() % 20000));
      out.push_back({tracks[track], "c" + std::to_string(out.size()), b, e, track == 1});
    }
    t += static_cast<int64_t>(rng() % 40000);  // the next parent may overlap this one
  }
  // Arrival order: shuffled within runs of 8, and one span in 50 moved far back.
  for (size_t i = 0; i + 8 <= out.size(); i += 8)
    std::shuffle(out.begin() + static_cast<long>(i), out.begin() + static_cast<long>(i + 8), rng);
  for (size_t i = 0; i < out.size(); ++i) {
    if (rng() % 50 == 0 && i > 200) std::swap(out[i], out[i - 100 - rng() % 100]);
  }
  return out;
}

TEST(ChromeTraceWriter, StreamedSpansPerTrackMatchTheWholeTraceForRandomInput) {
  TempDir dir;
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    const auto input = random_spans(seed, 2000);
    ChromeTrace whole;
    // A small window: late spans cross its edge; a window as large as the
    // input: the same lanes as the whole trace, event for event.
    ChromeTraceWriter small({.window_spans = 16});
    ChromeTraceWriter large({.window_spans = 100000});
    const auto small_path = dir.path / "small.json";
    const auto large_path = dir.path / "large.json";
    ASSERT_TRUE(small.open(small_path.string()).ok());
    ASSERT_TRUE(large.open(large_path.string()).ok());
    for (const auto& s : input) {
      whole.add_span(s.track, s.name, s.begin_ns, s.end_ns, s.gpu);
      ASSERT_TRUE(small.add_span(s.track, s.name, s.begin_ns, s.end_ns, s.gpu));
      ASSERT_TRUE(large.add_span(s.track, s.name, s.begin_ns, s.end_ns, s.gpu));
    }
    ASSERT_TRUE(small.close().ok());
    ASSERT_TRUE(large.close().ok());
    const Parsed want = parse_trace(json::parse(whole.to_json()));
    const Parsed got_small = parse_trace(read_json(small_path));
    const Parsed got_large = parse_trace(read_json(large_path));
    EXPECT_EQ(got_small.spans, want.spans) << "seed " << seed;
    EXPECT_EQ(got_large.spans, want.spans) << "seed " << seed;
    EXPECT_EQ(got_large.lanes, want.lanes) << "seed " << seed;
    EXPECT_GT(small.spans_late(), 0u) << "seed " << seed << ": the window's edge was not crossed";
    EXPECT_EQ(large.spans_late(), 0u);
    EXPECT_EQ(small.span_count(), input.size());
    EXPECT_EQ(small.spans_refused(), 0u);
  }
}

// 100,000 spans, 312 times the bound: enough to show it holds, and fast
// enough for the unit label under ASan (a million took 62 s in a debug build
// on a loaded 2-CPU machine; bench/trace_bench.cpp streams a million).
TEST(ChromeTraceWriter, ManySpansStayWithinTheWindowAndAllReachTheFile) {
  TempDir dir;
  const auto path = dir.path / "big.json";
  const ChromeTraceWriterDesc desc{.window_spans = 256, .max_open_spans = 64};
  ChromeTraceWriter w(desc);
  ASSERT_TRUE(w.open(path.string()).ok());
  constexpr size_t kFrames = 25000;  // 4 spans each: 100,000
  for (size_t f = 0; f < kFrames; ++f) {
    const auto t = static_cast<int64_t>(f) * 10000;
    // The children come before their frame, as a profiler's sink gives them.
    w.add_span("CPU main", "a", t + 100, t + 4000);
    w.add_span("CPU main", "b", t + 4000, t + 9000);
    w.add_span("CPU main", "b1", t + 5000, t + 6000);
    w.add_span("CPU main", "frame", t, t + 9500);
  }
  const size_t bound = desc.window_spans + desc.max_open_spans;
  EXPECT_LE(w.peak_buffered_spans(), bound);
  EXPECT_GT(w.peak_buffered_spans(), 0u);
  ASSERT_TRUE(w.close().ok());
  EXPECT_EQ(w.buffered_spans(), 0u);
  EXPECT_EQ(w.span_count(), kFrames * 4);
  // Counted while parsing, without holding the document.
  struct Count : json::json_sax_t {
    size_t b = 0;
    bool in_ph = false;
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t& s) override {
      if (in_ph && s == "B") ++b;
      in_ph = false;
      return true;
    }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t& k) override {
      in_ph = k == "ph";
      return true;
    }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
      return false;
    }
  } count;
  std::ifstream in(path);
  ASSERT_TRUE(json::sax_parse(in, &count)) << "the file is not JSON";
  EXPECT_EQ(count.b, kFrames * 4);
}

TEST(ChromeTraceWriter, APartialTraceIsValidAndSaysSo) {
  TempDir dir;
  const auto path = dir.path / "t.json";
  ChromeTraceWriter w;
  ASSERT_TRUE(w.open(path.string()).ok());
  w.add_span("CPU main", "frame", 0, 10000);
  w.add_span("CPU main", "inner", 1000, 2000);
  ASSERT_TRUE(w.close_partial("interrupted (SIGINT) after 1 of 10 frames").ok());
  const json doc = read_json(path);
  EXPECT_EQ(doc.at("otherData").at("partial"), true);
  EXPECT_EQ(doc.at("otherData").at("partial_reason"), "interrupted (SIGINT) after 1 of 10 frames");
  EXPECT_EQ(parse_trace(doc).spans.at("1/CPU main").size(), 2u);

  ChromeTraceWriter whole;
  ASSERT_TRUE(whole.open(path.string()).ok());
  ASSERT_TRUE(whole.close().ok());
  EXPECT_EQ(read_json(path).at("otherData").at("partial"), false);
}

TEST(ChromeTraceWriter, AnUnclosedTraceLeavesTheOldFileAndNoTemporaryFile) {
  TempDir dir;
  const auto path = dir.path / "t.json";
  {
    std::ofstream old(path);
    old << "old content";
  }
  {
    ChromeTraceWriter w({.window_spans = 1});
    ASSERT_TRUE(w.open(path.string()).ok());
    for (int i = 0; i < 100000; ++i) w.add_span("CPU main", "s", i * 10, i * 10 + 5);
    // Gone before close: the spans streamed so far were a temporary file's.
  }
  EXPECT_EQ(slurp(path), "old content");
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path)) ++files;
  EXPECT_EQ(files, 1u) << "a temporary file was left";
}

TEST(ChromeTraceWriter, SpansBeyondTheOpenLimitOrOutsideTheFileAreCountedRefused) {
  TempDir dir;
  ChromeTraceWriter w({.window_spans = 1, .max_open_spans = 2});
  EXPECT_FALSE(w.add_span("CPU main", "before open", 0, 1));
  ASSERT_TRUE(w.open((dir.path / "t.json").string()).ok());
  EXPECT_FALSE(w.add_span("CPU main", "backwards", 10, 5));
  w.add_span("CPU main", "a", 0, 100);
  w.add_span("CPU main", "b", 10, 90);
  w.add_span("CPU main", "c", 20, 80);  // a third open span
  w.add_span("CPU main", "d", 200, 300);
  ASSERT_TRUE(w.close().ok());
  EXPECT_EQ(w.spans_refused(), 3u);
  const json doc = read_json(dir.path / "t.json");
  EXPECT_EQ(doc.at("otherData").at("spans_refused"), 3);
  EXPECT_EQ(parse_trace(doc).spans.at("1/CPU main").size(), 3u);
}

TEST(ChromeTraceWriter, ALateSpanGoesToALaneWhereItNests) {
  TempDir dir;
  const auto path = dir.path / "t.json";
  ChromeTraceWriter w({.window_spans = 2});
  ASSERT_TRUE(w.open(path.string()).ok());
  for (int i = 1; i <= 10; ++i)
    w.add_span("CPU main", "s" + std::to_string(i), i * 100, i * 100 + 50);
  w.add_span("CPU main", "late", 120, 130);  // s1..s8 are written by now
  ASSERT_TRUE(w.close().ok());
  EXPECT_EQ(w.spans_late(), 1u);
  const Parsed p = parse_trace(read_json(path));
  EXPECT_EQ(p.spans.at("1/CPU main").size(), 11u);
  EXPECT_EQ(p.lanes.count("1/CPU main #2"), 1u) << "the late span needs a lane of its own";
  EXPECT_EQ(read_json(path).at("otherData").at("spans_late"), 1);
}

TEST(ChromeTraceWriter, AFifoIsWrittenThroughAsSpansCome) {
  TempDir dir;
  const auto fifo = dir.path / "pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  test::FifoReader reader(fifo, 0);
  ChromeTraceWriter w({.window_spans = 4});
  ASSERT_TRUE(w.open(fifo.string()).ok());
  for (int i = 0; i < 5000; ++i) w.add_span("CPU main", "s", i * 10, i * 10 + 5);
  ASSERT_TRUE(w.close().ok());
  const std::string got = reader.finish();
  const Parsed p = parse_trace(json::parse(got));
  EXPECT_EQ(p.spans.at("1/CPU main").size(), 5000u);
  struct stat st {};
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
}

TEST(ChromeTraceWriter, DevNullIsWrittenThrough) {
  ChromeTraceWriter w;
  ASSERT_TRUE(w.open("/dev/null").ok());
  w.add_span("CPU main", "s", 0, 5);
  ASSERT_TRUE(w.close().ok());
  struct stat st {};
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

}  // namespace
}  // namespace latlab
