// Several devices end to end: `devices` physical identity, `clocks` and
// `run` with --device all or a list. Sim devices for the logic (two
// simulated devices with different clocks, a fault on one); lavapipe (one
// device) with the validation layer for the real path; tests that need two
// devices of a backend skip with the reason.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli_run_helpers.hpp"

namespace latlab {
namespace {

using e2e::CliResult;
using e2e::CliSplitResult;
using e2e::run_cli;
using e2e::run_cli_split;
using e2e::slurp;
using e2e::TempDir;

constexpr const char* kShortRun =
    "run --backend sim --device all --frames 40 --blocks 2 --warmup 4 --interval-ms 1-2 "
    "--load-complexity 50 --cpu-iterations 100";

std::set<std::string> keys_of(const nlohmann::json& j) {
  std::set<std::string> k;
  for (const auto& [key, v] : j.items()) k.insert(key);
  return k;
}

TEST(DevicesSeveral, EveryEntryHasAPhysicalDevice) {
  const CliSplitResult r = run_cli_split("devices --json");
  if (r.rc == 3) GTEST_SKIP() << "no device on this machine: " << r.err;
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["physical_devices"].is_array());
  std::set<int> ids;
  for (const auto& g : j["physical_devices"]) ids.insert(g["id"].get<int>());
  for (const auto& d : j["devices"]) {
    ASSERT_TRUE(d.contains("uuid") && d.contains("pci_bus_id")) << d.dump();
    ASSERT_TRUE(d["physical_device"].is_number_integer()) << d.dump();
    EXPECT_TRUE(ids.count(d["physical_device"].get<int>())) << d.dump();
  }
  const CliResult text = run_cli("devices");
  EXPECT_NE(text.output.find("physical device #0:"), std::string::npos) << text.output;
}

TEST(ClocksSeveral, SimDevicesEachGetTheirOwnModel) {
  const CliSplitResult r = run_cli_split(
      "clocks --backend sim --device all --seconds 1 --interval-ms 20 --fresh 8 --json "
      "--cross-check --cross-trials 21");
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["per_device"].size(), 2u);
  EXPECT_EQ(j["device"]["name"], j["per_device"][0]["result"]["device"]["name"]);
  // Drifts +4 and -3 ppm: each model finds its own.
  const double d0 = j["per_device"][0]["result"]["drift_ppm"].get<double>();
  const double d1 = j["per_device"][1]["result"]["drift_ppm"].get<double>();
  EXPECT_NEAR(d0, 4.0, j["per_device"][0]["result"]["drift_uncertainty_ppm"].get<double>() + 0.5);
  EXPECT_NEAR(d1, -3.0, j["per_device"][1]["result"]["drift_uncertainty_ppm"].get<double>() + 0.5);
  for (const auto& s : j["per_device"]) {
    EXPECT_EQ(s["status"], "ok");
    EXPECT_TRUE(s["failure"].is_null());
    EXPECT_GT(s["result"]["bound_now_ns"].get<int64_t>(), 0);
  }
  const auto& cc = j["cross_check"];
  EXPECT_TRUE(cc["error"].is_null()) << cc.dump();
  EXPECT_EQ(cc["trials"], 21);
  EXPECT_GT(cc["trials_mapped"].get<int>(), 0);
  EXPECT_TRUE(cc["agree"].is_boolean());
}

TEST(ClocksSeveral, BadListsAreBadInput) {
  for (const char* list : {"0,,1", "0,0", "all,0", "0,"}) {
    const CliResult r = run_cli(std::string("clocks --backend sim --seconds 0.1 --device ") + list);
    EXPECT_EQ(r.rc, 2) << list << ": " << r.output;
  }
  const CliResult none = run_cli("clocks --backend sim --seconds 0.1 --device 0,7");
  EXPECT_EQ(none.rc, 2) << none.output;
}

