#include "report/result_reader.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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

}  // namespace
}  // namespace latlab
