// The field tables of the result (src/report/result_fields.hpp) against
// docs/result-schema.md: each section's table in the doc names exactly the
// table's keys, in order; and the tables' quirks read and write as declared.
#include "report/result_fields.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace latlab {
namespace {

using fields::json;

// The backticked names in the first column of the first table after the
// line of docs/`file` that starts with `anchor` ("### `clock_model`").
std::vector<std::string> doc_keys(const std::string& anchor,
                                  const char* file = "result-schema.md") {
  const std::filesystem::path doc = std::filesystem::path(LATLAB_SOURCE_DIR) / "docs" / file;
  std::ifstream in(doc);
  EXPECT_TRUE(in) << doc;
  std::string line;
  bool under = false;
  bool in_table = false;
  std::vector<std::string> keys;
  int row = 0;
  while (std::getline(in, line)) {
    if (!under) {
      under = line.starts_with(anchor);
      continue;
    }
    if (!line.starts_with("|")) {
      if (in_table) break;
      continue;
    }
    in_table = true;
    if (row++ < 2) continue;  // the header and its rule
    const std::string first = line.substr(1, line.find('|', 1) - 1);
    for (size_t a = first.find('`'); a != std::string::npos; a = first.find('`', a + 1)) {
      const size_t b = first.find('`', a + 1);
      keys.push_back(first.substr(a + 1, b - a - 1));
      a = b;
    }
  }
  EXPECT_TRUE(in_table) << "no table after " << anchor;
  return keys;
}

// The keys of tables in order (a section spread over several tables); a
// spread() field (no key) is left out: its table is named beside it.
template <class... Tables>
std::vector<std::string> table_keys(const Tables&... tables) {
  std::vector<std::string> out;
  (
      [&] {
        for (const auto& f : tables)
          if (!f.key.empty()) out.emplace_back(f.key);
      }(),
      ...);
  return out;
}

TEST(ResultFieldsSchema, DocNamesEveryKeyOfEachTable) {
  EXPECT_EQ(doc_keys("### `machine`"), table_keys(fields::kMachineFields));
  EXPECT_EQ(doc_keys("### `device`"),
            table_keys(fields::kDeviceIdentityFields, fields::kDeviceFields));
  EXPECT_EQ(doc_keys("### `clock_model`"), table_keys(fields::kClockModelFields));
  EXPECT_EQ(doc_keys("### `settings`"),
            table_keys(fields::kRunSettingsFields, fields::kLatencySettingsFields));
  EXPECT_EQ(doc_keys("#### `settings.timer_slack`"), table_keys(fields::kTimerSlackFields));
  std::vector<std::string> present = table_keys(fields::kPresentFields);
  present.back() += "[]";
  EXPECT_EQ(doc_keys("### `present`"), present);
  EXPECT_EQ(doc_keys("#### `modes.<mode>.gpu_target`"), table_keys(fields::kGpuTargetFields));
  EXPECT_EQ(doc_keys("#### `gpu_target.warmup_check`"), table_keys(fields::kWarmupCheckFields));
  EXPECT_EQ(doc_keys("#### `missing_markers`"), table_keys(fields::kMissingMarkerFields));
  EXPECT_EQ(doc_keys("#### `workload`"), table_keys(fields::kWorkloadFields));
  std::vector<std::string> load = table_keys(fields::kLoadCalibrationFields);
  load.insert(load.end(), {"source", "size"});  // the run's, beside the report
  EXPECT_EQ(doc_keys("### `load_calibration`"), load);
  EXPECT_EQ(doc_keys("#### `load_calibration.steps[]`"), table_keys(fields::kLoadStepFields));
  EXPECT_EQ(doc_keys("#### `load_calibration.size`"), table_keys(fields::kLoadSizeFields));
  EXPECT_EQ(doc_keys("### `modes.performance`"), table_keys(fields::kPerformanceFields));
  EXPECT_EQ(doc_keys("## Per-frame series in the result"), table_keys(fields::kPerFrameFields));
  EXPECT_EQ(doc_keys("#### `per_frame.modes.<mode>`"), table_keys(fields::kPerFrameModeFields));
  // devices_run's keys, then a section's ("sections[].status").
  std::vector<std::string> devices = doc_keys("### `devices_run`");
  for (std::string& k : devices)
    if (k.starts_with("sections[].")) k = k.substr(11);
  EXPECT_EQ(devices, table_keys(fields::kDevicesRunFields, fields::kSectionFields));
  EXPECT_EQ(doc_keys("### `score`"), table_keys(fields::kScoreFields));
  EXPECT_EQ(doc_keys("#### `score.components[]`"), table_keys(fields::kScoreComponentFields));
  EXPECT_EQ(doc_keys("#### `score.interval`"), table_keys(fields::kScoreIntervalFields));
  EXPECT_EQ(doc_keys("#### `program`", "capture.md"), table_keys(fields::kCapturedProgramFields));
  EXPECT_EQ(doc_keys("#### `capture`", "capture.md"), table_keys(fields::kCaptureStopFields));
  EXPECT_EQ(doc_keys("#### `sources[]`", "capture.md"), table_keys(fields::kCaptureSourceFields));
  EXPECT_EQ(doc_keys("#### `unavailable[]`", "capture.md"),
            table_keys(fields::kCaptureUnavailableFields));
  EXPECT_EQ(doc_keys("#### `screen_observers[]`", "capture.md"),
            table_keys(fields::kScreenObserverFields));
  EXPECT_EQ(doc_keys("#### `input`", "capture.md"), table_keys(fields::kCaptureInputFields));
  EXPECT_EQ(doc_keys("#### `display`", "capture.md"), table_keys(fields::kDisplayFields));
  EXPECT_EQ(doc_keys("#### `display.flags`", "capture.md"), table_keys(fields::kDisplayFlagFields));
  EXPECT_EQ(doc_keys("#### `overhead`", "capture.md"),
            table_keys(fields::kLayerCostFields, fields::kOverheadFields));
  EXPECT_EQ(doc_keys("#### `bracketing[]`", "capture.md"), table_keys(fields::kBracketingFields));
  EXPECT_EQ(doc_keys("#### `bracketing[].before_us`", "capture.md"),
            table_keys(fields::kBracketBeforeFields));
  EXPECT_EQ(table_keys(fields::kBracketAfterFields), table_keys(fields::kBracketBeforeFields));
  EXPECT_EQ(doc_keys("### `block_order[]`"), table_keys(fields::kBlockOrderFields));
  EXPECT_EQ(doc_keys("### `modes.<mode>`"), table_keys(fields::kModeFields));
  EXPECT_EQ(doc_keys("#### `modes.<mode>.total`"),
            table_keys(fields::kSeriesFields, fields::kModeTotalFields));
  EXPECT_EQ(doc_keys("#### `modes.<mode>.observers`"), table_keys(fields::kModeObserverFields));
  const std::vector<std::string> not_run = doc_keys("#### A mode that did not run");
  EXPECT_EQ(not_run, table_keys(fields::kLoadedUnavailableFields));
  EXPECT_EQ(std::vector<std::string>(not_run.begin(), not_run.begin() + 2),
            table_keys(fields::kPerformanceUnavailableFields));
  EXPECT_EQ(doc_keys("#### `diagnostics.bare_loop`"),
            table_keys(fields::kSeriesFields, fields::kBareLoopFields));
  // A block's table: its series (each stage by name), then the block's own keys.
  std::vector<std::string> block, stages;
  for (const std::string& k : doc_keys("A block (and `total`) holds:")) {
    if (!k.starts_with("stages.")) {
      block.push_back(k);
      continue;
    }
    if (stages.empty()) block.push_back("stages");
    stages.push_back(k.substr(7));
  }
  EXPECT_EQ(block, table_keys(fields::kSeriesFields, fields::kBlockFields));
  ASSERT_EQ(stages.size(), kStageCount);
  for (size_t i = 0; i < kStageCount; ++i) EXPECT_EQ(stages[i], to_string(static_cast<Series>(i)));
}

TEST(ResultFieldsSchema, EmptyTextIsWrittenNullAndReadBackEmpty) {
  MachineInfo m;
  m.hostname = "h";
  m.kernel = "k";
  m.arch = "x86_64";
  m.logical_cpus = 4;
  const json j = fields::write_object(m, fields::kMachineFields);
  EXPECT_TRUE(j.at("os").is_null());
  EXPECT_TRUE(j.at("cpu_model").is_null());
  const reading::Obj o(j, "machine");
  EXPECT_EQ(fields::read_object<MachineInfo>(o, fields::kMachineFields), m);
}

TEST(ResultFieldsSchema, RequiredKeyMissingNamesItsPath) {
  const json j = {{"hostname", "h"}, {"os", nullptr}, {"arch", "a"}};
  try {
    (void)fields::read_object<MachineInfo>(reading::Obj(j, "machine"), fields::kMachineFields);
    FAIL() << "read a machine without kernel";
  } catch (const reading::BadResult& e) {
    EXPECT_EQ(e.message, "machine.kernel: missing");
  }
}

TEST(ResultFieldsSchema, NullOnlyWhereTheTableWritesIt) {
  // hostname is never written null; os is.
  const json j = {{"hostname", nullptr}, {"os", nullptr},    {"kernel", "k"},
                  {"arch", "a"},         {"cpu_model", "c"}, {"logical_cpus", 1}};
  try {
    (void)fields::read_object<MachineInfo>(reading::Obj(j, "machine"), fields::kMachineFields);
    FAIL() << "read a null hostname";
  } catch (const reading::BadResult& e) {
    EXPECT_EQ(e.message, "machine.hostname: expected a string, found null");
  }
}

TEST(ResultFieldsSchema, KeysOlderDocumentsLackKeepTheirDefaults) {
  const json j = {{"available", false}};
  const ClockModelReport c = fields::read_object<ClockModelReport>(reading::Obj(j, "clock_model"),
                                                                   fields::kClockModelFields);
  EXPECT_EQ(c, ClockModelReport{});
  const TimerSlack t = fields::read_object<TimerSlack>(
      reading::Obj(json{{"requested", true}, {"previous_ns", nullptr}}, "t"),
      fields::kTimerSlackFields);
  EXPECT_TRUE(t.requested);
  EXPECT_EQ(t.previous_ns, -1);
}

TEST(ResultFieldsSchema, RecordErrorsNameTheElement) {
  const json j = {{"available", true},
                  {"pairs", json::array({{{"device_ticks", 1},
                                          {"host_ns", 2},
                                          {"max_deviation_ns", "3"},
                                          {"estimated", false}}})}};
  try {
    (void)fields::read_object<ClockModelReport>(reading::Obj(j, "clock_model"),
                                                fields::kClockModelFields);
    FAIL() << "read a string deviation";
  } catch (const reading::BadResult& e) {
    EXPECT_EQ(e.message,
              "clock_model.pairs[0].max_deviation_ns: expected an integer, found a string");
  }
}

TEST(ResultFieldsSchema, ASpreadTablesKeysSitAmongTheOwners) {
  BlockResult b;
  b.kind = BlockKind::bare_loop;
  b.index = 2;
  b.series[static_cast<size_t>(Series::core_latency)].count = 3;
  const json j = fields::write_object(b, fields::kBlockFields);
  EXPECT_EQ(j.begin().key(), "stages");
  EXPECT_EQ(j.at("core_latency").at("count"), 3);
  EXPECT_TRUE(j.contains("latency"));  // a bare-loop block's only
  BlockResult back = fields::read_object<BlockResult>(reading::Obj(j, "b"), fields::kBlockFields);
  back.kind = BlockKind::bare_loop;
  EXPECT_EQ(back, b);
  b.kind = BlockKind::measured;
  EXPECT_FALSE(fields::write_object(b, fields::kBlockFields).contains("latency"));
}

TEST(ResultFieldsSchema, OffTargetIsReadIntoTheTargetThatFollows) {
  const LatencyRun run;  // no present path
  fields::ModeDoc d{{}, {}, &run};
  d.mode.gpu_target.emplace().off_target = true;
  json j = fields::write_object(d, fields::kModeFields);
  EXPECT_EQ(j.at("off_target"), true);
  fields::ModeDoc back{{}, {}, &run};
  fields::read_fields(reading::Obj(j, "m"), fields::kModeFields, back);
  EXPECT_EQ(back.mode.gpu_target, d.mode.gpu_target);
  j["gpu_target"] = nullptr;  // no target: off_target false, read as none
  j["off_target"] = false;
  fields::ModeDoc none{{}, {}, &run};
  fields::read_fields(reading::Obj(j, "m"), fields::kModeFields, none);
  EXPECT_FALSE(none.mode.gpu_target.has_value());
}

TEST(ResultFieldsSchema, ColumnsOfOneLengthOrAnError) {
  CaptureFrameTimes t;
  t.frames_per_bucket = 2;
  t.buckets = {{0.0, 2, 1.0, 2.0, 3.0}, {0.5, 1, 4.0, 4.0, 4.0}};
  json j = fields::write_object(t, fields::kFrameTimeFields);
  EXPECT_EQ(j.at("mean_us"), json::array({2.0, 4.0}));
  EXPECT_EQ(fields::read_object<CaptureFrameTimes>(reading::Obj(j, "frame_times"),
                                                   fields::kFrameTimeFields),
            t);
  j["max_us"].erase(1);
  try {
    (void)fields::read_object<CaptureFrameTimes>(reading::Obj(j, "frame_times"),
                                                 fields::kFrameTimeFields);
    FAIL() << "read columns of two lengths";
  } catch (const reading::BadResult& e) {
    EXPECT_EQ(e.message, "frame_times.max_us: the columns differ in length");
  }
}

}  // namespace
}  // namespace latlab
