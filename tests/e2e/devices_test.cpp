// latlab devices lists every backend's devices, or says why a backend has none.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "e2e/cli_run_helpers.hpp"

namespace latlab::e2e {
namespace {

TEST(DevicesCli, JsonListsCudaDevicesOrWhyThereAreNone) {
  const CliResult r = run_cli("devices --json");
  ASSERT_EQ(r.rc, 0) << r.output;
  const auto doc = nlohmann::json::parse(r.output);
  ASSERT_TRUE(doc.contains("devices"));
  bool has_cuda = false;
  for (const auto& d : doc["devices"]) has_cuda = has_cuda || d["backend"] == "cuda";
  if (has_cuda) {
    EXPECT_FALSE(doc.contains("cuda_unavailable"));
  } else {
    ASSERT_TRUE(doc.contains("cuda_unavailable")) << r.output;
    EXPECT_FALSE(doc["cuda_unavailable"].get<std::string>().empty());
  }
}

}  // namespace
}  // namespace latlab::e2e
