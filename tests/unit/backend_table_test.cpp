// The backend table (latlab/bench/backend.hpp): names parse once, both ways,
// and an unknown name or a backend missing from the build says what exists.
#include <gtest/gtest.h>

#include <string>

#include "latlab/bench/backend.hpp"
#include "latlab/bench/device_factory.hpp"

namespace latlab {
namespace {

TEST(BackendTable, EveryRowParsesBackToItself) {
  ASSERT_EQ(backends().size(), 4u);
  for (const BackendInfo& b : backends()) {
    auto parsed = parse_backend(b.name);
    ASSERT_TRUE(parsed) << b.name;
    EXPECT_EQ(*parsed, b.id);
    EXPECT_EQ(backend_name(b.id), b.name);
    EXPECT_EQ(b.built, b.not_built.empty()) << b.name;
  }
  auto gl = parse_backend("opengl");
  ASSERT_TRUE(gl);
  EXPECT_EQ(*gl, Backend::gl);
}

TEST(BackendTable, UnknownNameListsTheBackendsBuilt) {
  auto r = parse_backend("metal");
  ASSERT_FALSE(r);
  const std::string& m = r.error().message;
  EXPECT_NE(m.find("'metal'"), std::string::npos) << m;
  EXPECT_NE(m.find(built_backend_names()), std::string::npos) << m;
  for (const BackendInfo& b : backends()) {
    EXPECT_EQ(built_backend_names().find(b.name) != std::string::npos, b.built) << b.name;
  }
  EXPECT_FALSE(parse_backend(""));
  EXPECT_FALSE(parse_backend("Vulkan"));  // spelled as the table spells it
}

TEST(BackendTable, OpeningABackendNotBuiltSaysWhy) {
  for (const BackendInfo& b : backends()) {
    if (b.built) continue;
    auto dev = open_latency_device(DeviceSelector{.backend = b.id, .device = ""});
    ASSERT_FALSE(dev) << b.name;
    EXPECT_EQ(dev.error().message, b.not_built);
  }
}

TEST(SimDevices, ListDevicesDifferByIndexAndRunFrames) {
  auto a = open_sim_list_device(0, true);
  auto b = open_sim_list_device(1, false);
  EXPECT_NE(a->info().name, b->info().name);
  EXPECT_TRUE(a->info().can_time);
  EXPECT_TRUE(b->info().can_time);
  EXPECT_EQ(a->info().backend, "sim");
}

TEST(SimDevices, RunDeviceMatchesIndexZeroOrItsName) {
  auto time = std::make_shared<RealHostTime>();
  EXPECT_TRUE(open_sim_run_device("", time));
  EXPECT_TRUE(open_sim_run_device("0", time));
  auto none = open_sim_run_device("1", time);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("devices: 0:"), std::string::npos) << none.error().message;
}

}  // namespace
}  // namespace latlab
