// The result reader on several-device results (`devices_run`): each
// section's result read as a whole result, select_device_section, and the
// errors that name the key path inside a section.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/result_reader.hpp"
#include "sim_result_doc.hpp"

namespace latlab {
namespace {

using testing::sim_result_doc;
using testing::SimRunSpec;

// A two-device document: the top level is section 0 (`a`); section 1 is `b`
// or, when `b_failed`, a device that failed to open.
nlohmann::ordered_json two_devices(bool b_failed) {
  auto a = nlohmann::ordered_json::parse(sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2}));
  auto b = nlohmann::ordered_json::parse(
      sim_result_doc(SimRunSpec{.extra_gpu_ns = 50'000, .frames = 20, .blocks = 2}));
  b["device"]["name"] = "second device";
  nlohmann::ordered_json doc = a;
  auto section = [](size_t i, const char* status, nlohmann::ordered_json result) {
    return nlohmann::ordered_json{
        {"section", i},
        {"backend", "sim"},
        {"selector", std::to_string(i)},
        {"name", nullptr},
        {"physical_device", nullptr},
        {"uuid", nullptr},
        {"pci_bus_id", nullptr},
        {"status", status},
        {"failure",
         result.is_null() ? nlohmann::ordered_json("cannot open") : nlohmann::ordered_json()},
        {"result", std::move(result)}};
  };
  doc["devices_run"] = {
      {"interleaving", "block by block"},
      {"top_level_section", 0},
      {"sections",
       {section(0, "ok", a), b_failed ? section(1, "failed", nullptr) : section(1, "ok", b)}}};
  return doc;
}

const Distribution& gpu_total(const RunResult& r) {
  return r.latency->modes.at(0).total[static_cast<size_t>(Series::gpu_execution)];
}

TEST(ResultReaderSections, ReadsEverySectionAndSelectsOne) {
  const Result<ResultDocument> doc = read_result_json(two_devices(false).dump(), "two");
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  const RunResult& r = doc->result;
  ASSERT_EQ(r.sections.size(), 2u);
  EXPECT_EQ(r.top_section, 0u);
  ASSERT_EQ(r.sections[1].result.size(), 1u);
  EXPECT_EQ(r.sections[1].result[0].device.name, "second device");
  const Result<RunResult> second = select_device_section(r, 1);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->device.name, "second device");
  EXPECT_GT(gpu_total(second.value()).p50, gpu_total(r.top_level()).p50 + 40.0);  // 50 us more
  EXPECT_FALSE(select_device_section(r, 2).ok());
}

TEST(ResultReaderSections, AFailedSectionHasNoResult) {
  const Result<ResultDocument> r = read_result_json(two_devices(true).dump(), "two");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->result.sections[1].result.empty());
  EXPECT_EQ(r->result.sections[1].failure, "cannot open");
  const Result<RunResult> s = select_device_section(r->result, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("cannot open"), std::string::npos) << s.error().message;
}

TEST(ResultReaderSections, ErrorsNameThePathInsideASection) {
  auto doc = two_devices(false);
  doc["devices_run"]["sections"][1]["result"]["modes"]["baseline"].erase("total");
  const Result<ResultDocument> r = read_result_json(doc.dump(), "two");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("devices_run.sections[1].result.modes.baseline.total"),
            std::string::npos)
      << r.error().message;
  auto bad_status = two_devices(false);
  bad_status["devices_run"]["sections"][0]["status"] = "fine";
  EXPECT_FALSE(read_result_json(bad_status.dump(), "two").ok());
  auto ok_without_result = two_devices(true);
  ok_without_result["devices_run"]["sections"][1]["status"] = "ok";
  EXPECT_FALSE(read_result_json(ok_without_result.dump(), "two").ok());
}

TEST(ResultReaderSections, AOneDeviceResultHasNoSections) {
  const Result<ResultDocument> r =
      read_result_json(sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2}), "one");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->result.sections.empty());
  EXPECT_FALSE(r->result.top_section.has_value());
  EXPECT_FALSE(select_device_section(r->result, 0).ok());
}

}  // namespace
}  // namespace latlab
