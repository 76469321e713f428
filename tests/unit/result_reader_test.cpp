#include "report/result_reader.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "sim_result_doc.hpp"

namespace latlab {
namespace {

using testing::SimRunSpec;
using testing::sim_result_doc;

TEST(ResultReader, ReadsBackWhatTheWriterWrote) {
  LatencyRun run;
  const std::string doc = sim_result_doc(SimRunSpec{.frames = 40, .blocks = 4}, &run);
  Result<ReadResult> r = read_result_json(doc, "doc");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->schema_version, 1);
  EXPECT_EQ(r->kind, "latency_run");
  ASSERT_EQ(r->modes.size(), 1u);
  const ReadMode& m = r->modes[0];
  EXPECT_EQ(m.name, "baseline");
  ASSERT_EQ(m.blocks.size(), 4u);
  EXPECT_EQ(m.total_frames, 40u);
  const Distribution* gpu = m.total.find("gpu_execution");
  ASSERT_NE(gpu, nullptr);
  const Distribution& want = run.modes.at(0).total[static_cast<size_t>(Series::gpu_execution)];
  EXPECT_EQ(gpu->count, want.count);
  EXPECT_DOUBLE_EQ(gpu->p50, want.p50);
  EXPECT_DOUBLE_EQ(gpu->p999, want.p999);
  EXPECT_NE(m.blocks[2].series.find("core_latency"), nullptr);
  EXPECT_EQ(r->seed, 1u);
  EXPECT_EQ(r->text, doc);
}

TEST(ResultReader, EmptyDistributionsStayEmpty) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2}));
  auto& d = j["modes"]["baseline"]["total"]["stages"]["gpu_execution"];
  d["count"] = 0;
  for (const char* k : {"mean", "stddev", "min", "p50", "p90", "p95", "p99", "p99_9", "max"}) d[k] = nullptr;
  Result<ReadResult> r = read_result_json(j.dump(), "doc");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->modes[0].total.find("gpu_execution")->empty());
}

TEST(ResultReader, TruncatedTextIsAClearError) {
  const std::string doc = sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2});
  Result<ReadResult> r = read_result_json(doc.substr(0, doc.size() / 2), "half.json");
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
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2}));
  j["schema_version"] = 2;
  Result<ReadResult> r = read_result_json(j.dump(), "v2.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("schema_version 2 is newer"), std::string::npos)
      << r.error().message;
  j["schema_version"] = "1";
  r = read_result_json(j.dump(), "s.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("schema_version: not an integer"), std::string::npos)
      << r.error().message;
}

TEST(ResultReader, ErrorsNameTheKeyPath) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2}));
  j["modes"]["baseline"]["blocks"][1]["stages"]["gpu_execution"]["p50"] = "fast";
  Result<ReadResult> r = read_result_json(j.dump(), "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("modes.baseline.blocks[1].stages.gpu_execution.p50: expected a number"),
            std::string::npos)
      << r.error().message;
  j = nlohmann::ordered_json::parse(sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2}));
  j["modes"]["baseline"]["total"].erase("core_latency");
  r = read_result_json(j.dump(), "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("modes.baseline.total.core_latency: missing"), std::string::npos)
      << r.error().message;
  for (const char* bad : {"", "[]", "{}", "null", "{\"schema_version\": 1}"}) {
    EXPECT_FALSE(read_result_json(bad, "x").ok()) << bad;
  }
}

TEST(ResultReader, MissingFileIsAnError) {
  Result<ReadResult> r = read_result_file("/nonexistent/latlab.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/nonexistent/latlab.json"), std::string::npos);
}

// Issue 23: a p50 of 1e308 was accepted and `compare` printed it with 300
// digits. Statistics are microseconds of int64 host nanoseconds at most.
TEST(ResultReader, StatisticsBeyondTheHostClockRangeAreRefused) {
  const std::string doc = sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2});
  for (const double bad : {1e308, -1e308, 1e16, -9.3e15}) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(doc);
    j["modes"]["baseline"]["total"]["stages"]["gpu_execution"]["p50"] = bad;
    const Result<ReadResult> r = read_result_json(j.dump(), "x");
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
  const Result<ReadResult> ok = read_result_json(j.dump(), "x");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_DOUBLE_EQ(ok->modes[0].total.find("gpu_execution")->max, 9.2e15);
}

// The reader's model has no use for `per_frame`: it is not kept (the text
// still holds it, for the store and the report).
TEST(ResultReader, PerFrameIsLeftInTheTextNotTheModel) {
  nlohmann::ordered_json j =
      nlohmann::ordered_json::parse(sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2}));
  j["per_frame"] = {{"units", "ns"}, {"modes", {{"baseline", {{"x", {1, 2, 3}}}}}}};
  const std::string text = j.dump();
  const Result<ReadResult> r = read_result_json(text, "x");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->text, text);
  EXPECT_EQ(r->modes.size(), 1u);
  // A key of that name deeper in the document is read as usual.
  j["modes"]["baseline"]["per_frame"] = 1;
  EXPECT_TRUE(read_result_json(j.dump(), "x").ok());
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
  Result<ReadResult> r = read_result_file(file);
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