TEST(RunSeveral, SimDevicesInterleaveWithOneSectionEach) {
  TempDir dir;
  const auto out = dir.path / "r.json";
  const auto one = dir.path / "one.json";
  const CliResult r = run_cli(std::string(kShortRun) + " --out " + out.string());
  ASSERT_EQ(r.rc, 0) << r.output;
  const CliResult single = run_cli(
      "run --backend sim --frames 40 --blocks 2 --warmup 4 --interval-ms 1-2 --load-complexity 50 "
      "--cpu-iterations 100 --out " +
      one.string());
  ASSERT_EQ(single.rc, 0) << single.output;
  const auto j = nlohmann::json::parse(slurp(out));
  const auto s = nlohmann::json::parse(slurp(one));
  // The one-device shape, plus devices_run only.
  std::set<std::string> want = keys_of(s);
  want.insert("devices_run");
  EXPECT_EQ(keys_of(j), want);
  const auto& dr = j["devices_run"];
  EXPECT_EQ(dr["top_level_section"], 0);
  ASSERT_EQ(dr["sections"].size(), 2u);
  std::vector<std::vector<int64_t>> block_starts;
  for (size_t i = 0; i < 2; ++i) {
    const auto& sec = dr["sections"][i];
    EXPECT_EQ(sec["section"], i);
    EXPECT_EQ(sec["status"], "ok");
    EXPECT_EQ(sec["selector"], std::to_string(i));
    EXPECT_EQ(keys_of(sec["result"]), keys_of(s));
    EXPECT_EQ(sec["result"]["modes"]["baseline"]["total"]["frames"], 40);
    EXPECT_EQ(sec["result"]["modes"]["loaded"]["total"]["frames"], 40);
    // Several devices: each block is preceded by the default turn warm-up.
    EXPECT_EQ(sec["result"]["settings"]["turn_warmup_ns"], 250'000'000);
    for (const auto& b : sec["result"]["block_order"]) {
      EXPECT_GE(b["turn_warmup_frames"].get<uint64_t>(), 1u) << b.dump();
      EXPECT_GE(b["turn_warmup_ms"].get<double>(), 250.0) << b.dump();
    }
  }
  // One device: no turn warm-up.
  EXPECT_EQ(s["settings"]["turn_warmup_ns"], 0);
  for (const auto& b : s["block_order"]) EXPECT_EQ(b["turn_warmup_frames"], 0) << b.dump();
  EXPECT_NE(dr["sections"][0]["result"]["device"]["name"],
            dr["sections"][1]["result"]["device"]["name"]);
  // compare and report read it and say which device they use.
  const CliResult cmp = run_cli("compare " + out.string() + " " + out.string());
  EXPECT_EQ(cmp.rc, 0) << cmp.output;
  EXPECT_NE(cmp.output.find("comparing its top-level device (section 0"), std::string::npos)
      << cmp.output;
  const CliResult cmp1 = run_cli("compare " + out.string() + " " + out.string() + " --section 1");
  EXPECT_EQ(cmp1.rc, 0) << cmp1.output;
  const CliResult bad = run_cli("compare " + out.string() + " " + out.string() + " --section 5");
  EXPECT_EQ(bad.rc, 2) << bad.output;
}

TEST(RunSeveral, TurnWarmupCanBeTurnedOff) {
  TempDir dir;
  const auto out = dir.path / "r.json";
  const CliResult r =
      run_cli(std::string(kShortRun) + " --turn-warmup-ms 0 --out " + out.string());
  ASSERT_EQ(r.rc, 0) << r.output;
  const auto j = nlohmann::json::parse(slurp(out));
  for (const auto& sec : j["devices_run"]["sections"]) {
    EXPECT_EQ(sec["result"]["settings"]["turn_warmup_ns"], 0);
    for (const auto& b : sec["result"]["block_order"]) EXPECT_EQ(b["turn_warmup_frames"], 0);
  }
  const CliResult bad = run_cli(std::string(kShortRun) + " --turn-warmup-ms -1 --out ''");
  EXPECT_EQ(bad.rc, 2) << bad.output;
}

