#include "report/result_reader.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "sim_result_doc.hpp"

namespace latlab {
namespace {

using testing::sim_result_doc;
using testing::SimRunSpec;

// The measured block of mode 0 with index `i`.
const BlockResult& measured_block(const LatencyRun& run, uint32_t i) {
  for (const BlockResult& b : run.blocks) {
    if (b.kind == BlockKind::measured && b.mode == 0 && b.index == i) return b;
  }
  throw std::runtime_error("no such block");
}

TEST(ResultReader, ReadsBackWhatTheWriterWrote) {
  LatencyRun run;
  const std::string doc = sim_result_doc(SimRunSpec{.frames = 40, .blocks = 4}, &run);
  Result<ResultDocument> r = read_result_json(doc, "doc");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->schema_version, kResultSchemaVersion);
  EXPECT_EQ(r->result.kind(), "latency_run");
  ASSERT_TRUE(r->result.latency.has_value());
  const LatencyRun& back = *r->result.latency;
  ASSERT_EQ(back.modes.size(), 1u);
  const LatencyModeResult& m = back.modes[0];
  EXPECT_EQ(m.name, "baseline");
  EXPECT_EQ(m.measured_frames, 40u);
  const auto gpu = static_cast<size_t>(Series::gpu_execution);
  EXPECT_TRUE(m.total[gpu] == run.modes.at(0).total[gpu]);
  EXPECT_TRUE(measured_block(back, 2).series == measured_block(run, 2).series);
  EXPECT_TRUE(back.clock_model == run.clock_model);
  EXPECT_EQ(back.desc.schedule.seed, 1u);
  EXPECT_TRUE(back.frames.empty());  // the markers are the CSV's, not the document's
  EXPECT_EQ(r->text, doc);
}

TEST(ResultReader, EmptyDistributionsStayEmpty) {
  nlohmann::ordered_json j =
      nlohmann::ordered_json::parse(sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2}));
  auto& d = j["modes"]["baseline"]["total"]["stages"]["gpu_execution"];
  d["count"] = 0;
  for (const char* k : {"mean", "stddev", "min", "p50", "p90", "p95", "p99", "p99_9", "max"})
    d[k] = nullptr;
  Result<ResultDocument> r = read_result_json(j.dump(), "doc");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(
      r->result.latency->modes[0].total[static_cast<size_t>(Series::gpu_execution)].empty());
}

TEST(ResultReader, TruncatedTextIsAClearError) {
  const std::string doc = sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2});
  Result<ResultDocument> r = read_result_json(doc.substr(0, doc.size() / 2), "half.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("half.json"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("truncated"), std::string::npos) << r.error().message;
}

// Found by fuzz_result_reader: a number too large for a double made
// nlohmann throw out_of_range (not parse_error), which escaped and aborted.
TEST(ResultReader, HugeNumberIsAClearErrorNotACrash) {
  for (const char* text : {"6666627666e66666=", "1e99999", "{\"schema_version\": 1e400}"}) {
    const auto r = read_result_json(text, "huge.json");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.error().message.find("huge.json"), std::string::npos) << r.error().message;
  }
}

TEST(ResultReader, OtherSchemaVersionIsRefused) {
  nlohmann::ordered_json j =
      nlohmann::ordered_json::parse(sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2}));
  j["schema_version"] = kResultSchemaVersion + 1;
  Result<ResultDocument> r = read_result_json(j.dump(), "v3.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(
      r.error().message.find(fmt::format("schema_version {} is newer", kResultSchemaVersion + 1)),
      std::string::npos)
      << r.error().message;
  j["schema_version"] = 0;
  r = read_result_json(j.dump(), "v0.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("schema_version 0 is not supported"), std::string::npos)
      << r.error().message;
  j["schema_version"] = "1";
  r = read_result_json(j.dump(), "s.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("schema_version: not an integer"), std::string::npos)
      << r.error().message;
}

TEST(ResultReader, ErrorsNameTheKeyPath) {
  nlohmann::ordered_json j =
      nlohmann::ordered_json::parse(sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2}));
  j["modes"]["baseline"]["blocks"][1]["stages"]["gpu_execution"]["p50"] = "fast";
  Result<ResultDocument> r = read_result_json(j.dump(), "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(
                "modes.baseline.blocks[1].stages.gpu_execution.p50: expected a number"),
            std::string::npos)
      << r.error().message;
  j = nlohmann::ordered_json::parse(sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2}));
  j["modes"]["baseline"]["total"].erase("core_latency");
  r = read_result_json(j.dump(), "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("modes.baseline.total.core_latency: missing"), std::string::npos)
      << r.error().message;
  // The kind is checked first: a document of another kind is named so.
  r = read_result_json(R"({"schema_version": 2, "kind": "trace", "modes": {}})", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("kind: 'trace' is not a latlab run result (latency_run, "
                                   "performance_run or capture)"),
            std::string::npos)
      << r.error().message;
  for (const char* bad : {"", "[]", "{}", "null", "{\"schema_version\": 1}"}) {
    EXPECT_FALSE(read_result_json(bad, "x").ok()) << bad;
  }
}