TEST(RunSeveral, AFaultOnOneDeviceKeepsTheOthersResults) {
  TempDir dir;
  const auto out = dir.path / "r.json";
  // The simulated fault comes at a frame id counted without turn warm-ups.
  const CliResult r = run_cli(std::string(kShortRun) +
                              " --sim-fail-device 1 --turn-warmup-ms 0 --out " + out.string());
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_NE(r.output.find("device section 1"), std::string::npos) << r.output;
  const auto j = nlohmann::json::parse(slurp(out));
  const auto& secs = j["devices_run"]["sections"];
  EXPECT_EQ(secs[0]["status"], "ok");
  EXPECT_EQ(secs[0]["result"]["modes"]["baseline"]["total"]["frames"], 40);
  EXPECT_EQ(secs[0]["result"]["modes"]["loaded"]["total"]["frames"], 40);
  EXPECT_EQ(secs[1]["status"], "partial");
  EXPECT_NE(secs[1]["failure"].get<std::string>().find("simulated submit failure"),
            std::string::npos)
      << secs[1].dump();
  EXPECT_TRUE(secs[1]["result"]["partial"].get<bool>());
  EXPECT_FALSE(j["partial"].get<bool>());  // the top level is device 0's
}

TEST(RunSeveral, UnsupportedOptionsAndBadListsAreBadInput) {
  for (const char* extra : {" --mode all", " --frames-csv /tmp/x.csv", " --device 1,1"}) {
    const CliResult r = run_cli(std::string(kShortRun) + extra + " --out ''");
    EXPECT_EQ(r.rc, 2) << extra << ": " << r.output;
  }
}

TEST(RunSeveral, VulkanDeviceAllWithValidation) {
  TempDir dir;
  const auto out = dir.path / "r.json";
  const CliResult r = run_cli(
      "run --backend vulkan --device all --validation --mode baseline --frames 40 --blocks 2 "
      "--warmup 5 --interval-ms 2-3 --out " +
      out.string());
  if (r.rc == 3) GTEST_SKIP() << "no Vulkan device: " << r.output;
  ASSERT_EQ(r.rc, 0) << r.output;
  const auto j = nlohmann::json::parse(slurp(out));
  const auto& secs = j["devices_run"]["sections"];
  ASSERT_GE(secs.size(), 1u);
  for (const auto& s : secs) {
    EXPECT_EQ(s["status"], "ok") << s["failure"];
    EXPECT_EQ(s["result"]["diagnostics"]["validation"]["errors"], 0)
        << s["result"]["diagnostics"]["validation"].dump();
    EXPECT_EQ(s["result"]["modes"]["baseline"]["total"]["frames"], 40);
    EXPECT_TRUE(s["physical_device"].is_number_integer()) << s.dump();
  }
  EXPECT_EQ(j["device"]["name"], secs[0]["result"]["device"]["name"]);
}

// The cross-check of two devices' clock models: needs two Vulkan devices.
TEST(ClocksSeveral, VulkanCrossCheckOfTwoDevices) {
  const CliSplitResult r = run_cli_split(
      "clocks --backend vulkan --device all --seconds 1 --interval-ms 50 --fresh 4 --json "
      "--cross-check --cross-trials 50");
  if (r.rc == 3) GTEST_SKIP() << "no Vulkan device: " << r.err;
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  if (j["per_device"].size() < 2) {
    ASSERT_TRUE(j["cross_check"].contains("skipped"));
    GTEST_SKIP() << "fewer than two Vulkan devices: " << j["cross_check"]["skipped"];
  }
  EXPECT_TRUE(j["cross_check"]["error"].is_null()) << j["cross_check"].dump();
  EXPECT_TRUE(j["cross_check"]["agree"].get<bool>()) << j["cross_check"]["verdict"];
}

}  // namespace
}  // namespace latlab