TEST(ResultReader, MissingFileIsAnError) {
  Result<ResultDocument> r = read_result_file("/nonexistent/latlab.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/nonexistent/latlab.json"), std::string::npos);
}

// An edited result's absurd statistic (a p50 of 1e308) is refused, not
// printed with 300 digits: statistics are microseconds of int64 host
// nanoseconds at most.
TEST(ResultReader, StatisticsBeyondTheHostClockRangeAreRefused) {
  const std::string doc = sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2});
  for (const double bad : {1e308, -1e308, 1e16, -9.3e15}) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(doc);
    j["modes"]["baseline"]["total"]["stages"]["gpu_execution"]["p50"] = bad;
    const Result<ResultDocument> r = read_result_json(j.dump(), "x");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find("modes.baseline.total.stages.gpu_execution.p50"),
              std::string::npos)
        << r.error().message;
    EXPECT_NE(r.error().message.find("outside what a result can hold"), std::string::npos)
        << r.error().message;
  }
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(doc);
  j["modes"]["baseline"]["blocks"][0]["timer_lateness"]["stddev"] = -1.0;
  EXPECT_FALSE(read_result_json(j.dump(), "x").ok());
  // The extremes a result can hold are read.
  j = nlohmann::ordered_json::parse(doc);
  j["modes"]["baseline"]["total"]["stages"]["gpu_execution"]["max"] = 9.2e15;
  j["modes"]["baseline"]["total"]["timer_lateness"]["min"] = -9.2e15;
  const Result<ResultDocument> ok = read_result_json(j.dump(), "x");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_DOUBLE_EQ(
      ok->result.latency->modes[0].total[static_cast<size_t>(Series::gpu_execution)].max, 9.2e15);
}

// `per_frame` is read into the typed result; compare and the store, which
// have no use for it, skip it (ReadOptions): then even a malformed one is
// left in the text, not read.
TEST(ResultReader, PerFrameIsReadUnlessSkipped) {
  nlohmann::ordered_json j =
      nlohmann::ordered_json::parse(sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2}));
  j["per_frame"] = {{"units", "ns"},
                    {"frames", "measured"},
                    {"modes",
                     {{"baseline",
                       {{"frame_id", {7, 8}},
                        {"block_index", {0, 1}},
                        {"deadline_ns", {100, nullptr}},
                        {"series_ns", {{"core_latency", {5000, nullptr}}}}}}}}};
  Result<ResultDocument> r = read_result_json(j.dump(), "x");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->result.per_frame.has_value());
  const PerFrameMode* m = r->result.per_frame->find("baseline");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->frame_id, (std::vector<uint64_t>{7, 8}));
  EXPECT_EQ(m->deadline_ns[1], std::nullopt);  // null, not 0
  EXPECT_EQ(m->series_ns[static_cast<size_t>(Series::core_latency)][0], 5000);
  // A series the file lacks has no value in any frame.
  EXPECT_EQ(m->series_ns[static_cast<size_t>(Series::poll_cpu)],
            (std::vector<std::optional<int64_t>>{std::nullopt, std::nullopt}));
  j["per_frame"]["modes"]["baseline"]["block_index"] = {0};
  r = read_result_json(j.dump(), "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("per_frame.modes.baseline.block_index"), std::string::npos)
      << r.error().message;
  j["per_frame"] = {{"units", "ns"}, {"modes", {{"baseline", {{"x", {1, 2, 3}}}}}}};
  const std::string text = j.dump();
  r = read_result_json(text, "x", ReadOptions{.per_frame = false});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->result.per_frame.has_value());
  EXPECT_EQ(r->text, text);
  // A key of that name deeper in the document is read as usual.
  j["modes"]["baseline"]["per_frame"] = 1;
  EXPECT_TRUE(read_result_json(j.dump(), "x", ReadOptions{.per_frame = false}).ok());
}

TEST(ResultReader, AFileIsReadWholeAndAPipeToo) {
  const std::string doc = sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2});
  char dir_tmpl[] = "/tmp/latlab-reader-XXXXXX";
  ASSERT_NE(mkdtemp(dir_tmpl), nullptr);
  const std::string file = std::string(dir_tmpl) + "/r.json";
  std::FILE* f = std::fopen(file.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(doc.data(), 1, doc.size(), f);
  std::fclose(f);
  Result<ResultDocument> r = read_result_file(file);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->text, doc);
  const std::string fifo = std::string(dir_tmpl) + "/p.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    std::FILE* w = std::fopen(fifo.c_str(), "wb");
    if (w == nullptr) return;
    std::fwrite(doc.data(), 1, doc.size(), w);
    std::fclose(w);
  });
  r = read_result_file(fifo);
  writer.join();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->text, doc);
  std::remove(fifo.c_str());
  std::remove(file.c_str());
  rmdir(dir_tmpl);
}

}  // namespace
}  // namespace latlab
